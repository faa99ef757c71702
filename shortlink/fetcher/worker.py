"""The background worker that fills new links' titles, descriptions and images.

Pending fetches live in the database (pending_fetches), so a restart resumes
them. A fixed number run at once; each has a total time limit; failures are
retried with exponential backoff up to `max_attempts`, then given up with the
reason logged (the title stays empty).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Collection

import httpx

from shortlink.config import FetcherConfig
from shortlink.fetcher.addresses import FetchError, OwnServiceResolver, Resolver, address_policy, system_resolver
from shortlink.fetcher.page import parse_preview
from shortlink.fetcher.ssrf import fetch_html, tls_context
from shortlink.storage import Database
from shortlink.storage import fetches as store

log = logging.getLogger("shortlink.fetcher")

USER_AGENT = "shortlink-preview/1.0 (+link preview fetcher of a self-hosted shortlink service)"
RETRY_BASE_SECONDS = 30.0  # 30 s, 60 s, 120 s, ... between attempts
IDLE_POLL_SECONDS = 10.0  # also picks up rows written by another process
STOP_GRACE_SECONDS = 1.0
LEASE_MARGIN_SECONDS = 60.0  # a claimed row is handed out again only this long after its timeout
# The service's own hosts are resolved again after this long: DNS changes are picked up
# soon, without a lookup per fetch.
OWN_ADDRESSES_SECONDS = 60.0


def _now_ms() -> int:
    return int(time.time() * 1000)


class TitleFetcher:
    def __init__(
        self,
        db: Database,
        config: FetcherConfig,
        *,
        on_saved: Callable[[str], None] | None = None,
        own_hosts: Callable[[], Collection[str]] = tuple,
        resolver: Resolver = system_resolver,
        retry_base_seconds: float = RETRY_BASE_SECONDS,
    ):
        """`on_saved(short_code)` runs after a link got its preview (to drop cached copies);
        `own_hosts()` gives this service's own hosts ("host[:port]", or a bare host for
        any port), never fetched, nor the addresses they resolve to; asked per fetch,
        since custom domains come and go. `resolver` resolves every host name."""
        self.db, self.config = db, config
        self._on_saved = on_saved
        # The own hosts' addresses are resolved by the fetches' own resolver (an address it
        # gives for our name is one a link's host could resolve to).
        self._own_service = OwnServiceResolver(own_hosts, resolver, ttl=OWN_ADDRESSES_SECONDS)
        self._resolve = resolver
        self._policy = address_policy(config.allow_private_addresses)
        self._retry_base_seconds = retry_base_seconds
        self._wake = asyncio.Event()
        self._in_flight: dict[asyncio.Task, store.DueFetch] = {}
        self._loop_task: asyncio.Task | None = None
        self._client: httpx.AsyncClient | None = None

    async def start(self) -> None:
        """Begin working through pending fetches, those left by an earlier run included."""
        if not self.config.enabled:
            return
        self._client = httpx.AsyncClient(
            follow_redirects=False,  # redirects are followed by fetch_html, each one checked
            trust_env=False,  # a proxy would resolve names itself, past the check
            verify=tls_context(),
            timeout=self.config.timeout_seconds,
            # Connections are made to IP addresses: never reuse one for another host name
            # (and its TLS server name) that happens to share the address.
            limits=httpx.Limits(max_connections=self.config.concurrency, max_keepalive_connections=0),
        )
        self._loop_task = asyncio.create_task(self._run(), name="title-fetcher")

    def notify(self) -> None:
        """A link needing a fetch was just stored: look now instead of at the next poll."""
        self._wake.set()

    async def stop(self) -> None:
        """Give in-flight fetches a short grace period, then cancel them; their rows
        become due again for the next start."""
        if self._loop_task is None:
            return
        self._loop_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._loop_task
        self._loop_task = None
        if self._in_flight:
            await asyncio.wait(list(self._in_flight), timeout=STOP_GRACE_SECONDS)
        interrupted = [due.link_pk for task, due in self._in_flight.items() if not task.done()]
        for task in list(self._in_flight):
            task.cancel()
        await asyncio.gather(*self._in_flight, return_exceptions=True)
        if interrupted:
            await self.db.write(store.release, interrupted, _now_ms())
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def _run(self) -> None:
        lease_ms = int((self.config.timeout_seconds + LEASE_MARGIN_SECONDS) * 1000)
        while True:
            self._wake.clear()
            wait = IDLE_POLL_SECONDS
            free = self.config.concurrency - len(self._in_flight)
            if free > 0:
                try:
                    now_ms = _now_ms()
                    due, next_due = await self.db.write(store.claim_due, now_ms, free, lease_ms)
                except Exception:  # a locked or failing database must not end the worker
                    log.exception("could not read pending title fetches")
                    due, next_due = [], None
                for fetch in due:
                    task = asyncio.create_task(self._fetch(fetch))
                    self._in_flight[task] = fetch
                    task.add_done_callback(self._finished)
                if next_due is not None and len(due) < free:
                    wait = min(wait, max(0.0, (next_due - now_ms) / 1000))
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self._wake.wait()

    def _finished(self, task: asyncio.Task) -> None:
        fetch = self._in_flight.pop(task)
        if not task.cancelled() and task.exception() is not None:
            # Its row stays claimed and is retried once the lease runs out.
            log.error("title fetch for link %s failed to save", fetch.public_id, exc_info=task.exception())
        self._wake.set()  # a slot is free

    async def _fetch(self, fetch: store.DueFetch) -> None:
        try:
            async with asyncio.timeout(self.config.timeout_seconds):
                assert self._client is not None, "fetches run only between start() and stop()"
                page = await fetch_html(
                    self._client,
                    fetch.url,
                    policy=self._policy,
                    user_agent=USER_AGENT,
                    own=await self._own_service(),
                    resolve=self._resolve,
                )
            preview = parse_preview(page.body, page.content_type, page.url)
        except (FetchError, TimeoutError) as exc:
            reason = str(exc) if isinstance(exc, FetchError) else (f"timed out after {self.config.timeout_seconds:g} s")
            await self._failed(fetch, reason, permanent=getattr(exc, "permanent", False))
            return
        except Exception as exc:  # a bug or an odd page must not end the worker or retry forever
            log.exception("title fetch for link %s crashed", fetch.public_id)
            await self._failed(fetch, f"{type(exc).__name__}: {exc}", permanent=True)
            return
        code = await self.db.write(
            store.save_preview, fetch.link_pk, preview.title, preview.description, preview.og_image
        )
        if code is not None and self._on_saved is not None:
            self._on_saved(code)

    async def _failed(self, fetch: store.DueFetch, reason: str, *, permanent: bool) -> None:
        delay = self._retry_base_seconds * 2**fetch.attempts
        retry_at = None if permanent else _now_ms() + int(delay * 1000)
        made = await self.db.write(
            store.record_failure, fetch.link_pk, reason, retry_at_ms=retry_at, max_attempts=self.config.max_attempts
        )
        if made is None:
            return  # the link was deleted meanwhile
        if permanent or made >= self.config.max_attempts:
            log.warning("title fetch for link %s given up after %d attempt(s): %s", fetch.public_id, made, reason)
        else:
            log.info("title fetch for link %s failed, retrying in %.0f s: %s", fetch.public_id, delay, reason)
