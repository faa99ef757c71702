"""What the redirect path needs to know about a link, kept in memory.

A redirect of a cached link does no database read: entries are dropped when the
link changes in this process, and the whole cache is cleared when another
process (the CLI) commits to the file.
"""

from __future__ import annotations

from collections import OrderedDict
from types import EllipsisType

import msgspec

from shortlink.link_rules.matcher import CompiledRules
from shortlink.links.platforms import Platform
from shortlink.storage import Row
from shortlink.times import from_iso

# What the cache may hold, in bytes: how many links that is depends on their URLs' length.
# Under a Zipf-like spread an LRU's hit rate grows with the log of its size, and under a
# uniform one it is small at any size that fits the server's memory (docs/performance.md).
MAX_BYTES = 32 * 2**20
# Memory of an entry beyond its texts: the struct, its numbers, the string headers, the ordered
# dict's slot and list node (tracemalloc on CPython 3.11; tests/visitors/test_link_cache.py checks it).
ENTRY_OVERHEAD = 480


class OwnApp(msgspec.Struct, frozen=True, gc=False):
    """The account's own app a link opens, at a deep path."""

    deep_path: str
    name: str | None
    app_store_id: str | None  # the iOS app's App Store id; None: no iOS app or none known
    package: str | None  # the Android app's package; None: no Android app


class VisitTarget(msgspec.Struct, frozen=True, gc=False):
    link_pk: int
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
    # The link's rules and limits, compiled (link_rules.matcher); None for a link without: then
    # the visit never looks at them.
    rules: CompiledRules[VisitTarget] | None = None
    app: OwnApp | None = None


def target_from_row(row: Row) -> VisitTarget:
    """The entry for a row of `storage.links.visit_target_rows` (its columns in field order; the
    rules document that follows them is compiled by `visits.loader`)."""
    (
        link_pk, public_id, account_id, code, original_url, platform, ios_url, android_url, title, active, expires, pw,
        deep_path, app_name, app_store_id, package,
    ) = tuple(row)[:16]  # fmt: skip
    return VisitTarget(
        link_pk,
        public_id,
        account_id,
        code,
        original_url,
        Platform(platform),
        ios_url,
        android_url,
        title,
        bool(active),
        from_iso(expires).timestamp() if expires else None,
        pw,
        app=None if deep_path is None else OwnApp(deep_path, app_name, app_store_id, package),
    )


class LinkCache:
    """code → VisitTarget, or None for a code known not to exist; least recently used
    entries leave first, so hot links stay whatever the size of the catalogue.

    Bounded in bytes, not entries: the server's memory stays the same whether its
    links have short or long URLs. Misses are read by `visits.loader.LinkLoader`."""

    def __init__(self, max_bytes: int = MAX_BYTES):
        self.max_bytes = max_bytes
        self.size = 0  # estimated bytes held (entry_size of every entry)
        self._entries: OrderedDict[str, VisitTarget | None] = OrderedDict()

    def get(self, code: str) -> VisitTarget | EllipsisType | None:
        """The cached entry, or `...` when the code is not cached."""
        entry = self._entries.get(code, ...)
        if entry is not ...:
            self._entries.move_to_end(code)
        return entry

    def put(self, code: str, target: VisitTarget | None) -> None:
        self.discard(code)
        self._entries[code] = target
        self.size += entry_size(code, target)
        while self.size > self.max_bytes and len(self._entries) > 1:
            self.size -= entry_size(*self._entries.popitem(last=False))

    def discard(self, code: str) -> None:
        entry = self._entries.pop(code, ...)
        if entry is not ...:
            self.size -= entry_size(code, entry)

    def clear(self) -> None:
        self._entries.clear()
        self.size = 0

    def __len__(self) -> int:
        return len(self._entries)


def entry_size(code: str, target: VisitTarget | None) -> int:
    """About how many bytes an entry holds: a fixed part and its texts."""
    if target is None:
        return ENTRY_OVERHEAD + len(code)
    texts = (target.public_id, target.original_url, target.ios_url, target.android_url, target.title)
    return (
        ENTRY_OVERHEAD
        + 2 * len(code)  # the key and the target's own copy
        + sum(len(text) for text in texts if text)
        + (len(target.password_hash) if target.password_hash else 0)
        + (target.rules.size if target.rules is not None else 0)
        + (0 if target.app is None else ENTRY_OVERHEAD // 2 + len(target.app.deep_path) + len(target.app.name or ""))
    )
