"""What the redirect path needs to know about a link, kept in memory.

A redirect of a cached link does no database read: entries are dropped when the
link changes in this process, and the whole cache is cleared when another
process (the CLI) commits to the file.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from types import EllipsisType

import msgspec

from shortlink.links.platforms import Platform
from shortlink.times import from_iso

MAX_ENTRIES = 200_000


class VisitTarget(msgspec.Struct, frozen=True, gc=False):
    link_id: int
    public_id: str
    account_id: int
    code: str
    original_url: str
    platform: Platform
    ios_url: str | None
    android_url: str | None
    title: str | None
    is_active: bool
    expires_at: float | None  # Unix seconds
    password_hash: str | None


def target_from_row(row: sqlite3.Row) -> VisitTarget:
    return VisitTarget(
        link_id=row["id"],
        public_id=row["public_id"],
        account_id=row["account_id"],
        code=row["short_code"],
        original_url=row["original_url"],
        platform=Platform(row["platform"]),
        ios_url=row["ios_url"],
        android_url=row["android_url"],
        title=row["title"],
        is_active=bool(row["is_active"]),
        expires_at=from_iso(row["expires_at"]).timestamp() if row["expires_at"] else None,
        password_hash=row["password_hash"],
    )


class LinkCache:
    """code → VisitTarget, or None for a code known not to exist; least recently used
    entries leave first, so hot links stay whatever the size of the catalogue.

    Bounded by entries, not bytes: at the default, the cache stays within a few
    hundred bytes per entry (see the README's benchmarks for the measured RSS); a miss
    costs one indexed point read."""

    def __init__(self, max_entries: int = MAX_ENTRIES):
        self.max_entries = max_entries
        self._entries: OrderedDict[str, VisitTarget | None] = OrderedDict()

    def get(self, code: str) -> VisitTarget | EllipsisType | None:
        """The cached entry, or `...` when the code is not cached."""
        entry = self._entries.get(code, ...)
        if entry is not ...:
            self._entries.move_to_end(code)
        return entry

    def put(self, code: str, target: VisitTarget | None) -> None:
        self._entries[code] = target
        if len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def discard(self, code: str) -> None:
        self._entries.pop(code, None)

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
