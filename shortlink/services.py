"""The running parts of one server process, started and stopped together."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

from shortlink.config import Config
from shortlink.fetcher.worker import TitleFetcher
from shortlink.links.platforms import host_name
from shortlink.network import client_ip, peer_is_trusted
from shortlink.ratelimit import TokenBucketLimiter
from shortlink.storage import Database, connect
from shortlink.storage import accounts as account_store
from shortlink.storage import links as link_store
from shortlink.visits.cache import LinkCache, VisitTarget, target_from_row
from shortlink.visits.recorder import ClickRecorder

log = logging.getLogger("shortlink")

EXTERNAL_CHANGES_POLL_SECONDS = 1.0
WAL_CHECKPOINT_SECONDS = 1.0


class Services:
    def __init__(self, config: Config):
        # Open the file once now: a bad [storage] path then stops `shortlink serve` with
        # one line before the ASGI server starts (a failing lifespan is a traceback).
        connect(config.storage.path).close()
        self.config = config
        self.api_limiter = TokenBucketLimiter(config.limits.requests_per_minute)
        self.password_limiter = TokenBucketLimiter(config.limits.password_attempts_per_minute)
        self.link_cache = LinkCache()
        self.trusted_networks = config.trusted_networks
        self.short_scheme = urlsplit(config.short_host).scheme
        # "host[:port]" as configured: the short host and [links] domains.
        self.configured_hosts = {urlsplit(config.short_host).netloc, *config.links.domains}
        self._configured_names = {host_name(host) for host in self.configured_hosts}
        self.domains: dict[str, int] = {}  # connected custom domain → account id
        self.cookie_secret = b""
        self.db: Database
        self.recorder: ClickRecorder
        self.fetcher: TitleFetcher
        self._data_version = 0
        self._tasks: list[asyncio.Task] = []

    async def start(self) -> None:
        self.db = Database(self.config.storage.path)
        self._data_version = await self.db.run(account_store.data_version)
        secret = await self.db.run(account_store.setting, "cookie_secret", lambda: secrets.token_hex(32))
        self.cookie_secret = bytes.fromhex(secret)
        self.domains = await self.db.run(account_store.all_domains)
        self.recorder = ClickRecorder(self.db, self.config.clicks)
        await self.recorder.start()
        self.fetcher = TitleFetcher(
            self.db,
            self.config.fetcher,
            on_saved=self.links_changed,
            own_hosts=lambda: {*self.configured_hosts, *self.domains},
        )
        await self.fetcher.start()
        self._tasks.append(asyncio.create_task(self._watch_external_changes()))
        self.db.take_over_checkpoints()
        self._tasks.append(asyncio.create_task(self._checkpoint_wal()))

    async def stop(self) -> None:
        """Stop taking work, let background work finish, close the file."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.fetcher.stop()
        await self.recorder.stop()  # drains every queued click
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
                if version != self._data_version:
                    self._data_version = version
                    self.link_cache.clear()
                    self.domains = await self.db.run(account_store.all_domains)
            except Exception:  # a locked or failing database must not end the watcher
                log.exception("could not check the database for outside changes")

    async def _checkpoint_wal(self) -> None:
        while True:
            await asyncio.sleep(WAL_CHECKPOINT_SECONDS)
            try:
                await self.db.checkpoint()
            except Exception:  # a failed checkpoint is retried on the next round
                log.exception("WAL checkpoint failed")

    def links_changed(self, short_code: str) -> None:
        """A link was created, changed or deleted in this process."""
        self.link_cache.discard(short_code)

    async def load_target(self, code: str) -> VisitTarget | None:
        """Read a link for the visitor path and cache it (absent codes too)."""
        row = await self.db.run(link_store.link_by_code, code)
        target = None if row is None else target_from_row(row)
        self.link_cache.put(code, target)
        return target

    def serves_on(self, target: VisitTarget, host: str) -> bool:
        if not self.domains:  # the usual case: no custom domain, nothing to normalise
            return True
        # host_name: "links.brand.com." is the same custom domain, not a way around it.
        owner = self.domains.get(host_name(host))
        return owner is None or owner == target.account_id

    def base_for_host(self, host: str) -> str:
        """Short URLs shown to a visitor stay on the host they came through, when it is ours."""
        name = host_name(host)
        if name in self._configured_names or name in self.domains:
            return f"{self.short_scheme}://{host}"
        return self.config.short_host

    def visitor_address(self, scope, forwarded_for: str | None) -> tuple[str, bool]:
        """(client IP, whether the direct peer is a trusted proxy)."""
        peer = scope["client"][0] if scope.get("client") else ""
        trusted = peer_is_trusted(peer, self.trusted_networks)
        return client_ip(peer, forwarded_for if trusted else None, self.trusted_networks), trusted
