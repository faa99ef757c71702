"""The deliverer: one background task per server process that fans new events out to their
endpoints, sends due deliveries and records every attempt.

Several processes may run one each (PostgreSQL): a delivery is claimed under a lease
(storage.webhooks.claim_due), renewed while its round runs, so each is sent by one of them at a
time. Delivery is at-least-once: a process killed between sending and recording leaves its
claims to lapse, and they go out again with the same `webhook-id` for the receiver to
deduplicate. An endpoint's events of one link go one after another, in order (claim_due takes
only the head of each link's queue and those right after it; a round stops a queue at its first
failure).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import msgspec

from shortlink.fetcher.addresses import NO_OWN_SERVICE, AddressPolicy, OwnService, Resolver, system_resolver
from shortlink.storage import Database, Row
from shortlink.times import to_iso
from shortlink.webhooks import outbox, send
from shortlink.webhooks.connections import Connections
from shortlink.webhooks.events import EventBody
from shortlink.webhooks.secrets import signature_header

log = logging.getLogger("shortlink.webhooks")

POLL_SECONDS = 1.0
EXPIRY_SWEEP_SECONDS = 5.0
RETENTION_SWEEP_SECONDS = 3600.0
RETENTION_CHUNK = 5000
# Deliveries claimed per round, and at most PER_LINK of an endpoint's deliveries of one link
# (storage.webhooks.claim_due): those are sent one after another in the order of their events,
# other links' side by side, up to CONCURRENCY requests at once to one endpoint and
# TOTAL_CONCURRENCY in all. No request of a round starts after ROUND_SECONDS: the rest go back
# unsent. A claim lasts LEASE_SECONDS and is renewed every RENEW_SECONDS until its round ends,
# so the deliveries a killed process held go out again within LEASE_SECONDS, while a live one
# keeps its claims through a round however long its sends take.
CLAIM_BATCH = 2000
PER_LINK = 500
CONCURRENCY = 16
TOTAL_CONCURRENCY = 64
ROUND_SECONDS = 15.0
LEASE_SECONDS = 10.0
RENEW_SECONDS = 2.0


async def no_own_service() -> OwnService:
    return NO_OWN_SERVICE


class Deliverer:
    def __init__(
        self,
        db: Database,
        *,
        webhook_key: bytes,
        base_for: Callable[[int], str],
        policy: AddressPolicy,
        own: Callable[[], Awaitable[OwnService]] = no_own_service,
        clock: Callable[[], float] = time.time,
        resolve: Resolver = system_resolver,
        timeout: float = send.TIMEOUT_SECONDS,
        poll_seconds: float = POLL_SECONDS,
        renew_seconds: float = RENEW_SECONDS,
        on_disabled: Callable[[], None] = lambda: None,
        on_round: Callable[[], Awaitable[None]] | None = None,
        wake: asyncio.Event | None = None,
    ):
        """`webhook_key`: the key of endpoint secrets (secrets.webhook_key); `base_for(account)`:
        the short URL base of its links; `clock`: seconds since the epoch (a test's clock goes
        days ahead); `on_disabled()`: after an endpoint was disabled (the subscriber sets change);
        `on_round()`: before every round (the subscriber set is refreshed so, for changes made by
        the CLI or another process); `wake`: set by whoever wrote events (or `notify`), for a
        round now rather than at the next poll."""
        self.db, self.webhook_key, self.base_for, self.policy, self.own = db, webhook_key, base_for, policy, own
        self.clock, self.resolve, self.timeout, self.poll_seconds = clock, resolve, timeout, poll_seconds
        self.lease_ms, self.renew_seconds = int(LEASE_SECONDS * 1000), renew_seconds
        self.on_disabled, self.on_round = on_disabled, on_round
        self.sent = 0
        self._wake = wake if wake is not None else asyncio.Event()
        self._task: asyncio.Task | None = None
        self._connections: Connections | None = None
        self._next_expiry_sweep = 0.0
        self._next_retention_sweep = 0.0

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    @property
    def connections_opened(self) -> int:
        return 0 if self._connections is None else self._connections.opened

    def notify(self) -> None:
        """New events or due deliveries: look now rather than at the next poll."""
        self._wake.set()

    async def start(self) -> None:
        self._connections = Connections(policy=self.policy, resolve=self.resolve, max_idle_per_target=CONCURRENCY)
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._connections is not None:
            await self._connections.aclose()
            self._connections = None

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
        now_s = self.clock()
        if now_s >= self._next_expiry_sweep:
            self._next_expiry_sweep = now_s + EXPIRY_SWEEP_SECONDS
            await self.db.write(outbox.emit_expired, datetime.fromtimestamp(now_s, UTC), self.base_for)
        if now_s >= self._next_retention_sweep:
            self._next_retention_sweep = now_s + RETENTION_SWEEP_SECONDS
            while await self.db.write(outbox.forget_old, self.now_ms(), RETENTION_CHUNK) >= RETENTION_CHUNK:
                pass
        handled = await self.db.write(outbox.dispatch, self.now_ms(), self.base_for)
        due = await self.db.write(outbox.claim, self.now_ms(), self.lease_ms, CLAIM_BATCH, PER_LINK)
        if due:
            # The next events are fanned out (in the database's thread) while these are sent.
            dispatching = asyncio.create_task(self.db.write(outbox.dispatch, self.now_ms(), self.base_for))
            try:
                await self._send_all(due)
            finally:
                handled += await dispatching
        return handled + len(due)

    async def _send_all(self, due: list[Row]) -> None:
        """Each endpoint's deliveries of one link one after another, in the order of their events,
        stopping at the first failure (the rest wait for its retry); different links' side by
        side. The attempts of the round recorded together, in one write."""
        queues: dict[tuple[int, int], list[Row]] = defaultdict(list)
        for row in due:
            link = row["link_id"] if row["link_id"] is not None else -row["delivery_id"]
            queues[row["endpoint_id"], link].append(row)
        total = asyncio.Semaphore(TOTAL_CONCURRENCY)
        per_endpoint: dict[int, asyncio.Semaphore] = defaultdict(lambda: asyncio.Semaphore(CONCURRENCY))
        own = await self.own()
        signing = _Signing(self.webhook_key)
        settled: list[tuple[Row, send.DeliveryResult, int]] = []
        released: list[int] = []
        stop_at = time.monotonic() + ROUND_SECONDS

        async def in_order(rows: list[Row]) -> None:
            slots = per_endpoint[rows[0]["endpoint_id"]]
            for index, row in enumerate(rows):
                if time.monotonic() > stop_at:
                    released.extend(later["delivery_id"] for later in rows[index:])
                    return
                async with slots, total:
                    outcome = await self._deliver(row, own, signing)
                settled.append((row, outcome, self.now_ms()))
                if not outcome.ok:
                    released.extend(later["delivery_id"] for later in rows[index + 1 :])
                    return

        renewing = asyncio.create_task(self._keep_claimed([row["delivery_id"] for row in due]))
        try:
            await asyncio.gather(*(in_order(rows) for rows in queues.values()))
        finally:
            renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewing
        # After the last renewal: the database's writes run one after another, in order.
        if await self.db.write(outbox.settle_all, settled, released):
            self.on_disabled()

    async def _keep_claimed(self, delivery_ids: list[int]) -> None:
        while True:
            await asyncio.sleep(self.renew_seconds)
            try:
                await self.db.write(outbox.renew, delivery_ids, self.now_ms() + self.lease_ms)
            except Exception:  # a busy or failing database must not end the round: next renewal
                log.exception("could not renew the round's webhook claims")

    async def _deliver(self, due: Row, own: OwnService, signing: _Signing) -> send.DeliveryResult:
        assert self._connections is not None, "start() first"
        now_ms = self.now_ms()
        created = to_iso(datetime.fromtimestamp(due["created_ms"] / 1000, UTC))
        body = msgspec.json.encode(EventBody(due["type"], created, msgspec.Raw(due["data"]))).decode()
        headers = {
            "webhook-id": due["event_public_id"],
            "webhook-timestamp": str(now_ms // 1000),
            "webhook-signature": signature_header(
                signing.secrets(due, now_ms), due["event_public_id"], datetime.fromtimestamp(now_ms / 1000, UTC), body
            ),
        }
        outcome = await send.post(self._connections, due["url"], headers, body.encode(), own=own, timeout=self.timeout)
        self.sent += 1
        return outcome


class _Signing:
    """An endpoint's secrets, derived once per round rather than once per delivery."""

    def __init__(self, key: bytes):
        self.key = key
        self._secrets: dict[tuple[int, str, str | None], list[str]] = {}

    def secrets(self, due: Row, now_ms: int) -> list[str]:
        # The overlap of a rotation may end during the round: its end is part of the key.
        overlap = bool(due["previous_nonce"]) and (due["previous_until_ms"] or 0) > now_ms
        key = (due["endpoint_id"], due["secret_nonce"], due["previous_nonce"] if overlap else None)
        if key not in self._secrets:
            self._secrets[key] = outbox.secrets_of(due, self.key, now_ms)
        return self._secrets[key]
