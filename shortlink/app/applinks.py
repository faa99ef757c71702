"""Apps and their association files for every door: register, list, remove an owner's apps;
the apple-app-site-association and assetlinks.json bytes of a host.

The owner is an account id, or None for the service itself (the operator's apps, named on
the short host). A host's files name its owner's apps: a connected custom domain's account,
or the service on every other host.
"""

from __future__ import annotations

from shortlink.app.hosts import Hosts
from shortlink.applinks import association, service
from shortlink.applinks.schema import App, CreateApp
from shortlink.storage import Database
from shortlink.times import utcnow


class Apps:
    def __init__(self, db: Database, hosts: Hosts):
        self.db, self.hosts = db, hosts

    async def create(self, account_id: int | None, body: CreateApp) -> App:
        return await self.db.write(service.create_app, account_id, body, utcnow())

    async def list(self, account_id: int | None) -> list[App]:
        return await self.db.read(service.list_apps, account_id)

    async def get(self, account_id: int | None, app_id: str) -> App:
        return await self.db.read(service.get_app, account_id, app_id)

    async def remove(self, account_id: int | None, app_id: str) -> None:
        await self.db.write(service.remove_app, account_id, app_id)

    async def apple_association(self, host: str) -> bytes | None:
        """The host's apple-app-site-association; None when it names no iOS app (a 404)."""
        apps = await self.list(self.hosts.owner_of(host))
        return association.apple_association(app.ios for app in apps if app.ios)

    async def asset_links(self, host: str) -> bytes | None:
        """The host's assetlinks.json; None when it names no Android app (a 404)."""
        apps = await self.list(self.hosts.owner_of(host))
        return association.asset_links(app.android for app in apps if app.android)
