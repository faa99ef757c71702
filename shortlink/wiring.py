"""The running parts of one server process, wired together, started and stopped together.

Doors reach the application layer through the attributes `links`, `accounts`,
`analytics`, `visits` and `sessions`; everything else here is wiring and lifespan.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

from shortlink.application.accounts import Accounts
from shortlink.application.analytics import Analytics
from shortlink.application.applinks import Apps
from shortlink.application.bio import Bio, BioCache
from shortlink.application.domains import Domains
from shortlink.application.hosts import Hosts
from shortlink.application.imports import Imports
from shortlink.application.link_rules import ClickCaps, LinkRules, SharedClickCaps
from shortlink.application.links import Links
from shortlink.application.public import PublicShortener
from shortlink.application.sessions import Sessions
from shortlink.application.visits import Visits
from shortlink.application.webhooks import Webhooks
from shortlink.config import Config, ConfigError, PublicConfig
from shortlink.fetcher.addresses import OwnServiceResolver, address_policy, system_resolver
from shortlink.fetcher.worker import TitleFetcher
from shortlink.keyfile import load_signing_key
from shortlink.link_rules.split import DayKeys
from shortlink.links.public import blocked_hosts
from shortlink.ratelimit import ActionLimit, DashboardLimits, Limiter, RedisLimiter, TokenBucketLimiter
from shortlink.sharedstate import SharedDayKeys, open_redis
from shortlink.storage import Connection, Database, connect, open_database
from shortlink.storage import accounts as account_store
from shortlink.storage import clicks as click_store
from shortlink.storage.sqlite import SqliteDatabase
from shortlink.visits.cache import LinkCache
from shortlink.visits.countries import open_table
from shortlink.visits.invalidation import LinkChanges
from shortlink.visits.recorder import ClickRecorder
from shortlink.webhooks.deliverer import Deliverer
from shortlink.webhooks.secrets import webhook_key

if TYPE_CHECKING:  # Redis is imported only when configured (sharedstate)
    from redis.asyncio import Redis

log = logging.getLogger("shortlink")

EXTERNAL_CHANGES_POLL_SECONDS = 1.0
# While another process delivers webhooks: how often this one reads who subscribes to clicks.
SUBSCRIBERS_POLL_SECONDS = 1.0
WAL_CHECKPOINT_SECONDS = 1.0
RAW_RETENTION_SWEEP_SECONDS = 3600.0
# Raw clicks deleted per write: small enough that click batches never wait long behind it.
RAW_RETENTION_CHUNK = 5000


def _nothing() -> None:
    return None


async def forget_raw_clicks(db: Database, retention_days: int, now_s: float) -> int:
    """Delete the raw clicks older than `retention_days`, a chunk per write; returns how many."""
    horizon_ms = int((now_s - retention_days * 86400) * 1000)
    deleted = 0
    while removed := await db.write(click_store.delete_raw_clicks_before, horizon_ms, RAW_RETENTION_CHUNK):
        deleted += removed
    return deleted


def _public_account(conn: Connection, public: PublicConfig) -> int | None:
    """The account that owns public links; None when public shortening is off. A missing
    account stops start-up in one line, as a bad [storage] path does."""
    if not public.enabled:
        return None
    row = account_store.account_by_email(conn, public.account)
    if row is None:
        raise ConfigError(
            f"invalid configuration: [public] account: no account with email {public.account!r} "
            f"(create it with `shortlink key create --email {public.account}`)"
        )
    return row["id"]


class MemoryCaches:
    """The in-memory caches of one process, told of changes by key: a short code (a link
    changed: the link cache and every bio page showing it forget it) or "@" + a handle
    (a bio page changed)."""

    def __init__(self, links: LinkCache, bio: BioCache):
        self.links, self.bio = links, bio

    def discard(self, key: str) -> None:
        if key.startswith("@"):
            self.bio.forget_handle(key[1:])
        else:
            self.links.discard(key)
            self.bio.forget_code(key)

    def clear(self) -> None:
        self.links.clear()
        self.bio.clear()


class Limiters:
    """Token buckets: in this process's memory, or with Redis in Redis, shared by every process
    using it, where a bucket's name is a hash keyed with the signing key (a name may hold a
    visitor's IP address, and every process holds that key)."""

    def __init__(self, redis: Redis | None, signing_key: bytes, actions_per_address: int):
        self.redis, self.signing_key, self.actions_per_address = redis, signing_key, actions_per_address

    def __call__(self, name: str, per_minute: int, period_seconds: float = 60.0) -> Limiter:
        """`per_minute` tokens refilling over `period_seconds` (a minute unless told)."""
        if self.redis is None:
            return TokenBucketLimiter(per_minute, period_seconds=period_seconds)
        return RedisLimiter(self.redis, name, per_minute, self.signing_key, period_seconds)

    def action(self, what: str, per_account: int) -> ActionLimit:
        name = what.replace(" ", "-")
        return ActionLimit(
            what, self(f"{name}-account", per_account), self(f"{name}-address", self.actions_per_address)
        )


class Services:
    """Built in dependency order, every part handed what it needs when it is made. The signing
    key is read before anything that signs is built. Two parts that would need each other meet
    through an object built before both: `events_written` (docs/architecture.md, "Wiring")."""

    def __init__(self, config: Config):
        # Open the file once now: a bad [storage] path then stops `shortlink serve` with
        # one line before the ASGI server starts (a failing lifespan is a traceback).
        with contextlib.closing(connect(config.storage.location)) as conn:
            hosts = Hosts.load(conn, config.short_host, config.links.domains)
            public_account = _public_account(conn, config.public)
            # After the database: a bad [storage] path is reported as that, not as the key file.
            signing_key = load_signing_key(conn, config.storage)
        self.config, self.hosts = config, hosts
        self.db = db = open_database(config.storage.location)
        self.link_cache = LinkCache()
        self.caches = MemoryCaches(self.link_cache, BioCache())
        # With Redis, rate limits and link changes are shared by every process using it.
        self.redis = redis = open_redis(config.redis.url) if config.redis.url else None
        self.link_changes = None if redis is None else LinkChanges(redis, self.caches)
        link_changed = self.caches.discard if self.link_changes is None else self.link_changes.changed
        shared_keys = None if redis is None else SharedDayKeys(redis)
        limits, dashboard = config.limits, config.dashboard
        limiter = Limiters(redis, signing_key, dashboard.actions_per_minute_per_address)
        blocked = blocked_hosts(config.public.blocked_hosts)
        # The counter of changes to what is cached, as last seen (storage.accounts.data_version),
        # and how many times the watcher has looked (tests wait on both).
        self.data_version = 0
        self.outside_checks = 0
        self._tasks: list[asyncio.Task] = []

        # Webhooks first: the click recorder asks them whether clicks are wanted. Whoever
        # writes events sets `events_written`; whoever delivers waits on it: this process's
        # deliverer, or the task that tells the delivering process (deliver_elsewhere).
        self.events_written = asyncio.Event()
        key = webhook_key(signing_key)
        self.webhooks = Webhooks(
            db=db,
            hosts=hosts,
            allow_private=config.fetcher.allow_private_addresses,
            webhook_key=key,
            wake=self.events_written.set,
        )
        self.deliverer = build_deliverer(
            config, db, hosts, key, on_round=self.webhooks.refresh_subscribers, wake=self.events_written
        )
        self._deliver_here = True
        self._tell_delivering: Callable[[], None] = _nothing

        self.recorder = ClickRecorder(
            db,
            config.clicks,
            shared_keys=shared_keys,
            is_ours=hosts.is_ours,
            countries=open_table(config.geoip.path),
            clicks_wanted=self.webhooks.clicks_wanted,
        )
        self.fetcher = TitleFetcher(db, config.fetcher, on_saved=link_changed, own_hosts=hosts.all)
        self.links = Links(
            db=db,
            hosts=hosts,
            daily_limit=limits.links_per_day,
            fetch_titles=config.fetcher.enabled,
            changed=link_changed,
            fetch_wanted=self.fetcher.notify,
            blocked=blocked,
            events_written=self.events_written.set,
        )
        self.bio = Bio(db=db, hosts=hosts, links=self.links, cache=self.caches.bio, changed=link_changed)
        self.accounts = Accounts(
            db=db, api_limiter=limiter("api", limits.requests_per_minute), links_per_day=limits.links_per_day
        )
        self.analytics = Analytics(db=db)
        self.sessions = Sessions(
            db=db,
            per_account=limiter("signin-account", dashboard.signins_per_minute_per_account),
            per_address=limiter("signin-address", dashboard.signins_per_minute_per_address),
            signing_key=signing_key,
            idle_seconds=dashboard.idle_minutes * 60,
            max_seconds=dashboard.max_days * 86400,
        )
        self.apps = Apps(
            db=db,
            hosts=hosts,
            signing_key=signing_key,
            changed=link_changed,
            check_policy=address_policy(config.fetcher.allow_private_addresses),
        )
        self.visits = Visits(
            db=db,
            hosts=hosts,
            cache=self.link_cache,
            recorder=self.recorder,
            password_limiter=limiter("password", limits.password_attempts_per_minute),
            trusted_proxies=config.trusted_networks,
            signing_key=signing_key,
            count_app_outcome=self.apps.count_outcome,
            caps=ClickCaps() if redis is None else SharedClickCaps(redis),
            split_keys=DayKeys(None if shared_keys is None else shared_keys.key),
        )
        self.link_rules = LinkRules(db=db, hosts=hosts, visits=self.visits, changed=link_changed, blocked=blocked)
        self.public = PublicShortener(
            config=config.public,
            account_id=public_account,
            links=self.links,
            hosts=hosts,
            limiter=limiter("public", config.public.links_per_hour, period_seconds=3600),
            address=self.visits.address,
        )
        self.imports = Imports(db=db, config=config, hosts=hosts, changed=link_changed)
        self.domains = Domains(
            db=db,
            hosts=hosts,
            nameservers=config.domains.nameservers,
            tls_asks=limiter("tls-ask", config.domains.tls_asks_per_minute),
        )
        self.dashboard_limits = DashboardLimits(
            webhook_tests=limiter.action("webhook tests", dashboard.webhook_tests_per_minute_per_account),
            app_checks=limiter.action("app checks", dashboard.app_checks_per_minute_per_account),
            imports=limiter.action("imports", dashboard.imports_per_minute_per_account),
            domain_checks=limiter.action("domain checks", dashboard.domain_checks_per_minute_per_account),
        )

    def deliver_elsewhere(self, wake: Callable[[], None] = _nothing) -> None:
        """Leave sending webhook events to another process (`shortlink serve`'s delivering
        process, webhooks.process): this one writes them, calls `wake()` soon after writing
        some, and reads who subscribes to clicks itself (the deliverer's rounds did). Before
        start()."""
        self._deliver_here = False
        self._tell_delivering = wake

    async def start(self) -> None:
        self.data_version = await self.db.write(account_store.data_version)
        if self.link_changes is not None:
            await self.link_changes.start()
        await self.recorder.start()
        await self.fetcher.start()
        await self.bio.start()
        await self.apps.start()
        await self.domains.start()
        await self.webhooks.refresh_subscribers()
        if self._deliver_here:
            await self.deliverer.start()
        else:
            self._tasks.append(asyncio.create_task(self._refresh_subscribers()))
        self._tasks.append(asyncio.create_task(self._watch_external_changes()))
        if isinstance(self.db, SqliteDatabase):  # PostgreSQL checkpoints on its own
            self.db.take_over_checkpoints()
            self._tasks.append(asyncio.create_task(self._checkpoint_wal(self.db)))
        if self.config.clicks.raw_retention_days:
            self._tasks.append(asyncio.create_task(self._apply_raw_retention()))

    async def stop(self) -> None:
        """Stop taking work, let background work finish, close the file."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.fetcher.stop()
        await self.deliverer.stop()
        await self.bio.stop()
        await self.apps.stop()
        await self.domains.stop()
        await self.recorder.stop()  # drains every queued click
        if self.link_changes is not None:
            await self.link_changes.stop()
        if self.redis is not None:
            await self.redis.aclose()
        self.db.close()

    @contextlib.asynccontextmanager
    async def lifespan(self, _app) -> AsyncIterator[None]:
        await self.start()
        try:
            yield
        finally:
            await self.stop()

    async def _watch_external_changes(self) -> None:
        """Other processes (the CLI, other servers) write to the same database: when what we
        cache from it changed (storage.accounts.data_version), drop it. With Redis, other
        servers' link changes arrive one by one, so the link cache is cleared only while that
        subscription is down."""
        while True:
            await asyncio.sleep(EXTERNAL_CHANGES_POLL_SECONDS)
            try:
                version = await self.db.write(account_store.data_version)
                if version != self.data_version:
                    self.data_version = version
                    if self.link_changes is None or not self.link_changes.listening:
                        self.caches.clear()
                    if self.hosts.replace(await self.db.write(Hosts.read)):
                        self.caches.bio.clear()  # bio pages show their account's short URL base
            except Exception:  # a locked or failing database must not end the watcher
                log.exception("could not check the database for outside changes")
            self.outside_checks += 1

    async def _refresh_subscribers(self) -> None:
        """While another process delivers: tells it of the events this one wrote. And endpoints
        made or removed by the CLI or another process, or disabled by the delivering process,
        change who subscribes to clicks: looked at once a second, and after this process wrote
        events (as the deliverer's round did)."""
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(SUBSCRIBERS_POLL_SECONDS):
                    await self.events_written.wait()
            if self.events_written.is_set():
                self.events_written.clear()
                self._tell_delivering()
            try:
                await self.webhooks.refresh_subscribers()
            except Exception:  # a locked or failing database must not end the refresher
                log.exception("could not read the webhook endpoints subscribed to clicks")

    async def _apply_raw_retention(self) -> None:
        while True:
            try:
                await forget_raw_clicks(self.db, self.config.clicks.raw_retention_days, time.time())
            except Exception:  # retried on the next sweep
                log.exception("could not delete raw clicks past [clicks] raw_retention_days")
            await asyncio.sleep(RAW_RETENTION_SWEEP_SECONDS)

    async def _checkpoint_wal(self, db: SqliteDatabase) -> None:
        while True:
            await asyncio.sleep(WAL_CHECKPOINT_SECONDS)
            try:
                await db.checkpoint()
            except Exception:  # a failed checkpoint is retried on the next round
                log.exception("WAL checkpoint failed")


def build_deliverer(
    config: Config,
    db: Database,
    hosts: Hosts,
    key: bytes,
    *,
    on_round: Callable[[], Awaitable[None]],
    wake: asyncio.Event | None = None,
) -> Deliverer:
    """The webhook deliverer of a server process (Services) or of the delivering process,
    signing with the webhook key `key`."""
    # Never delivered to this service itself: its hosts, their addresses, its listening port.
    own = OwnServiceResolver(hosts.all, system_resolver, listen=(config.server.host, config.server.port))
    return Deliverer(
        db,
        webhook_key=key,
        base_for=hosts.base_for_account,
        policy=address_policy(config.fetcher.allow_private_addresses),
        own=own,
        on_round=on_round,
        wake=wake,
    )


class Delivering:
    """The webhook deliverer alone, as `shortlink serve`'s delivering process runs it
    (webhooks.process): its own connections to the database, the service's hosts (each
    account's short URL base, and the hosts never delivered to) and the webhook key, made as a
    server process makes them."""

    def __init__(self, config: Config):
        with contextlib.closing(connect(config.storage.location)) as conn:
            self.hosts = Hosts.load(conn, config.short_host, config.links.domains)
            signing_key = load_signing_key(conn, config.storage)
        self.db = open_database(config.storage.location)
        self.deliverer = build_deliverer(
            config, self.db, self.hosts, webhook_key(signing_key), on_round=self._refresh_domains
        )

    async def _refresh_domains(self) -> None:
        """Custom domains added meanwhile (an account's links' base), before every round."""
        self.hosts.replace(await self.db.read(Hosts.read))

    async def start(self) -> None:
        await self.deliverer.start()

    async def stop(self) -> None:
        await self.deliverer.stop()
        self.db.close()
