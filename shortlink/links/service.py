"""Creating, listing, changing and deleting links: the rules, in plain functions.

Each function takes the SQLite connection first, so the application layer
(`shortlink.application.links`) runs it in one `Database.write` or `Database.read` call, and
tests call it directly.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime, timedelta

from msgspec import UNSET

from shortlink.errors import ConflictError, NotFoundError, RateLimitedError, ValidationError
from shortlink.ids import new_id
from shortlink.links import passwords as link_passwords
from shortlink.links import public, validation
from shortlink.links.platforms import Platform, detect_platform
from shortlink.links.schema import CreateLink, Link, LinkFilter, Pagination, Source, UpdateLink
from shortlink.storage import Connection, Row
from shortlink.storage import links as store
from shortlink.times import day_of, to_iso

RANDOM_CODE_ATTEMPTS = 8


def to_link(row: Row, base: str) -> Link:
    return Link(
        id=row["public_id"],
        short_code=row["short_code"],
        short_url=f"{base}/l/{row['short_code']}",
        original_url=row["original_url"],
        platform=Platform(row["platform"]),
        title=row["title"],
        description=row["description"],
        og_image=row["og_image"],
        ios_url=row["ios_url"],
        android_url=row["android_url"],
        is_active=bool(row["is_active"]),
        is_password_protected=row["password_hash"] is not None,
        expires_at=row["expires_at"],
        click_count=row["click_count"],
        source=row["source"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def create_link(
    conn: Connection,
    account_id: int,
    body: CreateLink,
    *,
    is_ours: Callable[[str], bool],
    base: str,
    daily_limit: int,
    now: datetime,
    password_hash: str | None = None,
    fetch_title: bool = True,
    source: Source | None = "API",
    blocked: frozenset[str] = frozenset(),
) -> Link:
    """Validate and store a new link. The password arrives already hashed (the
    slow hash runs off the database thread). `is_ours` tells the service's own hosts,
    `base` is the short URL base the account's links show, `blocked` the operator's
    blocklist (links.public.blocked_hosts), which every door honours."""
    check_new_link(body, is_ours, blocked)
    expires_at = (
        to_iso(validation.parse_future_time("expiresAt", body.expires_at, now)) if body.expires_at is not None else None
    )
    stamp = to_iso(now)
    row = {
        "public_id": new_id("lnk"),
        "account_id": account_id,
        "short_code": "",
        "original_url": body.original_url,
        "platform": detect_platform(body.original_url, is_ours).value,
        "title": body.title,
        "description": body.description,
        "ios_url": body.ios_url,
        "android_url": body.android_url,
        "password_hash": password_hash,
        "expires_at": expires_at,
        "source": source,
        "created_at": stamp,
        "updated_at": stamp,
    }
    fetch_at = int(now.timestamp() * 1000) if fetch_title and body.title is None else None
    codes = [body.custom_code] if body.custom_code else [validation.random_code() for _ in range(RANDOM_CODE_ATTEMPTS)]
    for code in codes:
        try:
            inserted = store.insert_link(conn, {**row, "short_code": code}, day_of(now), daily_limit, fetch_at)
            return to_link(inserted, base)
        except store.CodeTaken:
            continue
        except store.DailyLimitReached:
            midnight = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), now.tzinfo)
            raise RateLimitedError(
                f"Daily limit of {daily_limit} new links reached; it resets at 00:00 UTC",
                retry_after=math.ceil((midnight - now).total_seconds()),
            ) from None
    if body.custom_code:
        raise ConflictError(f"customCode '{body.custom_code}' is already taken")
    raise ConflictError("Could not find a free short code; please retry")


def check_new_link(body: CreateLink, is_ours: Callable[[str], bool], blocked: frozenset[str] = frozenset()) -> None:
    """The rules a new link must meet, but for its expiry (which depends on the moment):
    `create_link` checks them, and an import's dry run without writing."""
    if body.custom_code is not None:
        validation.validate_custom_code(body.custom_code)
    for field, url in (("originalUrl", body.original_url), ("iosUrl", body.ios_url), ("androidUrl", body.android_url)):
        if url is not None:
            validation.validate_url(field, url)
            public.refuse_blocked(field, url, blocked)
            if body.custom_code is not None:  # a random code is new: nothing can point at it yet
                validation.refuse_link_to_itself(field, url, is_ours, body.custom_code)
    if body.title is not None:
        validation.validate_title(body.title)
    if body.description is not None:
        validation.validate_description(body.description)
    if body.password is not None:
        link_passwords.validate_password(body.password)


def get_link(conn: Connection, account_id: int, link_id: str, base: str) -> Link:
    return to_link(owned_row(conn, account_id, link_id), base)


def owner_of(conn: Connection, link_id: str) -> int:
    """The account a link belongs to, for operators (the CLI), who act for every account."""
    account_id = store.account_of_link(conn, link_id)
    if account_id is None:
        raise NotFoundError(f"No link with id {link_id}")
    return account_id


def owned_row(conn: Connection, account_id: int, link_id: str) -> Row:
    row = store.link_of_account(conn, account_id, link_id)
    if row is None:
        raise NotFoundError(f"No link with id {link_id} in this account")
    return row


def list_links(conn: Connection, account_id: int, query: LinkFilter, base: str) -> tuple[list[Link], Pagination]:
    rows, pagination = list_link_rows(conn, account_id, query)
    return [to_link(row, base) for row in rows], pagination


def list_link_rows(conn: Connection, account_id: int, query: LinkFilter) -> tuple[list[Row], Pagination]:
    """One page of the account's links as stored rows (`list_links` before `to_link`)."""
    rows, total = store.list_links(
        conn,
        account_id,
        offset=(query.page - 1) * query.limit,
        limit=query.limit,
        search=query.search,
        short_code=query.short_code,
        platform=query.platform.value if query.platform else None,
        is_active=query.is_active,
        source=query.source,
        tag=query.tag,
        order=query.sort,
    )
    pages = math.ceil(total / query.limit)
    return rows, Pagination(query.page, query.limit, total, pages)


def update_link(
    conn: Connection,
    account_id: int,
    link_id: str,
    patch: UpdateLink,
    *,
    base: str,
    now: datetime,
    password_hash: str | None = None,
) -> tuple[Link, str]:
    """Apply a PATCH; returns the link and its short code (for cache invalidation)."""
    row = owned_row(conn, account_id, link_id)
    changes: dict[str, object] = {}
    if patch.title is not UNSET:
        changes["title"] = validation.validate_title(patch.title)
    if patch.is_active is not UNSET:
        changes["is_active"] = int(patch.is_active)
    if patch.expires_at is not UNSET:
        changes["expires_at"] = (
            None
            if patch.expires_at is None
            else to_iso(validation.parse_future_time("expiresAt", patch.expires_at, now))
        )
    if patch.password is not UNSET:
        if patch.password is not None:
            link_passwords.validate_password(patch.password)
        changes["password_hash"] = None if patch.password is None else password_hash
    if not changes:
        raise ValidationError("body", "send at least one of title, isActive, expiresAt, password")
    changes["updated_at"] = to_iso(max(now, _later_than(row["updated_at"])))
    updated = store.update_link(conn, row["id"], changes)
    return to_link(updated, base), row["short_code"]


def _later_than(stamp: str) -> datetime:
    # updatedAt must change on every PATCH, even two within one millisecond.
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")) + timedelta(milliseconds=1)


def delete_link(conn: Connection, account_id: int, link_id: str) -> str:
    """Delete the link with its clicks and rollups; returns its short code."""
    row = owned_row(conn, account_id, link_id)
    store.delete_link(conn, row["id"])
    return row["short_code"]


def created_today(conn: Connection, account_id: int, now: datetime) -> int:
    return store.links_created_on(conn, account_id, day_of(now))
