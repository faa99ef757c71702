"""The health of one process (GET /healthz): the database answers and the click writer keeps up."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from shortlink.storage import Database
from shortlink.storage import accounts as account_store
from shortlink.visits.recorder import ClickRecorder

HEALTH_TIMEOUT_SECONDS = 2.0
# The writer stores the queue every flush interval. Clicks waiting this many intervals
# (10 s at the default 100 ms) without a successful write mean it is stuck.
CLICK_WRITER_STUCK_FLUSHES = 100


def click_writer_problem(pending: int, last_flush_at: float, now_mono: float, stuck_after: float) -> str | None:
    if pending and now_mono - last_flush_at > stuck_after:
        return f"click writer: {pending} clicks waiting, last flush {now_mono - last_flush_at:.1f} s ago"
    return None


async def check(db: Database, recorder: ClickRecorder, flush_interval_ms: int) -> tuple[bool, dict[str, Any]]:
    """Whether the process is healthy, and the report to show."""
    # The writer first: it needs no database, and a write stuck on a lock holds the
    # database thread, so the ping below would only time out behind it.
    stuck_after = CLICK_WRITER_STUCK_FLUSHES * flush_interval_ms / 1000
    problem = click_writer_problem(recorder.pending, recorder.last_flush_at, time.monotonic(), stuck_after)
    if problem:
        return False, {"status": "unhealthy", "reason": problem}
    try:
        await asyncio.wait_for(db.write(account_store.ping), HEALTH_TIMEOUT_SECONDS)
    except Exception as exc:
        return False, {"status": "unhealthy", "reason": f"database: {type(exc).__name__}"}
    return True, {
        "status": "ok",
        "process": os.getpid(),  # which server process answered (with --workers, or behind a balancer)
        "clicksPending": recorder.pending,
        "clicksWritten": recorder.written,
        "clicksDropped": recorder.dropped,
    }
