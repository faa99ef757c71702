"""Counts kept in memory and written every second (bio page views, app-link outcomes)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable


class EverySecondWriter:
    """Calls `flush` every `seconds` in a task of its own, and once more at `stop`. A failed
    round is logged and retried on the next one; a failure at `stop` is logged, not raised:
    the click recorder's shutdown must still run after it."""

    def __init__(self, flush: Callable[[], Awaitable[object]], what: str, log: logging.Logger, seconds: float = 1.0):
        self.flush, self.what, self.log, self.seconds = flush, what, log, seconds
        self._task: asyncio.Task | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        try:
            await self.flush()
        except Exception:
            self.log.exception("could not write %s at shutdown", self.what)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.seconds)
            try:
                await self.flush()
            except Exception:  # retried on the next round
                self.log.exception("could not write %s", self.what)
