"""Bio pages: the rules of editing one, reading it for the public, and its figures.

Each function takes the SQLite connection first (as `links.service` does), so the
application layer (`shortlink.application.bio`) runs it in one `Database.write` or `read`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, timedelta
from urllib.parse import urlsplit

import msgspec
from msgspec import UNSET, UnsetType

from shortlink.bio import validation
from shortlink.bio.schema import BioButton, BioPage, BioStats, ButtonClicks, DayViews, SavePage
from shortlink.errors import ConflictError, NotFoundError, ValidationError
from shortlink.storage import Connection, Row
from shortlink.storage import bio as store
from shortlink.storage import links as link_store
from shortlink.times import from_iso, to_iso


class PublicView(msgspec.Struct, frozen=True):
    """What the public page shows, read in one go; rendered once and cached."""

    account_id: int
    page_id: int
    handle: str
    title: str
    description: str
    url: str
    buttons: list[tuple[str, str]]  # (short URL, label) of the buttons shown, in order
    codes: frozenset[str]  # short codes of every button: a change to any of them changes the page
    valid_until: float | None  # Unix seconds when a shown link expires (the page changes then)


def page_url(base: str, handle: str) -> str:
    return f"{base}/@{handle}"


def _label(row: Row) -> str:
    return row["button_label"] or row["title"] or urlsplit(row["original_url"]).hostname or row["original_url"]


def _expires(row: Row) -> float | None:
    return from_iso(row["expires_at"]).timestamp() if row["expires_at"] else None


def _is_shown(row: Row, now_s: float) -> bool:
    expires = _expires(row)
    return not row["is_hidden"] and bool(row["is_active"]) and (expires is None or now_s < expires)


def _to_button(row: Row, base: str, now_s: float) -> BioButton:
    return BioButton(
        link_id=row["public_id"],
        short_code=row["short_code"],
        short_url=f"{base}/l/{row['short_code']}",
        label=_label(row),
        custom_label=row["button_label"],
        is_hidden=bool(row["is_hidden"]),
        is_shown=_is_shown(row, now_s),
    )


def _to_page(conn: Connection, page: Row, base: str, now: datetime) -> BioPage:
    return BioPage(
        handle=page["handle"],
        title=page["title"],
        description=page["description"],
        is_published=bool(page["is_published"]),
        url=page_url(base, page["handle"]),
        buttons=[_to_button(row, base, now.timestamp()) for row in store.buttons(conn, page["id"])],
        created_at=page["created_at"],
        updated_at=page["updated_at"],
    )


def _own_page(conn: Connection, account_id: int) -> Row:
    page = store.page_of_account(conn, account_id)
    if page is None:
        raise NotFoundError("This account has no bio page yet")
    return page


def _own_link(conn: Connection, account_id: int, link_id: str) -> Row:
    link = link_store.link_of_account(conn, account_id, link_id)
    if link is None:
        raise NotFoundError(f"No link with id {link_id} in this account")
    return link


def get_page(conn: Connection, account_id: int, base: str, now: datetime) -> BioPage:
    return _to_page(conn, _own_page(conn, account_id), base, now)


def save_page(
    conn: Connection, account_id: int, body: SavePage, base: str, now: datetime
) -> tuple[BioPage, str | None]:
    """Create or change the account's page; returns it and the handle it had before (None if new)."""
    fields = {
        "handle": validation.validate_handle(body.handle),
        "title": validation.validate_title(body.title),
        "description": validation.validate_description(body.description),
        "is_published": int(body.is_published),
    }
    before = store.page_of_account(conn, account_id)
    try:
        page = store.save_page(conn, account_id, fields, to_iso(now))
    except store.HandleTaken:
        raise ConflictError(f"handle '{fields['handle']}' is already taken") from None
    return _to_page(conn, page, base, now), None if before is None else before["handle"]


def delete_page(conn: Connection, account_id: int) -> str:
    """Delete the page; returns its handle."""
    page = _own_page(conn, account_id)
    store.delete_page(conn, page["id"])
    return page["handle"]


def add_button(
    conn: Connection, account_id: int, link_id: str, label: str | None, base: str, now: datetime
) -> tuple[BioPage, str]:
    """Put an existing link of the account on its page, last; returns the page and its handle."""
    page = _own_page(conn, account_id)
    link = _own_link(conn, account_id, link_id)
    label = validation.validate_label(label)
    current = store.buttons(conn, page["id"])
    if any(row["id"] == link["id"] for row in current):
        raise ValidationError("linkId", f"link {link_id} is already on the page")
    validation.refuse_full_page(len(current))
    store.add_button(conn, page["id"], link["id"], label)
    return _to_page(conn, page, base, now), page["handle"]


def update_button(
    conn: Connection,
    account_id: int,
    link_id: str,
    base: str,
    now: datetime,
    *,
    label: str | UnsetType | None = UNSET,
    is_hidden: bool | UnsetType = UNSET,
) -> tuple[BioPage, str]:
    """Change a button's label (None: the link's title) or hide or show it."""
    page = _own_page(conn, account_id)
    link = _own_link(conn, account_id, link_id)
    changes: dict[str, object] = {}
    if label is not UNSET:
        changes["label"] = validation.validate_label(label)
    if is_hidden is not UNSET:
        changes["is_hidden"] = int(is_hidden)
    if not changes:
        raise ValidationError("body", "send at least one of label, isHidden")
    if not store.update_button(conn, page["id"], link["id"], changes):
        raise NotFoundError(f"Link {link_id} is not on the page")
    return _to_page(conn, page, base, now), page["handle"]


def remove_button(conn: Connection, account_id: int, link_id: str, base: str, now: datetime) -> tuple[BioPage, str]:
    """Take a link off the page (the link itself stays)."""
    page = _own_page(conn, account_id)
    link = _own_link(conn, account_id, link_id)
    if not store.remove_button(conn, page["id"], link["id"]):
        raise NotFoundError(f"Link {link_id} is not on the page")
    return _to_page(conn, page, base, now), page["handle"]


def reorder_buttons(
    conn: Connection, account_id: int, link_ids: list[str], base: str, now: datetime
) -> tuple[BioPage, str]:
    """Put the buttons in the order of `link_ids`, which names each of them once."""
    page = _own_page(conn, account_id)
    rows = store.buttons(conn, page["id"])
    validation.validate_order([row["public_id"] for row in rows], link_ids)
    internal = {row["public_id"]: row["id"] for row in rows}
    store.reorder_buttons(conn, page["id"], [internal[link_id] for link_id in link_ids])
    return _to_page(conn, page, base, now), page["handle"]


def public_view(
    conn: Connection, handle: str, base_for_account: Callable[[int], str], now_s: float
) -> PublicView | None:
    """The published page with this handle, with the buttons a visitor may see now; None when
    there is no such published page. `base_for_account(account_id)` gives its short URL base."""
    page = store.page_by_handle(conn, handle)
    if page is None or not page["is_published"]:
        return None
    base = base_for_account(page["account_id"])
    rows = store.buttons(conn, page["id"])
    shown = [row for row in rows if _is_shown(row, now_s)]
    expiries = [expires for row in shown if (expires := _expires(row)) is not None]
    return PublicView(
        account_id=page["account_id"],
        page_id=page["id"],
        handle=page["handle"],
        title=page["title"],
        description=page["description"],
        url=page_url(base, page["handle"]),
        buttons=[(f"{base}/l/{row['short_code']}", _label(row)) for row in shown],
        codes=frozenset(row["short_code"] for row in rows),
        valid_until=min(expiries, default=None),
    )


def stats(conn: Connection, account_id: int, first_day: date, last_day: date) -> BioStats:
    """Views per day (zeros included) and clicks per button that came through the page."""
    page = _own_page(conn, account_id)
    first, last = first_day.isoformat(), last_day.isoformat()
    views = store.views_by_day(conn, page["id"], first, last)
    days = [(first_day + timedelta(days=n)).isoformat() for n in range((last_day - first_day).days + 1)]
    clicks = store.clicks_from_page(conn, page["id"], page["handle"], first, last)
    return BioStats(
        views_by_day=[DayViews(day, views.get(day, 0)) for day in days],
        total_views=sum(views.values()),
        buttons=[
            ButtonClicks(row["public_id"], row["short_code"], _label(row), clicks.get(row["id"], 0))
            for row in store.buttons(conn, page["id"])
        ],
    )
