"""Bio pages for every door: the editor's operations, the public page served from memory,
and its view counts.

The public page of a handle is read (one point read on the event loop, as the visitor
path does) and rendered once, then served from `BioCache` until something on it
changes: the page or its buttons (this module says so), any of its links (`Links`
reports every change by short code), a shown link's expiry passing, or another process
committing (the services clear every cache then, or hear the change through Redis).
Views are counted in memory and added to the daily counts every second, at most one
per visitor (IP and user agent, as unique visitors are told apart) per page and UTC day
in each server process.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from datetime import timedelta
from types import EllipsisType

import msgspec
from msgspec import UNSET, UnsetType

from shortlink.application.hosts import Hosts
from shortlink.application.links import Links
from shortlink.application.periodic import EverySecondWriter
from shortlink.bio import service
from shortlink.bio.schema import BioPage, BioStats, SavePage
from shortlink.bio.validation import moved, normalise_handle, refuse_full_page
from shortlink.errors import ValidationError
from shortlink.links.schema import CreateLink, Link
from shortlink.pages.templated import render
from shortlink.storage import Database
from shortlink.storage import bio as store
from shortlink.times import day_of, utcnow
from shortlink.visits.classify import classify
from shortlink.visits.enrich import visitor_hash

log = logging.getLogger("shortlink.bio")
# Visitors remembered per process and day: past this many, new ones still count but are
# not remembered (a script rotating agents then inflates, but cannot grow memory).
MAX_SEEN_VISITORS = 200_000

MAX_CACHED_PAGES = 10_000
VIEWS_FLUSH_SECONDS = 1.0
MAX_STATS_DAYS = 366


class RenderedPage(msgspec.Struct, frozen=True, gc=False):
    page_id: int
    account_id: int
    url: str  # the page's own address, <base>/@<handle>
    body: bytes
    codes: frozenset[str]
    valid_until: float | None  # Unix seconds; past it the page must be rendered again


class BioCache:
    """handle → rendered page, or None for a handle known to show nothing; least recently
    used out first. Each page's short codes are indexed, so a link change forgets exactly
    the pages that show it."""

    def __init__(self, max_entries: int = MAX_CACHED_PAGES):
        self.max_entries = max_entries
        self._pages: OrderedDict[str, RenderedPage | None] = OrderedDict()
        self._handles_of_code: dict[str, set[str]] = {}

    def get(self, handle: str, now_s: float) -> RenderedPage | EllipsisType | None:
        """The cached page, None for a known absent one, `...` when it must be read."""
        page = self._pages.get(handle, ...)
        if page is ...:
            return ...
        if page is not None and page.valid_until is not None and now_s >= page.valid_until:
            self.forget_handle(handle)
            return ...
        self._pages.move_to_end(handle)
        return page

    def put(self, handle: str, page: RenderedPage | None) -> None:
        self.forget_handle(handle)
        self._pages[handle] = page
        for code in page.codes if page is not None else ():
            self._handles_of_code.setdefault(code, set()).add(handle)
        if len(self._pages) > self.max_entries:
            self.forget_handle(next(iter(self._pages)))

    def forget_handle(self, handle: str) -> None:
        page = self._pages.pop(handle, None)
        for code in page.codes if page is not None else ():
            handles = self._handles_of_code.get(code)
            if handles is not None:
                handles.discard(handle)
                if not handles:
                    del self._handles_of_code[code]

    def forget_code(self, code: str) -> None:
        for handle in list(self._handles_of_code.get(code, ())):
            self.forget_handle(handle)

    def clear(self) -> None:
        self._pages.clear()
        self._handles_of_code.clear()

    def __len__(self) -> int:
        return len(self._pages)


def _forget_locally(cache: BioCache) -> Callable[[str], None]:
    def forget(key: str) -> None:
        cache.forget_handle(key[1:])

    return forget


class Bio:
    def __init__(
        self,
        *,
        db: Database,
        hosts: Hosts,
        links: Links,
        cache: BioCache | None = None,
        changed: Callable[[str], None] | None = None,
    ):
        """`changed("@" + handle)` runs after a page changes: the services forget it in every
        process (the same channel as link codes; "@" never starts a code)."""
        self.db, self.hosts, self.links = db, hosts, links
        self.cache = cache if cache is not None else BioCache()
        self._changed = changed if changed is not None else _forget_locally(self.cache)
        self._views: Counter[tuple[int, str]] = Counter()
        # (page id, visitor hash) seen today, under a key of today's held only in memory.
        self._seen_day, self._seen_key, self._seen = "", b"", set[tuple[int, int]]()
        self._writer = EverySecondWriter(self.flush_views, "bio page views", log, VIEWS_FLUSH_SECONDS)

    # the editor

    async def page(self, account_id: int) -> BioPage:
        return await self.db.read(service.get_page, account_id, self._base(account_id), utcnow())

    async def save(self, account_id: int, body: SavePage) -> BioPage:
        """Create the account's page or change its handle, title, description or published flag."""
        page, before = await self.db.write(service.save_page, account_id, body, self._base(account_id), utcnow())
        if before is not None and before != page.handle:
            self._changed("@" + before)
        self._changed("@" + page.handle)
        return page

    async def delete(self, account_id: int) -> None:
        self._changed("@" + await self.db.write(service.delete_page, account_id))

    async def add_button(self, account_id: int, link_id: str, label: str | None = None) -> BioPage:
        """Put one of the account's links on the page, last."""
        return self._edited(
            await self.db.write(service.add_button, account_id, link_id, label, self._base(account_id), utcnow())
        )

    async def create_button(self, account_id: int, body: CreateLink, label: str | None = None) -> tuple[BioPage, Link]:
        """Create a link (source BIO, through the same `Links.create` as every door) and put it
        on the page. The page is checked first, so a refused button leaves no stray link."""
        page = await self.page(account_id)
        refuse_full_page(len(page.buttons))
        link = await self.links.create(account_id, body, "BIO")
        return await self.add_button(account_id, link.id, label), link

    async def update_button(
        self,
        account_id: int,
        link_id: str,
        *,
        label: str | UnsetType | None = UNSET,
        is_hidden: bool | UnsetType = UNSET,
    ) -> BioPage:
        """Change a button's label (None: the link's title) or hide or show it."""
        return self._edited(
            await self.db.write(
                service.update_button,
                account_id,
                link_id,
                self._base(account_id),
                utcnow(),
                label=label,
                is_hidden=is_hidden,
            )
        )

    async def remove_button(self, account_id: int, link_id: str) -> BioPage:
        return self._edited(
            await self.db.write(service.remove_button, account_id, link_id, self._base(account_id), utcnow())
        )

    async def reorder(self, account_id: int, link_ids: list[str]) -> BioPage:
        """Put the buttons in this order; it names every button's link id once."""
        return self._edited(
            await self.db.write(service.reorder_buttons, account_id, link_ids, self._base(account_id), utcnow())
        )

    async def move(self, account_id: int, link_id: str, step: int) -> BioPage:
        """Move one button `step` places (-1: up, 1: down); at an end it stays."""
        order = [button.link_id for button in (await self.page(account_id)).buttons]
        return await self.reorder(account_id, moved(order, link_id, step))

    async def stats(self, account_id: int, days: int = 30) -> BioStats:
        """Views per UTC day of the last `days` days (today included) and clicks per button
        that came through the page, both without bots."""
        if not 1 <= days <= MAX_STATS_DAYS:
            raise ValidationError("days", f"must be 1-{MAX_STATS_DAYS}")
        await self.flush_views()
        today = utcnow().date()
        return await self.db.read(service.stats, account_id, today - timedelta(days=days - 1), today)

    def _edited(self, result: tuple[BioPage, str]) -> BioPage:
        page, handle = result
        self._changed("@" + handle)
        return page

    def _base(self, account_id: int) -> str:
        return self.hosts.base_for_account(account_id)

    # the public page

    def public_page(self, handle: str, host: str) -> RenderedPage | None:
        """The published page of `handle` as a visitor on `host` sees it; None when there is
        none (unknown, unpublished, or another account's custom domain). No await: a cached
        page costs no database work, an uncached one a point read and a render."""
        handle = normalise_handle(handle)
        now_s = time.time()
        page = self.cache.get(handle, now_s)
        if page is ...:
            page = self._render(handle, now_s)
            self.cache.put(handle, page)
        if page is not None and not self.hosts.serves(page.account_id, host):
            return None
        return page

    def _render(self, handle: str, now_s: float) -> RenderedPage | None:
        view = self.db.read_now(service.public_view, handle, self.hosts.base_for_account, now_s)
        if view is None:
            return None
        return RenderedPage(
            page_id=view.page_id,
            account_id=view.account_id,
            url=view.url,
            body=render("bio.html", page=view).encode(),
            codes=view.codes,
            valid_until=view.valid_until,
        )

    def count_view(
        self, page: RenderedPage, ip: str, user_agent: str, ch_platform: str = "", ch_mobile: str = ""
    ) -> None:
        """One view of the page, unless a bot or link previewer made it (the clicks' rule) or
        this visitor was counted on it today already."""
        if classify(user_agent, ch_platform, ch_mobile).is_bot:
            return
        day = day_of(utcnow())
        if day != self._seen_day:
            self._seen_day, self._seen_key, self._seen = day, secrets.token_bytes(32), set()
        visitor = (page.page_id, visitor_hash(self._seen_key, ip, user_agent))
        if visitor in self._seen:
            return
        if len(self._seen) < MAX_SEEN_VISITORS:
            self._seen.add(visitor)
        self._views[(page.page_id, day)] += 1

    async def flush_views(self) -> None:
        if not self._views:
            return
        counts, self._views = self._views, Counter()
        try:
            await self.db.write(store.add_views, [(page_id, day, n) for (page_id, day), n in counts.items()])
        except Exception:
            self._views.update(counts)  # kept for the next flush
            raise

    async def start(self) -> None:
        await self._writer.start()

    async def stop(self) -> None:
        await self._writer.stop()
