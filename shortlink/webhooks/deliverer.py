"""The deliverer: one background task per server process that fans new events out to their
endpoints, sends due deliveries and records every attempt.

Several processes may run one each (PostgreSQL): a delivery is claimed under a lease
(storage.webhooks.claim_due), so each is sent by one of them at a time. Delivery is
at-least-once: a process killed between sending and recording sends that delivery again
once its lease is over, with the same `webhook-id` for the receiver to deduplicate.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import httpx
import msgspec

from shortlink.fetcher.ssrf import AddressPolicy, OwnService, Resolver, system_resolver, tls_context
from shortlink.storage import Database, Row
from shortlink.times import to_iso
from shortlink.webhooks import outbox, send
from shortlink.webhooks.events import CLICKED, EventBody
from shortlink.webhooks.secrets import signature_header

log = logging.getLogger("shortlink.webhooks")

POLL_SECONDS = 1.0
EXPIRY_SWEEP_SECONDS = 5.0
RETENTION_SWEEP_SECONDS = 3600.0
RETENTION_CHUNK = 5000
# Deliveries claimed per round: up to PER_LINK of an endpoint's change events of one link, sent
# one after another in the order of their events; clicks, other links' and other endpoints'
# side by side, up to
# CONCURRENCY at once. A claim's lease covers the longest a round can take at the timeout per
# delivery, so a delivery left by a killed process goes out again within about a minute.
CLAIM_BATCH = 128
CONCURRENCY = 32
PER_LINK = 2
LEASE_MARGIN_SECONDS = 10.0


async def no_own_service() -> OwnService:
    return OwnService()


class Deliverer:
    def __init__(
        self,
        db: Database,
        *,
        key: Callable[[], bytes],
        base_for: Callable[[int], str],
        policy: AddressPolicy,
        own: Callable[[], Awaitable[OwnService]] = no_own_service,
        clock: Callable[[], float] = time.time,
        resolve: Resolver = system_resolver,
        timeout: float = send.TIMEOUT_SECONDS,
        lease_seconds: float | None = None,
        poll_seconds: float = POLL_SECONDS,
        on_disabled: Callable[[], None] = lambda: None,
    ):
        """`key()`: the webhook key (secrets.webhook_key); `base_for(account)`: the short URL
        base of its links; `clock`: seconds since the epoch (a test's clock goes days ahead);
        `on_disabled()`: after an endpoint was disabled (the subscriber sets change)."""
        self.db, self.key, self.base_for, self.policy, self.own = db, key, base_for, policy, own
        self.clock, self.resolve, self.timeout, self.poll_seconds = clock, resolve, timeout, poll_seconds
        rounds = CLAIM_BATCH // CONCURRENCY + PER_LINK
        self.lease_ms = int((lease_seconds or rounds * timeout + LEASE_MARGIN_SECONDS) * 1000)
        self.on_disabled = on_disabled
        # Run before every round (the subscriber set is refreshed so, for changes made by
        # the CLI or another process).
        self.on_round: Callable[[], Awaitable[None]] | None = None
        self.sent = 0
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._client: httpx.AsyncClient | None = None
        self._next_expiry_sweep = 0.0
        self._next_retention_sweep = 0.0

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    def notify(self) -> None:
        """New events or due deliveries: look now rather than at the next poll."""
        self._wake.set()

    async def start(self) -> None:
        # httpx logs every request at INFO: thousands a second of click events. Every attempt
        # is in the delivery log (webhook_attempts) instead.
        logging.getLogger("httpx").setLevel(logging.WARNING)
        self._client = httpx.AsyncClient(
            follow_redirects=False,
            trust_env=False,
            verify=tls_context(),
            timeout=self.timeout,
            limits=httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY),
        )
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.poll_seconds):  # see ClickRecorder._run
                    await self._wake.wait()
            self._wake.clear()
            try:
                if self.on_round is not None:
                    await self.on_round()
                while await self.run_once():
                    pass
            except Exception:  # a failing database must not end the deliverer: next round
                log.exception("webhook delivery round failed")

    async def run_once(self) -> int:
        """One round: sweeps when due, fan-out of waiting events, one claimed batch sent.
        Returns how many events and deliveries it handled (0: nothing left for now)."""
        now = self.clock()
        if now >= self._next_expiry_sweep:
            self._next_expiry_sweep = now + EXPIRY_SWEEP_SECONDS
            await self.db.write(outbox.emit_expired, datetime.fromtimestamp(now, UTC), self.base_for)
        if now >= self._next_retention_sweep:
            self._next_retention_sweep = now + RETENTION_SWEEP_SECONDS
            while await self.db.write(outbox.forget_old, self.now_ms(), RETENTION_CHUNK) >= RETENTION_CHUNK:
                pass
        handled = await self.db.write(outbox.dispatch, self.now_ms(), self.base_for)
        due = await self.db.write(outbox.claim, self.now_ms(), self.lease_ms, CLAIM_BATCH, PER_LINK)
        if due:
            await self._send_all(due)
        return handled + len(due)

    async def _send_all(self, due: list[Row]) -> None:
        """Each link's change events to an endpoint one after another, in the order of their
        events (clicks side by side); the attempts of the round recorded together, in one write."""
        chains: dict[tuple[int, int], list[Row]] = defaultdict(list)
        for row in due:
            ordered = row["link_id"] is not None and row["type"] != CLICKED
            link = row["link_id"] if ordered else -row["delivery_id"]
            chains[row["endpoint_id"], link].append(row)
        slots = asyncio.Semaphore(CONCURRENCY)
        settled: list[tuple[Row, send.Outcome, int]] = []

        async def in_order(rows: list[Row]) -> None:
            for row in rows:
                async with slots:
                    settled.append((row, await self._deliver(row), self.now_ms()))

        await asyncio.gather(*(in_order(rows) for rows in chains.values()))
        if await self.db.write(outbox.settle_all, settled):
            self.on_disabled()

    async def _deliver(self, due: Row) -> send.Outcome:
        assert self._client is not None, "start() first"
        now_ms = self.now_ms()
        created = to_iso(datetime.fromtimestamp(due["created_ms"] / 1000, UTC))
        body = msgspec.json.encode(EventBody(due["type"], created, msgspec.Raw(due["data"]))).decode()
        secrets = outbox.secrets_of(due, self.key(), now_ms)
        headers = {
            "webhook-id": due["event_public_id"],
            "webhook-timestamp": str(now_ms // 1000),
            "webhook-signature": signature_header(
                secrets, due["event_public_id"], datetime.fromtimestamp(now_ms / 1000, UTC), body
            ),
        }
        outcome = await send.post(
            self._client,
            due["url"],
            headers,
            body.encode(),
            policy=self.policy,
            own=await self.own(),
            resolve=self.resolve,
            timeout=self.timeout,
        )
        self.sent += 1
        return outcome
