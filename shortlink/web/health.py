"""GET /healthz: 200 while the database answers."""
from __future__ import annotations

import asyncio

from litestar.di import NamedDependency
from litestar import get
from litestar.response import Response

from shortlink.services import Services
from shortlink.storage import accounts as account_store

HEALTH_TIMEOUT_SECONDS = 2.0


@get("/healthz", include_in_schema=False)
async def healthz(services: NamedDependency[Services]) -> Response:
    try:
        await asyncio.wait_for(services.db.run(account_store.ping), HEALTH_TIMEOUT_SECONDS)
    except Exception as exc:  # noqa: BLE001 - any failure means unhealthy
        return Response({"status": "unhealthy", "reason": f"database: {type(exc).__name__}"},
                        status_code=503)
    return Response({"status": "ok"})
