"""SQL for bio pages: the page, its buttons (links of the account, in order), daily views."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from shortlink.storage.base import Connection, Row, on_postgres, transaction

REFERRER_DIMENSION = 5  # link_dimensions.dimension of the referrer label (storage.clicks.DIMENSIONS)


class HandleTaken(Exception):
    """Another account's page has this handle."""


def page_of_account(conn: Connection, account_id: int) -> Row | None:
    return conn.execute("SELECT * FROM bio_pages WHERE account_id = ?", (account_id,)).fetchone()


def page_by_handle(conn: Connection, handle: str) -> Row | None:
    return conn.execute("SELECT * FROM bio_pages WHERE handle = ?", (handle,)).fetchone()


def save_page(conn: Connection, account_id: int, fields: dict[str, Any], now_iso: str) -> Row:
    """Create the account's page or change it; raises HandleTaken (the UNIQUE index decides)."""
    with transaction(conn):
        try:
            conn.execute(
                "INSERT INTO bio_pages (account_id, handle, title, description, is_published, created_at, updated_at)"
                " VALUES (:account_id, :handle, :title, :description, :is_published, :now, :now)"
                " ON CONFLICT (account_id) DO UPDATE SET handle = excluded.handle, title = excluded.title,"
                " description = excluded.description, is_published = excluded.is_published, updated_at = :now",
                {**fields, "account_id": account_id, "now": now_iso},
            )
        except conn.IntegrityError as exc:
            if "handle" in str(exc):
                raise HandleTaken from None
            raise
    row = page_of_account(conn, account_id)
    assert row is not None, "a page just written is missing"
    return row


def delete_page(conn: Connection, page_id: int) -> None:
    """The page, its buttons and its view counts go together (ON DELETE CASCADE)."""
    with transaction(conn):
        conn.execute("DELETE FROM bio_pages WHERE id = ?", (page_id,))


def buttons(conn: Connection, page_id: int) -> list[Row]:
    """The page's buttons in order, each with its link's columns."""
    return conn.execute(
        "SELECT b.position, b.label AS button_label, b.is_hidden, l.* FROM bio_buttons b"
        " JOIN links l ON l.id = b.link_id WHERE b.page_id = ? ORDER BY b.position",
        (page_id,),
    ).fetchall()


def add_button(conn: Connection, page_id: int, link_pk: int, label: str | None) -> None:
    """Append a button after the last one; raises the connection's IntegrityError when the link
    already has one."""
    with transaction(conn):
        conn.execute(
            "INSERT INTO bio_buttons (page_id, link_id, position, label)"
            " VALUES (?, ?, (SELECT coalesce(max(position), -1) + 1 FROM bio_buttons WHERE page_id = ?), ?)",
            (page_id, link_pk, page_id, label),
        )


def update_button(conn: Connection, page_id: int, link_pk: int, changes: dict[str, Any]) -> bool:
    """Change a button's label or hidden flag; False when the link has no button."""
    assignments = ", ".join(f"{column} = ?" for column in changes)
    with transaction(conn):
        cursor = conn.execute(
            f"UPDATE bio_buttons SET {assignments} WHERE page_id = ? AND link_id = ?",
            (*changes.values(), page_id, link_pk),
        )
    return cursor.rowcount == 1


def remove_button(conn: Connection, page_id: int, link_pk: int) -> bool:
    with transaction(conn):
        cursor = conn.execute("DELETE FROM bio_buttons WHERE page_id = ? AND link_id = ?", (page_id, link_pk))
    return cursor.rowcount == 1


def reorder_buttons(conn: Connection, page_id: int, link_pks: list[int]) -> None:
    """Positions 0, 1, 2… in the order given (which holds every button of the page)."""
    with transaction(conn):
        conn.executemany(
            "UPDATE bio_buttons SET position = ? WHERE page_id = ? AND link_id = ?",
            [(position, page_id, link_pk) for position, link_pk in enumerate(link_pks)],
        )


def add_views(conn: Connection, counts: Iterable[tuple[int, str, int]]) -> None:
    """Add (page id, day, views) counts; pages deleted meanwhile are skipped."""
    with transaction(conn):
        conn.executemany(
            "INSERT INTO bio_page_days (page_id, day, views) SELECT ?, ?, ?"
            " WHERE EXISTS (SELECT 1 FROM bio_pages WHERE id = ?)"
            " ON CONFLICT (page_id, day) DO UPDATE SET views = bio_page_days.views + excluded.views",
            [(page_id, day, views, page_id) for page_id, day, views in counts],
        )


def views_by_day(conn: Connection, page_id: int, first_day: str, last_day: str) -> dict[str, int]:
    rows = conn.execute(
        "SELECT day, views FROM bio_page_days WHERE page_id = ? AND day BETWEEN ? AND ?",
        (page_id, first_day, last_day),
    )
    return dict(rows.fetchall())


def clicks_from_page(conn: Connection, page_id: int, handle: str, first_day: str, last_day: str) -> dict[int, int]:
    """Human clicks per button link whose referrer label is this page ("<host>/@<handle>", any
    host of ours), from the daily rollups."""
    if on_postgres(conn):  # a handle may hold "_", LIKE's one-character wildcard
        ends_with, pattern = "LIKE ? ESCAPE '\\'", "%/@" + handle.replace("_", "\\_")
    else:
        ends_with, pattern = "GLOB ?", f"*/@{handle}"
    rows = conn.execute(
        "SELECT d.link_id, sum(d.clicks) FROM bio_buttons b JOIN link_dimensions d ON d.link_id = b.link_id"
        f" WHERE b.page_id = ? AND d.dimension = ? AND d.day BETWEEN ? AND ? AND d.value {ends_with}"
        " GROUP BY d.link_id",
        (page_id, REFERRER_DIMENSION, first_day, last_day, pattern),
    )
    return dict(rows.fetchall())
