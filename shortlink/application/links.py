"""Link operations for every door: create, get, list, update, delete.

A link creation, from any door: `Links.create` validates and hashes the password off
the event loop, `links.service.create_link` checks the rules and inserts on the writer
(daily limit in the same transaction), then the visitor cache forgets the code and the
title fetcher is woken.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Callable
from typing import Any

import msgspec

from shortlink import qr
from shortlink.application.hosts import Hosts
from shortlink.errors import ShortlinkError, field_error
from shortlink.links import passwords as link_passwords
from shortlink.links import service
from shortlink.links import tags as tagging
from shortlink.links.bulk import BulkActionResult, BulkItemResult, BulkLinkAction, ItemError, check_action
from shortlink.links.schema import CreateLink, Link, LinkFilter, Pagination, Source, UpdateLink
from shortlink.storage import Connection, Database, transaction
from shortlink.times import utcnow
from shortlink.webhooks import outbox


async def hash_in_thread(password: str | None) -> str | None:
    # The slow hash runs in a worker thread: neither the event loop nor the
    # database writer waits on it.
    return None if password is None else await asyncio.to_thread(link_passwords.hash_password, password)


def create_tagged(
    conn: Connection, account_id: int, body: CreateLink, tags: list[tagging.TagInput], **options: Any
) -> Link:
    """`outbox.create_link` and then the link's tags, in one transaction."""
    with transaction(conn):
        link = outbox.create_link(conn, account_id, body, **options)
        if tags:
            tagging.set_link_tags(conn, account_id, link.id, tags)
    return link


def _nothing(_code: str = "") -> None:
    return None


class Links:
    def __init__(
        self,
        *,
        db: Database,
        hosts: Hosts,
        daily_limit: int,
        fetch_titles: bool,
        changed: Callable[[str], None] = _nothing,
        fetch_wanted: Callable[[], None] = _nothing,
        blocked: frozenset[str] = frozenset(),
        events_written: Callable[[], None] = _nothing,
    ):
        """`changed(code)` runs after a link is created, changed or deleted (the visitor
        cache forgets it); `fetch_wanted()` after a link that wants its title fetched;
        `blocked`: the destination hosts no link of any door may lead to."""
        self.db, self.hosts, self.blocked = db, hosts, blocked
        self.daily_limit, self.fetch_titles = daily_limit, fetch_titles
        self._changed, self._fetch_wanted = changed, fetch_wanted
        # Every link write goes through webhooks.outbox, which adds its events (if any
        # endpoint wants them) in the same transaction; then the deliverer is woken.
        self._events_written = events_written

    def checked_tags(self, tags: builtins.list[tagging.TagInput]) -> builtins.list[tagging.TagInput]:
        """Tags as the API's rules take them (names trimmed), before anything is saved; a
        ValidationError names the field `tags`."""
        return tagging.validated(tags)

    async def create(
        self, account_id: int, body: CreateLink, source: Source, tags: builtins.list[tagging.TagInput] | None = None
    ) -> Link:
        """`tags`, when given, go on the new link in the same transaction: a refused tag
        makes no link (the dashboard's form sets them; the API sets them with PUT .../tags)."""
        if body.password is not None:
            link_passwords.validate_password(body.password)  # before the slow hash, not after
        if tags:
            tags = tagging.validated(tags)  # before the slow hash too
        link = await self.db.write(
            create_tagged,
            account_id,
            body,
            tags or [],
            is_ours=self.hosts.is_ours,
            base=self.hosts.base_for_account(account_id),
            daily_limit=self.daily_limit,
            now=utcnow(),
            password_hash=await hash_in_thread(body.password),
            fetch_title=self.fetch_titles,
            source=source,
            blocked=self.blocked,
        )
        self._changed(link.short_code)
        self._events_written()
        if self.fetch_titles and body.title is None:
            self._fetch_wanted()
        return link

    async def create_many(self, account_id: int, items: list[dict[str, Any]], source: Source) -> list[BulkItemResult]:
        """Create each item as `create` would, in order; a failed item fails only itself.
        Every created link counts against the daily limit, as single creates do."""
        results = []
        for index, item in enumerate(items):
            try:
                body = msgspec.convert(item, CreateLink)
                results.append(BulkItemResult(index, 201, data=await self.create(account_id, body, source)))
            except msgspec.ValidationError as exc:
                error = field_error(str(exc))
                results.append(BulkItemResult(index, error.status, error=ItemError(error.code, error.message)))
            except ShortlinkError as exc:
                results.append(BulkItemResult(index, exc.status, error=ItemError(exc.code, exc.message)))
        return results

    async def act_on_many(self, account_id: int, body: BulkLinkAction) -> list[BulkActionResult]:
        """Pause, resume, delete, tag or untag each link as its single request would, in
        order; a link that fails (not found, too many tags) fails only itself."""
        check_action(body)
        results = []
        for index, link_id in enumerate(body.ids):
            try:
                await self._act(account_id, body, link_id)
                results.append(BulkActionResult(index, link_id, 200))
            except ShortlinkError as exc:
                results.append(BulkActionResult(index, link_id, exc.status, ItemError(exc.code, exc.message)))
        return results

    async def _act(self, account_id: int, body: BulkLinkAction, link_id: str) -> None:
        if body.action == "delete":
            await self.delete(account_id, link_id)
        elif body.action in ("pause", "resume"):
            await self.update(account_id, link_id, UpdateLink(is_active=body.action == "resume"))
        elif body.action == "tag":
            await self.db.write(tagging.add_link_tags, account_id, link_id, body.tags or [])
        else:
            names = [tag.name for tag in body.tags or []]
            await self.db.write(tagging.remove_link_tags, account_id, link_id, names)

    async def get(self, account_id: int, link_id: str) -> Link:
        return await self.db.read(service.get_link, account_id, link_id, self.hosts.base_for_account(account_id))

    async def list(self, account_id: int, query: LinkFilter) -> tuple[list[Link], Pagination]:
        return await self.db.read(service.list_links, account_id, query, self.hosts.base_for_account(account_id))

    async def list_with_tags(
        self, account_id: int, query: LinkFilter
    ) -> tuple[builtins.list[Link], Pagination, dict[str, builtins.list[tagging.Tag]]]:
        """`list` and each listed link's tags, by link id."""
        base = self.hosts.base_for_account(account_id)
        return await self.db.read(tagging.list_links_with_tags, account_id, query, base)

    async def update(self, account_id: int, link_id: str, patch: UpdateLink) -> Link:
        password = patch.password if isinstance(patch.password, str) else None
        if password is not None:
            link_passwords.validate_password(password)
        link, code = await self.db.write(
            outbox.update_link,
            account_id,
            link_id,
            patch,
            base=self.hosts.base_for_account(account_id),
            now=utcnow(),
            password_hash=await hash_in_thread(password),
        )
        self._changed(code)
        self._events_written()
        return link

    async def delete(self, account_id: int, link_id: str) -> None:
        code = await self.db.write(
            outbox.delete_link, account_id, link_id, base=self.hosts.base_for_account(account_id), now=utcnow()
        )
        self._changed(code)
        self._events_written()

    async def tags(self, account_id: int, link_id: str) -> tagging.LinkTags:
        return await self.db.read(tagging.link_tags, account_id, link_id)

    async def set_tags(self, account_id: int, link_id: str, body: tagging.SetTags) -> tagging.LinkTags:
        return await self.db.write(tagging.set_link_tags, account_id, link_id, body.tags)

    async def account_tags(self, account_id: int) -> builtins.list[tagging.Tag]:
        return await self.db.read(tagging.account_tags, account_id)

    async def qr_code(self, account_id: int, link_id: str, options: qr.QrOptions) -> qr.QrImage:
        """The QR code of the link's short URL (its custom domain's, when connected)."""
        link = await self.get(account_id, link_id)
        return qr.render(link.short_url, options)

    def created_today(self, account_id: int) -> int:
        """One primary-key read, at once on the calling thread like the key lookup before it:
        under full redirect load a hop to a reader thread and back cost /me most of its time."""
        return self.db.read_now(service.created_today, account_id, utcnow())
