"""Link rules for every door: read and replace a link's rules document.

Replacing runs the validation and the write on the writer, then tells the link cache of
every process that the link changed, as a link update does: the cache entry carries the
compiled rules."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

from shortlink.analytics.ranges import parse_range
from shortlink.application.hosts import Hosts
from shortlink.errors import ValidationError
from shortlink.link_rules import describe, service
from shortlink.link_rules.countries import COUNTRY_CODES
from shortlink.link_rules.schema import (
    Destination,
    Rule,
    RuleAnalytics,
    RulesDocument,
    SimulatedResult,
    SimulatedVisit,
)
from shortlink.links.validation import parse_time
from shortlink.storage import Database
from shortlink.times import utcnow
from shortlink.visits.loader import with_rules
from shortlink.visits.recorder import day_of_ms

if TYPE_CHECKING:  # Redis is imported only when configured (sharedstate)
    from redis.asyncio import Redis

    from shortlink.application.visits import Visits

log = logging.getLogger("shortlink.link_rules")


class LinkRules:
    def __init__(
        self, *, db: Database, hosts: Hosts, visits: Visits, changed: Callable[[str], None], blocked: frozenset[str]
    ):
        self.db, self.hosts, self.visits, self.blocked = db, hosts, visits, blocked
        self._changed = changed

    async def rules(self, account_id: int, link_id: str) -> RulesDocument:
        return await self.db.read(service.link_rules, account_id, link_id)

    async def set_rules(self, account_id: int, link_id: str, document: RulesDocument, *, door: str) -> RulesDocument:
        stored, code = await self.db.write(
            service.set_link_rules,
            account_id,
            link_id,
            document,
            door=door,
            is_ours=self.hosts.is_ours,
            blocked=self.blocked,
        )
        self._changed(code)
        return stored

    async def destination(self, account_id: int, link_id: str) -> Destination:
        return await self.db.read(service.destination, account_id, link_id)

    async def everyone_urls(self, account_id: int, link_ids: list[str]) -> dict[str, str]:
        """Where everyone goes, for those of these links that send everyone elsewhere (the list)."""
        return await self.db.read(service.everyone_urls, account_id, link_ids)

    async def send_everyone_to(self, account_id: int, link_id: str, url: str, *, door: str) -> Destination:
        """Every visitor of the link goes to `url` from now on, checked as any rule's URL is;
        the spec's originalUrl stays what the link was created for."""
        return await self._send_everyone(account_id, link_id, url, door)

    async def send_everyone_back(self, account_id: int, link_id: str, *, door: str) -> Destination:
        """Visitors go to the link's originalUrl again."""
        return await self._send_everyone(account_id, link_id, None, door)

    async def _send_everyone(self, account_id: int, link_id: str, url: str | None, door: str) -> Destination:
        found, code = await self.db.write(
            service.send_everyone,
            account_id,
            link_id,
            url,
            door=door,
            is_ours=self.hosts.is_ours,
            blocked=self.blocked,
        )
        self._changed(code)
        return found

    async def analytics(
        self, account_id: int, link_id: str, days: str, start: str | None, end: str | None
    ) -> RuleAnalytics:
        """The API's `days`, `from` and `to`, as the link's analytics take them; whole UTC days."""
        span = parse_range(days, start, end, utcnow())
        first, last = day_of_ms(span.start_ms), day_of_ms(span.end_ms)
        return await self.db.read(service.rule_analytics, account_id, link_id, first, last)

    async def test(self, account_id: int, link_id: str, visit: SimulatedVisit) -> SimulatedResult:
        """What a visitor like this would get of the link now (or at `visit.time`), without a click."""
        now = time.time() if visit.time is None else parse_time("time", visit.time).timestamp()
        if visit.country is not None and visit.country.upper() not in COUNTRY_CODES:
            raise ValidationError("country", f"unknown country {visit.country!r}; an ISO 3166-1 alpha-2 code")
        country = None if visit.country is None else visit.country.upper()
        row = await self.db.read(service.visit_target_row, account_id, link_id)
        target = with_rules(row, self.hosts.is_ours)
        return await self.visits.simulate(target, msgspec.structs.replace(visit, country=country), now)

    def summary(self, rule: Rule) -> str:
        """A rule's action in a few words, for the editor's card (link_rules.describe)."""
        return describe.action_text(rule)

    def sentences(self, result: SimulatedResult) -> list[tuple[str, str, str]]:
        """What a tried visit met, rule by rule, as the editor shows it."""
        return describe.tried_sentences(result)


class ClickCaps:
    """Link rules' cap on human clicks in one process (SQLite's single server): a count per
    capped link, started from the count the database holds (the click writer adds each stored
    human click to it), then kept here, ahead of the writer's queue."""

    def __init__(self) -> None:
        self._counts: dict[int, int] = {}

    async def take(self, link_pk: int, stored: int, maximum: int, count: bool) -> bool:
        """May this visit go on (the cap is not reached)? With `count`, it uses up one click."""
        used = self._counts.get(link_pk, stored)
        if used >= maximum:
            return False
        if count:
            self._counts[link_pk] = used + 1
        return True


class SharedClickCaps(ClickCaps):
    """The same count in Redis, exact across processes: one atomic INCR per human click of a
    capped link (links without a cap never reach here). The key starts from the database's
    count, set only by the first process that needs it."""

    def __init__(self, client: Redis) -> None:
        from redis.exceptions import RedisError

        super().__init__()
        self.client, self.errors = client, RedisError

    async def take(self, link_pk: int, stored: int, maximum: int, count: bool) -> bool:
        name = f"shortlink:cap:{link_pk}"
        try:
            if not count:
                value = await self.client.get(name)
                return (stored if value is None else int(value)) < maximum
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.set(name, stored, nx=True)
                pipe.incr(name)
                _, used = await pipe.execute()
        except self.errors:
            log.exception("Redis did not answer: counting link %d's capped clicks in this process", link_pk)
            return await super().take(link_pk, stored, maximum, count)
        return int(used) <= maximum
