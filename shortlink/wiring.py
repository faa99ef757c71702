"""The running parts of one server process, wired together, started and stopped together.

Doors reach the application layer through the attributes `links`, `accounts`,
`analytics`, `visits` and `sessions`; everything else here is wiring and lifespan.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Callable

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
from shortlink.application.webhooks import Webhooks, installation_key
from shortlink.config import Config, ConfigError, PublicConfig
from shortlink.fetcher.addresses import OwnServiceResolver, address_policy, system_resolver
from shortlink.fetcher.worker import TitleFetcher
from shortlink.keyfile import key_file_of, read_or_create, signing_key
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

log = logging.getLogger("shortlink")

EXTERNAL_CHANGES_POLL_SECONDS = 1.0
# While another process delivers webhooks: how often this one reads who subscribes to clicks.
SUBSCRIBERS_POLL_SECONDS = 1.0
WAL_CHECKPOINT_SECONDS = 1.0
RAW_RETENTION_SWEEP_SECONDS = 3600.0
# Raw clicks deleted per write: small enough that click batches never wait long behind it.
RAW_RETENTION_CHUNK = 5000


async def forget_raw_clicks(db: Database, retention_days: int, now: float) -> int:
    """Delete the raw clicks older than `retention_days`, a chunk per write; returns how many."""
    horizon_ms = int((now - retention_days * 86400) * 1000)
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


class Services:
    def __init__(self, config: Config):
        # Open the file once now: a bad [storage] path then stops `shortlink serve` with
        # one line before the ASGI server starts (a failing lifespan is a traceback).
        with contextlib.closing(connect(config.storage.location)) as conn:
            self.hosts = Hosts.load(conn, config.short_host, config.links.domains)
            public_account = _public_account(conn, config.public)
        # After the database: a bad [storage] path is reported as that, not as the key file.
        key_file = key_file_of(config.storage)
        self._file_key = None if key_file is None else read_or_create(key_file)
        self.config = config
        self.db = open_database(config.storage.location)
        self.link_cache = LinkCache()
        self.caches = MemoryCaches(self.link_cache, BioCache())
        # With Redis, rate limits and link changes are shared by every process using it.
        self.redis = open_redis(config.redis.url) if config.redis.url else None
        self.link_changes = None if self.redis is None else LinkChanges(self.redis, self.caches)
        link_changed = self.caches.discard if self.link_changes is None else self.link_changes.changed
        shared_keys = None if self.redis is None else SharedDayKeys(self.redis)
        self.recorder = ClickRecorder(
            self.db,
            config.clicks,
            shared_keys=shared_keys,
            is_ours=self.hosts.is_ours,
            countries=open_table(config.geoip.path),
            clicks_wanted=lambda: self.webhooks.clicks_wanted(),
        )
        self.fetcher = TitleFetcher(self.db, config.fetcher, on_saved=link_changed, own_hosts=self.hosts.all)
        self._cookie_secret = b""
        # The counter of changes to what is cached, as last seen (storage.accounts.data_version),
        # and how many times the watcher has looked (tests wait on both).
        self.data_version = 0
        self.outside_checks = 0
        self._tasks: list[asyncio.Task] = []
        limits = config.limits
        self.links = Links(
            self.db,
            self.hosts,
            daily_limit=limits.links_per_day,
            fetch_titles=config.fetcher.enabled,
            changed=link_changed,
            fetch_wanted=self.fetcher.notify,
            blocked=blocked_hosts(config.public.blocked_hosts),
            events_written=lambda: self._wake_deliverer(),
        )
        self.bio = Bio(self.db, self.hosts, self.links, self.caches.bio, changed=link_changed)
        self.accounts = Accounts(self.db, self._limiter("api", limits.requests_per_minute), limits.links_per_day)
        self.analytics = Analytics(self.db)
        dashboard = config.dashboard
        self.sessions = Sessions(
            self.db,
            per_account=self._limiter("signin-account", dashboard.signins_per_minute_per_account),
            per_address=self._limiter("signin-address", dashboard.signins_per_minute_per_address),
            secret=lambda: self._cookie_secret,
            idle_seconds=dashboard.idle_minutes * 60,
            max_seconds=dashboard.max_days * 86400,
        )
        self.visits = Visits(
            self.db,
            self.hosts,
            self.link_cache,
            self.recorder,
            self._limiter("password", limits.password_attempts_per_minute),
            config.trusted_networks,
            lambda: self._cookie_secret,
            caps=ClickCaps() if self.redis is None else SharedClickCaps(self.redis),
            split_keys=DayKeys(None if shared_keys is None else shared_keys.key),
        )
        self.link_rules = LinkRules(
            self.db, self.hosts, self.visits, changed=link_changed, blocked=blocked_hosts(config.public.blocked_hosts)
        )
        self.public = PublicShortener(
            config.public,
            public_account,
            self.links,
            self.hosts,
            self._limiter("public", config.public.links_per_hour, period_seconds=3600),
            self.visits.address,
        )
        self.imports = Imports(self.db, config, self.hosts, changed=link_changed)
        self.apps = Apps(
            self.db,
            self.hosts,
            changed=link_changed,
            secret=lambda: self._cookie_secret,
            check_policy=address_policy(config.fetcher.allow_private_addresses),
        )
        self.dashboard_limits = DashboardLimits(
            webhook_tests=self._action_limit("webhook tests", dashboard.webhook_tests_per_minute_per_account),
            app_checks=self._action_limit("app checks", dashboard.app_checks_per_minute_per_account),
            imports=self._action_limit("imports", dashboard.imports_per_minute_per_account),
            domain_checks=self._action_limit("domain checks", dashboard.domain_checks_per_minute_per_account),
        )
        self.domains = Domains(
            self.db,
            self.hosts,
            config.domains.nameservers,
            self._limiter("tls-ask", config.domains.tls_asks_per_minute),
        )
        self.visits.count_app_outcome = self.apps.count_outcome
        self.webhooks, self.deliverer = self._webhooks(config)
        self._deliver_here = True
        self._wake_deliverer: Callable[[], None] = self.deliverer.notify
        self._look_at_subscribers = asyncio.Event()

    def _webhooks(self, config: Config) -> tuple[Webhooks, Deliverer]:
        """Webhook endpoints, and the deliverer that sends their events; both sign with the
        webhook key, known once `start` has read the database's secret."""

        def key() -> bytes:
            return webhook_key(self._cookie_secret)

        deliverer = build_deliverer(config, self.db, self.hosts, key)
        webhooks = Webhooks(
            self.db,
            self.hosts,
            allow_private=config.fetcher.allow_private_addresses,
            key=key,
            wake=lambda: self._wake_deliverer(),
        )
        deliverer.on_round = webhooks.refresh_subscribers
        return webhooks, deliverer

    def deliver_elsewhere(self, wake: Callable[[], None] | None = None) -> None:
        """Leave sending webhook events to another process (`shortlink serve`'s delivering
        process, webhooks.process): this one writes them, calls `wake()` after writing some,
        and reads who subscribes to clicks itself (the deliverer's rounds did). Before start()."""
        self._deliver_here = False
        tell = wake or (lambda: None)

        def written() -> None:
            tell()
            self._look_at_subscribers.set()  # as the deliverer's round did: soon after a change

        self._wake_deliverer = written

    def _limiter(self, name: str, per_minute: int, period_seconds: float = 60.0) -> Limiter:
        """`per_minute` tokens refilling over `period_seconds` (a minute unless told)."""
        if self.redis is None:
            return TokenBucketLimiter(per_minute, period_seconds=period_seconds)
        # Bucket names in Redis are keyed hashes (they may hold a visitor's IP): the
        # cookie secret is the key every process already shares (the database's secret
        # and the key file).
        return RedisLimiter(self.redis, name, per_minute, lambda: self._cookie_secret, period_seconds)

    def _action_limit(self, what: str, per_account: int) -> ActionLimit:
        name = what.replace(" ", "-")
        per_address = self.config.dashboard.actions_per_minute_per_address
        return ActionLimit(
            what, self._limiter(f"{name}-account", per_account), self._limiter(f"{name}-address", per_address)
        )

    async def start(self) -> None:
        self.data_version = await self.db.write(account_store.data_version)
        secret = await self.db.write(account_store.setting, "cookie_secret", lambda: secrets.token_hex(32))
        self._cookie_secret = signing_key(self._file_key, bytes.fromhex(secret))
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
        """Endpoints made or removed by the CLI or another process, or disabled by the
        delivering process, change who subscribes to clicks: looked at once a second, and
        after this process wrote events."""
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(SUBSCRIBERS_POLL_SECONDS):
                    await self._look_at_subscribers.wait()
            self._look_at_subscribers.clear()
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


def build_deliverer(config: Config, db: Database, hosts: Hosts, key: Callable[[], bytes]) -> Deliverer:
    """The webhook deliverer of a server process (Services) or of the delivering process."""
    # Never delivered to this service itself: its hosts, their addresses, its listening port.
    own = OwnServiceResolver(hosts.all, system_resolver, listen=(config.server.host, config.server.port))
    return Deliverer(
        db,
        key=key,
        base_for=hosts.base_for_account,
        policy=address_policy(config.fetcher.allow_private_addresses),
        own=own,
    )


class Delivering:
    """The webhook deliverer alone, as `shortlink serve`'s delivering process runs it
    (webhooks.process): its own connections to the database, the service's hosts (each
    account's short URL base, and the hosts never delivered to) and the webhook key, made as a
    server process makes them."""

    def __init__(self, config: Config):
        with contextlib.closing(connect(config.storage.location)) as conn:
            self.hosts = Hosts.load(conn, config.short_host, config.links.domains)
            key = installation_key(conn, config.storage)
        self.db = open_database(config.storage.location)
        self.deliverer = build_deliverer(config, self.db, self.hosts, lambda: key)
        self.deliverer.on_round = self._refresh_domains

    async def _refresh_domains(self) -> None:
        """Custom domains added meanwhile (an account's links' base)."""
        self.hosts.replace(await self.db.read(Hosts.read))

    async def start(self) -> None:
        await self.deliverer.start()

    async def stop(self) -> None:
        await self.deliverer.stop()
        self.db.close()
