"""The click writer: an in-memory queue filled by visits, flushed in batches by one task.

`record()` only appends to a deque, so a visit never waits for the database. A
background task writes what is queued every `flush_interval_ms`, or sooner when
`batch_size` clicks are waiting, one transaction per batch: enrichment (user
agent labels, referrer host, country, visitor hash), raw rows, link counters
and rollups together. A failed write keeps its clicks queued for the next try;
`stop()` writes everything still queued.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from itertools import islice

from shortlink.config import ClicksConfig
from shortlink.sharedstate import SharedDayKeys
from shortlink.storage import Database
from shortlink.storage import clicks as click_store
from shortlink.visits import automated, enrich
from shortlink.visits.click import Click
from shortlink.visits.countries import CountryTable, open_table

log = logging.getLogger("shortlink.clicks")

DAY_MS = 86_400_000
# Writes tried at shutdown before giving up (a stop must end even on a broken disk).
STOP_ATTEMPTS = 5
# Clicks enriched between two yields to the event loop, so visits keep flowing during a batch.
ENRICH_CHUNK = 200


def day_of_ms(ts: int) -> str:
    return datetime.fromtimestamp(ts // DAY_MS * 86_400, UTC).strftime("%Y-%m-%d")


class ClickRecorder:
    def __init__(
        self,
        db: Database,
        config: ClicksConfig,
        clock: Callable[[], float] = time.time,
        shared_keys: SharedDayKeys | None = None,
        is_ours: Callable[[str], bool] = lambda _host: False,
        countries: CountryTable | None = None,
        clicks_wanted: Callable[[], bool] = lambda: False,
    ):
        """`shared_keys`: with more than one server process, every process hashes visitors
        with the same day key (through Redis), so unique visitors stay exact. `is_ours`
        tells the service's own hosts (a referrer from our bio page keeps its handle).
        `countries`: the [geoip] table, the bundled one by default. `clicks_wanted()`: whether
        some webhook endpoint subscribes to clicks (an in-memory check, once per batch): then a
        batch also writes its `link.clicked` events, in its own transaction."""
        self.db, self.config, self.clock, self.shared_keys = db, config, clock, shared_keys
        self.is_ours, self.clicks_wanted = is_ours, clicks_wanted
        self.countries = countries or open_table()
        self.written = 0
        self.dropped = 0
        self.last_flush_at = time.monotonic()
        self._queue: deque[Click] = deque()
        self._wake = asyncio.Event()
        self._lock = asyncio.Lock()
        self._task: asyncio.Task | None = None
        self._overflow_logged = False
        self._days: dict[int, str] = {}
        # The visitor-hash key of each day that can still receive clicks: in memory only
        # (and in Redis's memory when shared), never written to the database file, and
        # dropped when its day is over (_forget_finished_days).
        self._day_keys: dict[str, bytes] = {}

    @property
    def pending(self) -> int:
        return len(self._queue)

    def record(self, click: Click) -> None:
        """Queue a click; O(1), never blocks. A full queue drops the click and counts it."""
        if len(self._queue) >= self.config.queue_size:
            self.dropped += 1
            if not self._overflow_logged:
                self._overflow_logged = True
                log.warning("click queue full (%d): dropping clicks", self.config.queue_size)
            return
        self._queue.append(click)
        if len(self._queue) >= self.config.batch_size:
            self._wake.set()

    async def start(self) -> None:
        # The visitor classifier's rules too: compiled now, not during the first visit.
        await asyncio.to_thread(automated.warm_up)
        await asyncio.to_thread(enrich.warm_up)
        self.last_flush_at = time.monotonic()
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        """End the writer task, then write everything still queued."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        for attempt in range(1, STOP_ATTEMPTS + 1):
            try:
                await self.flush()
                return
            except self.db.errors:
                log.exception(
                    "could not write %d queued clicks (attempt %d of %d)", len(self._queue), attempt, STOP_ATTEMPTS
                )
                await asyncio.sleep(self.config.flush_interval_ms / 1000)
        log.error("stopping with %d clicks unwritten", len(self._queue))

    async def flush(self) -> int:
        """Write every queued click, batch by batch; returns how many were taken off the queue.

        Pipelined: while one batch is stored on the database thread (SQLite's C code,
        which runs without the GIL), the next one is enriched on the event loop.
        """
        taken = 0
        size = self.config.batch_size
        async with self._lock:
            prepared: list[click_store.StoredClick] | None = None
            while self._queue:
                # A batch is exactly the clicks that were labelled for it (more may have
                # arrived since); they are the first len(batch) of the queue.
                batch = prepared or await self._enrich(list(islice(self._queue, size)))
                storing = asyncio.ensure_future(self._store(batch))
                following = list(islice(self._queue, len(batch), len(batch) + size))
                prepared = await self._enrich(following) if following else None
                await storing  # on failure the batch stays queued and `prepared` is dropped
                # Only the writer removes from the left, so these are exactly the batch.
                for _ in range(len(batch)):
                    self._queue.popleft()
                self._forget_finished_days()
                taken += len(batch)
                self.last_flush_at = time.monotonic()
                self._overflow_logged = False
        return taken

    async def _run(self) -> None:
        interval = self.config.flush_interval_ms / 1000
        while True:
            # asyncio.timeout, not wait_for: on Python 3.11, wait_for swallows a cancel that
            # arrives as the event is set, and stop() then waited for this task forever.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(interval):
                    await self._wake.wait()
            self._wake.clear()
            if not self._queue:
                self.last_flush_at = time.monotonic()  # idle is healthy
                self._forget_finished_days()
                continue
            try:
                # Shielded: a write already on the database thread completes even if
                # stop() cancels this task, so its clicks leave the queue exactly once.
                await asyncio.shield(self.flush())
            except asyncio.CancelledError:
                raise
            except Exception:  # the clicks stay queued; try again next tick
                log.exception("could not write %d queued clicks; will retry", len(self._queue))

    async def _enrich(self, batch: list[Click]) -> list[click_store.StoredClick]:
        """Labels and visitor hashes, on the event loop in chunks so visits keep flowing."""
        if self.shared_keys is not None:
            await self._share_day_keys({click.ts // DAY_MS for click in batch})
        stored: list[click_store.StoredClick] = []
        for start in range(0, len(batch), ENRICH_CHUNK):
            if start:
                await asyncio.sleep(0)
            stored += [self._stored(click) for click in batch[start : start + ENRICH_CHUNK]]
        return stored

    async def _store(self, batch: list[click_store.StoredClick]) -> None:
        with_events = self.clicks_wanted()
        while missing := await self.db.write(click_store.write_batch, click_store.encode_batch(batch), with_events):
            # Links deleted meanwhile: their history is gone anyway.
            batch = [click for click in batch if click.link_id not in missing]
        self.written += len(batch)

    def _stored(self, click: Click) -> click_store.StoredClick:
        day = self._day(click.ts)
        device, browser, os_family = enrich.user_agent_labels(click.user_agent)
        return click_store.StoredClick(
            click.link_pk,
            click.account_id,
            click.ts,
            day,
            device,
            browser,
            os_family,
            enrich.country_of(click.ip, click.country_hint, self.countries),
            enrich.referrer_host(click.referrer, self.is_ours),
            enrich.campaign_label(click.campaign),
            click.user_agent,
            enrich.visitor_hash(self._day_key(day), click.ip, click.user_agent),
            int(click.is_bot),
            click.rule,
            click.variant,
        )

    async def _share_day_keys(self, day_numbers: set[int]) -> None:
        """Fetch (or offer) the shared key of each day this process has no key for yet."""
        assert self.shared_keys is not None
        for number in day_numbers:
            day = self._day(number * DAY_MS)
            if day not in self._day_keys:
                offered = secrets.token_bytes(32)
                self._day_keys[day] = await self.shared_keys.key(day, number * DAY_MS, offered)

    def _day_key(self, day: str) -> bytes:
        key = self._day_keys.get(day)
        if key is None:
            key = self._day_keys[day] = secrets.token_bytes(32)
        return key

    def _forget_finished_days(self) -> None:
        """Drop the key of every day that can receive no more clicks: clicks are stamped
        when they arrive, so once the clock is past a day and no click of it is still
        queued, no hash of that day is needed again, and without the key none can be
        recomputed from a guessed IP."""
        open_from = int(self.clock() * 1000)
        if self._queue:
            open_from = min(open_from, self._queue[0].ts)
        first_open_day = day_of_ms(open_from)
        for day in [day for day in self._day_keys if day < first_open_day]:
            del self._day_keys[day]

    def _day(self, ts: int) -> str:
        number = ts // DAY_MS
        day = self._days.get(number)
        if day is None:
            day = self._days[number] = day_of_ms(ts)
        return day
