"""The sticky split: which variant of a split a visitor gets, the same one all day.

The choice is an HMAC of the visitor key (IP address and user agent, as for unique visitors)
under a random key of the day that lives only in memory (in Redis's memory when processes share
it, as the recorder's visitor keys do). Nothing that identifies a visitor is stored: only which
variant a click went to; and once the day's key is forgotten, no one can tell which visitor
would get which variant."""

from __future__ import annotations

import hmac
import logging
import secrets
from collections.abc import Awaitable, Callable

log = logging.getLogger("shortlink.link_rules")

DAY_SECONDS = 86_400
# How many buckets a visitor is spread over: weights are whole percentages.
BUCKETS = 100


def bucket(day_key: bytes, visitor: str, link_pk: int, rule: int) -> int:
    """0-99, uniform over visitors, stable for one day key; independent between links and rules
    so that one visitor's variant in one test says nothing about another."""
    digest = hmac.digest(day_key, f"{link_pk}:{rule}\n{visitor}".encode(), "sha256")
    return int.from_bytes(digest[:8], "big") % BUCKETS


def choose(weights: tuple[int, ...], position: int) -> int:
    """The variant whose share of the 100 buckets holds `position`."""
    for index, weight in enumerate(weights):
        if position < weight:
            return index
        position -= weight
    return len(weights) - 1


class DayKeys:
    """The split key of each UTC day, in memory; with `shared`, the one every process uses
    (fetched once a day). Only today's key is kept: yesterday's is forgotten at midnight."""

    def __init__(self, shared: Callable[[str, int, bytes], Awaitable[bytes]] | None = None):
        self._shared = shared
        self._day = -1
        self._key = b""

    def current(self, now_s: float) -> bytes | None:
        """Today's key, or None when it must first be fetched (`fetch`)."""
        day = int(now_s // DAY_SECONDS)
        if day == self._day:
            return self._key
        if self._shared is None:
            self._day, self._key = day, secrets.token_bytes(32)
            return self._key
        return None

    async def fetch(self, now_s: float) -> bytes:
        day = int(now_s // DAY_SECONDS)
        assert self._shared is not None
        offered = secrets.token_bytes(32)
        try:
            key = await self._shared(f"split-{day}", day * DAY_SECONDS * 1000, offered)
        except Exception:  # Redis away: this process's own key, so the visit still goes on
            log.exception("could not share the split key of the day; using this process's own")
            key = offered
        self._day, self._key = day, key
        return key
