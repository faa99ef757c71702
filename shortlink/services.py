"""The running parts of one server process, started and stopped together."""
from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from shortlink.config import Config
from shortlink.ratelimit import TokenBucketLimiter
from shortlink.storage import Database
from shortlink.storage import accounts as account_store

log = logging.getLogger("shortlink")

EXTERNAL_CHANGES_POLL_SECONDS = 1.0


class Services:
    def __init__(self, config: Config):
        self.config = config
        self.api_limiter = TokenBucketLimiter(config.limits.requests_per_minute)
        self.db: Database
        self._tasks: list[asyncio.Task] = []

    async def start(self) -> None:
        self.db = Database(self.config.storage.path)
        self._data_version = await self.db.run(account_store.data_version)
        self._tasks.append(asyncio.create_task(self._watch_external_changes()))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self.db.close()

    @contextlib.asynccontextmanager
    async def lifespan(self, _app) -> AsyncIterator[None]:
        await self.start()
        try:
            yield
        finally:
            await self.stop()

    async def _watch_external_changes(self) -> None:
        """Other processes (the CLI) write to the same file: drop what we cached from it."""
        while True:
            await asyncio.sleep(EXTERNAL_CHANGES_POLL_SECONDS)
            try:
                version = await self.db.run(account_store.data_version)
            except Exception:  # a stuck or locked database must not kill the watcher
                log.exception("could not read PRAGMA data_version")
                continue
            if version != self._data_version:
                self._data_version = version
                await self.on_external_change()

    async def on_external_change(self) -> None:
        """Another process changed the file: forget every cached link."""

    def links_changed(self, short_code: str) -> None:
        """A link was created, changed or deleted in this process."""
