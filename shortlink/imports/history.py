"""Imported clicks as the rows the click writer stores: the labels a live visit gets
(shortlink.visits.enrich), our own bot verdict, and a visitor number in place of the address.

A source's log repeats a few user agents, referrers and addresses millions of times, so each
distinct one is labelled once per import (device, browser, system and bot verdict of an agent;
the host of a referrer; the country of an address), in dictionaries bounded in size: memory
stays the same whatever the number of clicks. The visitor number is a keyed hash of
(address, agent) with a random key per day that lives only in this object's memory, as the
recorder's keys do: no address is stored, and none can be recomputed once the import ends.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import UTC, datetime

from shortlink.imports.rows import ImportedClick
from shortlink.storage.clicks import StoredClick
from shortlink.visits import enrich
from shortlink.visits.classify import classify
from shortlink.visits.countries import CountryTable

DAY_MS = 86_400_000
USER_AGENT_LENGTH = 512  # as visits crop it
# Entries per dictionary: far more than a log's distinct agents or referrers; a log of unique
# addresses empties its dictionary now and then instead of growing with it.
CACHE_ENTRIES = 100_000


class HistoryLabels:
    def __init__(self, countries: CountryTable, is_ours: Callable[[str], bool] = lambda _host: False):
        self.countries, self.is_ours = countries, is_ours
        self._agents: dict[str, tuple[str, str, str, bool]] = {}
        self._referrers: dict[str, str] = {}
        self._countries: dict[str, str] = {}
        self._days: dict[int, tuple[str, bytes]] = {}  # day number -> (YYYY-MM-DD, its visitor key)

    def stored(self, account_id: int, link_pk: int, click: ImportedClick) -> StoredClick:
        user_agent = click.user_agent[:USER_AGENT_LENGTH]
        device, browser, os_family, agent_is_bot = self._agent(user_agent)
        # The source's verdict, and ours where the agent is known; this service's own export
        # carries our verdict as it was (bot_final).
        is_bot = click.is_bot if click.bot_final else click.is_bot or agent_is_bot
        day, key = self._day(click.ts_ms)
        return StoredClick(
            link_pk,
            account_id,
            click.ts_ms,
            day,
            device,
            browser,
            os_family,
            self._country(click.ip, click.country),
            self._referrer(click.referrer),
            enrich.campaign_label(click.campaign),
            user_agent,
            enrich.visitor_hash(key, click.ip, user_agent),
            int(is_bot),
        )

    def _agent(self, user_agent: str) -> tuple[str, str, str, bool]:
        found = self._agents.get(user_agent)
        if found is None:
            if len(self._agents) >= CACHE_ENTRIES:
                self._agents.clear()
            device, browser, os_family = enrich.user_agent_labels(user_agent)
            is_bot = bool(user_agent) and classify(user_agent).is_bot
            found = self._agents[user_agent] = (device, browser, os_family, is_bot)
        return found

    def _referrer(self, referrer: str) -> str:
        found = self._referrers.get(referrer)
        if found is None:
            if len(self._referrers) >= CACHE_ENTRIES:
                self._referrers.clear()
            found = self._referrers[referrer] = enrich.referrer_host(referrer, self.is_ours)
        return found

    def _country(self, ip: str, hint: str) -> str:
        if hint:  # the source's country, when it kept one
            return enrich.country_of(ip, hint, self.countries)
        found = self._countries.get(ip)
        if found is None:
            if len(self._countries) >= CACHE_ENTRIES:
                self._countries.clear()
            found = self._countries[ip] = enrich.country_of(ip, "", self.countries)
        return found

    def _day(self, ts_ms: int) -> tuple[str, bytes]:
        number = ts_ms // DAY_MS
        found = self._days.get(number)
        if found is None:
            day = datetime.fromtimestamp(number * 86_400, UTC).strftime("%Y-%m-%d")
            found = self._days[number] = (day, secrets.token_bytes(32))
        return found
