"""GET /healthz: 200 while the database answers and the click writer keeps up."""
from __future__ import annotations

import asyncio
import time

from litestar import get
from litestar.di import NamedDependency
from litestar.response import Response

from shortlink.services import Services
from shortlink.storage import accounts as account_store

HEALTH_TIMEOUT_SECONDS = 2.0
# Clicks waiting longer than this without a successful flush mean the writer is stuck.
CLICK_WRITER_STUCK_SECONDS = 10.0


def click_writer_problem(pending: int, last_flush_at: float, now: float) -> str | None:
    if pending and now - last_flush_at > CLICK_WRITER_STUCK_SECONDS:
        return f"click writer: {pending} clicks waiting, last flush {now - last_flush_at:.0f} s ago"
    return None


@get("/healthz", include_in_schema=False)
async def healthz(services: NamedDependency[Services]) -> Response:
    try:
        await asyncio.wait_for(services.db.run(account_store.ping), HEALTH_TIMEOUT_SECONDS)
    except Exception as exc:  # noqa: BLE001 - any failure means unhealthy
        return Response({"status": "unhealthy", "reason": f"database: {type(exc).__name__}"},
                        status_code=503)
    recorder = services.recorder
    problem = click_writer_problem(recorder.pending, recorder.last_flush_at, time.monotonic())
    if problem:
        return Response({"status": "unhealthy", "reason": problem}, status_code=503)
    return Response({"status": "ok", "clicksPending": recorder.pending,
                     "clicksDropped": recorder.dropped})
