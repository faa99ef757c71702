"""Apps and their association files for every door: register, list, remove an owner's apps;
the apple-app-site-association and assetlinks.json bytes of a host.

The owner is an account id, or None for the service itself (the operator's apps, named on
the short host). A host's files name its owner's apps: a connected custom domain's account,
or the service on every other host.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import timedelta
from urllib.parse import urlsplit

from shortlink.application.hosts import Hosts
from shortlink.application.periodic import EverySecondWriter
from shortlink.applinks import association, deferred, service
from shortlink.applinks.check import CHECK_SECONDS, HostCheck, Target, check_hosts
from shortlink.applinks.schema import App, CreateApp, DeepLink, LinkApp, LinkAppAnalytics, SetLinkApp
from shortlink.fetcher.addresses import AddressPolicy, public_only
from shortlink.storage import Database
from shortlink.storage import accounts as account_store
from shortlink.storage import applinks as store
from shortlink.times import utcnow

log = logging.getLogger("shortlink")
OUTCOMES_FLUSH_SECONDS = 1.0


def _nothing(_code: str) -> None:
    return None


class Apps:
    def __init__(
        self,
        *,
        db: Database,
        hosts: Hosts,
        signing_key: bytes,
        changed: Callable[[str], None] = _nothing,
        check_policy: AddressPolicy = public_only,
    ):
        """`signing_key`: signs deferred-link tokens (keyfile); `changed(code)`: a link's app
        changed (the visitor caches of every process forget it); `check_policy`: the addresses
        `check` may fetch from (the title fetcher's)."""
        self.db, self.hosts, self.signing_key = db, hosts, signing_key
        self._changed = changed
        self.check_policy = check_policy
        # (link id, UTC day, outcome) → human visits not yet written: counted on the visitor
        # path in memory, written every second (as bio page views are), never in the request.
        self._outcomes: Counter[tuple[int, str, str]] = Counter()
        self._writer = EverySecondWriter(self.flush_outcomes, "app-link visit counts", log, OUTCOMES_FLUSH_SECONDS)

    def count_outcome(self, link_pk: int, outcome: str) -> None:
        """One human visit of a link into an app, and what the visitor path decided for it."""
        self._outcomes[(link_pk, time.strftime("%Y-%m-%d", time.gmtime()), outcome)] += 1

    async def flush_outcomes(self) -> None:
        if not self._outcomes:
            return
        counts, self._outcomes = self._outcomes, Counter()
        try:
            await self.db.write(store.add_outcomes, [(*key, n) for key, n in counts.items()])
        except Exception:
            self._outcomes.update(counts)  # kept for the next flush
            raise

    async def app_analytics(self, account_id: int, link_id: str, days: int) -> LinkAppAnalytics:
        await self.flush_outcomes()
        today = utcnow().date()
        return await self.db.read(service.app_analytics, account_id, link_id, today - timedelta(days=days - 1), today)

    async def start(self) -> None:
        await self._writer.start()

    async def stop(self) -> None:
        await self._writer.stop()

    async def create(self, account_id: int | None, body: CreateApp) -> App:
        return await self.db.write(service.create_app, account_id, body, utcnow())

    async def list(self, account_id: int | None) -> list[App]:
        return await self.db.read(service.list_apps, account_id)

    async def get(self, account_id: int | None, app_id: str) -> App:
        return await self.db.read(service.get_app, account_id, app_id)

    async def remove(self, account_id: int | None, app_id: str) -> None:
        # The app rides in the cache entry of each link opening it: with Redis, every process
        # forgets those links, as it does any changed link.
        for code in await self.db.write(service.remove_app, account_id, app_id):
            self._changed(code)

    async def link_app(self, account_id: int, link_id: str) -> LinkApp:
        return await self.db.read(service.link_app, account_id, link_id)

    async def set_link_app(self, account_id: int, link_id: str, body: SetLinkApp) -> LinkApp:
        result, code = await self.db.write(service.set_link_app, account_id, link_id, body)
        self._changed(code)
        return result

    async def redeem(self, token: str) -> DeepLink:
        """The deep path a deferred-link token carries, once (the app's first start)."""
        link_id = deferred.verify(self.signing_key, token, time.time())
        return await self.db.write(service.redeem_deferred, link_id, deferred.token_hash(token), utcnow())

    async def resolve(self, code: str) -> DeepLink:
        """The deep path of a short link the app was opened with."""
        return await self.db.read(service.resolve_code, code)

    async def check(self, account_id: int) -> Sequence[HostCheck]:
        """Each connected custom domain's files fetched as Apple's and Google's validators fetch
        them (no redirect followed) and checked for the account's apps, one line per mistake,
        all within CHECK_SECONDS.
        The domains are fetched where the service serves them: the short host's scheme and
        port (https://DOMAIN in production)."""
        apps = await self.list(account_id)
        ios = [app.ios for app in apps if app.ios]
        android = [app.android for app in apps if app.android]
        if not ios and not android:
            return []
        domains = await self.db.read(account_store.domains_of, account_id)
        short = urlsplit(self.hosts.short_host)
        port = f":{short.port}" if short.port else ""
        targets = [
            Target(domain, f"{short.scheme}://{domain}{port}", ios, android, self.check_policy) for domain in domains
        ]
        return await check_hosts(targets, CHECK_SECONDS)

    async def apple_association(self, host: str) -> bytes | None:
        """The host's apple-app-site-association; None when it names no iOS app (a 404)."""
        apps = await self.list(self.hosts.owner_of(host))
        return association.apple_association(app.ios for app in apps if app.ios)

    async def asset_links(self, host: str) -> bytes | None:
        """The host's assetlinks.json; None when it names no Android app (a 404)."""
        apps = await self.list(self.hosts.owner_of(host))
        return association.asset_links(app.android for app in apps if app.android)
