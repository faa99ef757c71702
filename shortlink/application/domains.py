"""Domains an account connects itself, for every door: connect, check now, change, remove; the
periodic checks; and Caddy's on-demand TLS question.

Which domains are served lives in memory (`Hosts`), as before: a change made here swaps it in
at once, and other processes see it through the database's change counter (wiring)."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from shortlink.application.hosts import Hosts
from shortlink.client_address import client_bucket
from shortlink.domains import service
from shortlink.domains.check import check
from shortlink.domains.schema import CreateDomain, Domain, UpdateDomain
from shortlink.domains.validation import validate_name
from shortlink.ratelimit import Limiter
from shortlink.storage import Database
from shortlink.storage import domains as store
from shortlink.times import to_iso, utcnow

log = logging.getLogger("shortlink.domains")

# How often a server looks for domains whose check is due, and how many it checks a round.
DUE_POLL_SECONDS = 60.0
CHECKS_PER_ROUND = 50


class Domains:
    def __init__(self, *, db: Database, hosts: Hosts, nameservers: list[str], tls_asks: Limiter):
        self.db, self.hosts, self.nameservers, self.tls_asks = db, hosts, nameservers, tls_asks
        self._task: asyncio.Task | None = None

    async def create(self, account_id: int, body: CreateDomain) -> Domain:
        host = validate_name(body.name, self.hosts.is_service_host)
        return await self.db.write(service.connect, account_id, host, body, utcnow())

    async def all(self, account_id: int) -> list[Domain]:
        return await self.db.read(service.list_domains, account_id)

    async def get(self, account_id: int, domain_id: str) -> Domain:
        return service.to_domain(await self.db.read(service.domain_row, account_id, domain_id))

    async def update(self, account_id: int, domain_id: str, patch: UpdateDomain) -> Domain:
        domain = await self.db.write(service.update, account_id, domain_id, patch)
        await self._reload()
        return domain

    async def delete(self, account_id: int, domain_id: str) -> None:
        await self.db.write(service.remove, account_id, domain_id)
        await self._reload()

    async def verify(self, account_id: int, domain_id: str) -> Domain:
        """Check the record now (the account asked); the operator's domains have none to check."""
        row = await self.db.read(service.domain_row, account_id, domain_id)
        if row["token"] is not None:
            await check(row, self.nameservers, self.db.write)
            await self._reload()
        return await self.get(account_id, domain_id)

    async def check_due(self) -> int:
        """One round of the periodic checks; returns how many domains were checked."""
        now = utcnow()
        rows = await self.db.write(
            store.claim_due, to_iso(now), to_iso(now + service.UNVERIFIED_EVERY), CHECKS_PER_ROUND
        )
        for row in rows:
            await check(row, self.nameservers, self.db.write)
        if rows:
            await self._reload()
        return len(rows)

    async def _reload(self) -> None:
        self.hosts.replace(await self.db.read(Hosts.read))

    async def tls_allowed(self, domain: str, client_ip: str) -> bool | None:
        """Whether Caddy may get a certificate for `domain`; None when this client asked too often."""
        if not (await self.tls_asks.take(client_bucket(client_ip))).allowed:
            return None
        return self.hosts.allows_certificate(domain)

    async def start(self) -> None:
        self._task = asyncio.create_task(self._periodic())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _periodic(self) -> None:
        while True:
            try:
                await self.check_due()
            except Exception:  # a failing database or resolver must not end the checks
                log.exception("could not check the domains due")
            await asyncio.sleep(DUE_POLL_SECONDS)
