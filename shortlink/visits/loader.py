"""Links the cache does not hold, read together: every miss of one turn of the event loop
in one query, at the end of that turn.

Under load a turn of the loop starts many visits. Read one by one, each miss ran SQLite's
code and its system calls between two requests, and the rest of every request then ran
slower for the CPU caches it had emptied. Read together, SQLite runs once per turn.
A cached link never waits here (see `application.visits.Visits.resolve`); a miss waits one turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import msgspec

from shortlink.link_rules.matcher import CompiledRules, decode
from shortlink.links.platforms import detect_platform
from shortlink.storage import Database, Row
from shortlink.storage import links as link_store
from shortlink.visits.cache import LinkCache, VisitTarget, target_from_row

# Memory of compiled rules beyond their document's text: closures, targets, tuples.
RULES_OVERHEAD_FACTOR = 4


def with_rules(row: Row, is_ours: Callable[[str], bool] = lambda _host: False) -> VisitTarget:
    """The cache entry of a `visit_target_rows` row, its rules compiled when it has any. Each
    URL of a rule becomes the link's entry with that destination (its platform detected once,
    no store URLs of the link's own), so a rule's URL is treated as a destination is."""
    target = target_from_row(row)
    document, stored_clicks = row[16], row[17]
    if document is None:
        return target

    def make_target(url: str) -> VisitTarget:
        return msgspec.structs.replace(
            target, original_url=url, platform=detect_platform(url, is_ours), ios_url=None, android_url=None, app=None
        )

    rules = CompiledRules(
        decode(document),
        make_target,
        target.original_url,
        stored_clicks=stored_clicks or 0,
        size=len(document) * RULES_OVERHEAD_FACTOR,
    )
    return msgspec.structs.replace(target, rules=rules)


class LinkLoader:
    def __init__(self, db: Database, cache: LinkCache, is_ours: Callable[[str], bool] = lambda _host: False):
        self.db, self.cache, self.is_ours = db, cache, is_ours
        # code → one future per waiting visit: a visit cancelled while it waits cancels
        # only its own future, never another visit's.
        self._waiting: dict[str, list[asyncio.Future[VisitTarget | None]]] = {}

    async def load(self, code: str) -> VisitTarget | None:
        """The link with this code (None: there is none), read with the other misses of
        this turn of the loop, and kept in the cache."""
        loop = asyncio.get_running_loop()
        if not self._waiting:
            loop.call_soon(self._read_waiting)
        future: asyncio.Future[VisitTarget | None] = loop.create_future()
        self._waiting.setdefault(code, []).append(future)
        return await future

    def _read_waiting(self) -> None:
        waiting, self._waiting = self._waiting, {}
        try:
            rows = self.db.read_now(link_store.visit_target_rows, list(waiting))
        except Exception as error:  # each visit fails as a lone read's would
            for futures in waiting.values():
                for future in futures:
                    if not future.done():
                        future.set_exception(error)
            return
        found = {row[3]: with_rules(row, self.is_ours) for row in rows}  # row[3]: the code
        for code, futures in waiting.items():
            target = found.get(code)
            self.cache.put(code, target)
            for future in futures:
                if not future.done():
                    future.set_result(target)
