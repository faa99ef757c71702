"""Apps and their association files for every door: register, list, remove an owner's apps;
the apple-app-site-association and assetlinks.json bytes of a host.

The owner is an account id, or None for the service itself (the operator's apps, named on
the short host). A host's files name its owner's apps: a connected custom domain's account,
or the service on every other host.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from shortlink.app.hosts import Hosts
from shortlink.applinks import association, deferred, service
from shortlink.applinks.schema import App, CreateApp, DeepLink, LinkApp, SetLinkApp
from shortlink.storage import Database
from shortlink.times import utcnow


def _nothing(_code: str = "") -> None:
    return None


class Apps:
    def __init__(
        self,
        db: Database,
        hosts: Hosts,
        *,
        changed: Callable[[str], None] = _nothing,
        forget_all: Callable[[], None] = _nothing,
        secret: Callable[[], bytes] = bytes,
    ):
        """`changed(code)`: a link's app changed (the visitor cache forgets it); `forget_all()`:
        an app went, and with it every link's (they ride in the link cache); `secret()`: the
        key deferred-link tokens are signed with."""
        self.db, self.hosts = db, hosts
        self._changed, self._forget_all, self._secret = changed, forget_all, secret

    async def create(self, account_id: int | None, body: CreateApp) -> App:
        return await self.db.write(service.create_app, account_id, body, utcnow())

    async def list(self, account_id: int | None) -> list[App]:
        return await self.db.read(service.list_apps, account_id)

    async def get(self, account_id: int | None, app_id: str) -> App:
        return await self.db.read(service.get_app, account_id, app_id)

    async def remove(self, account_id: int | None, app_id: str) -> None:
        await self.db.write(service.remove_app, account_id, app_id)
        self._forget_all()

    async def link_app(self, account_id: int, link_id: str) -> LinkApp:
        return await self.db.read(service.link_app, account_id, link_id)

    async def set_link_app(self, account_id: int, link_id: str, body: SetLinkApp) -> LinkApp:
        result, code = await self.db.write(service.set_link_app, account_id, link_id, body)
        self._changed(code)
        return result

    async def redeem(self, token: str) -> DeepLink:
        """The deep path a deferred-link token carries, once (the app's first start)."""
        link_id = deferred.verify(self._secret(), token, time.time())
        return await self.db.write(service.redeem_deferred, link_id, deferred.token_hash(token), utcnow())

    async def resolve(self, code: str) -> DeepLink:
        """The deep path of a short link the app was opened with."""
        return await self.db.read(service.resolve_code, code)

    async def apple_association(self, host: str) -> bytes | None:
        """The host's apple-app-site-association; None when it names no iOS app (a 404)."""
        apps = await self.list(self.hosts.owner_of(host))
        return association.apple_association(app.ios for app in apps if app.ios)

    async def asset_links(self, host: str) -> bytes | None:
        """The host's assetlinks.json; None when it names no Android app (a 404)."""
        apps = await self.list(self.hosts.owner_of(host))
        return association.asset_links(app.android for app in apps if app.android)
