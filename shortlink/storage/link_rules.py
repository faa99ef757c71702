"""SQL for link rules (migration 0012): one JSON document per link that has rules."""

from __future__ import annotations

from shortlink.storage.base import Connection, transaction


def document_of(conn: Connection, link_pk: int) -> str | None:
    row = conn.execute("SELECT document FROM link_rules WHERE link_id = ?", (link_pk,)).fetchone()
    return None if row is None else row[0]


def replace_document(conn: Connection, account_id: int, link_pk: int, document: str | None, now: str) -> None:
    """The link's document from now on; None removes it (and its count of capped clicks).
    A changed document keeps the human clicks already counted against maxClicks."""
    with transaction(conn):
        if document is None:
            conn.execute("DELETE FROM link_rules WHERE link_id = ?", (link_pk,))
            return
        conn.execute(
            "INSERT INTO link_rules (link_id, account_id, document, updated_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (link_id) DO UPDATE SET document = excluded.document, updated_at = excluded.updated_at",
            (link_pk, account_id, document, now),
        )


def rule_days(conn: Connection, link_pk: int, first_day: str, last_day: str) -> list[tuple[int, int, str, int, int]]:
    """(rule, variant, day, clicks, unique visitors) of the link's rollups in the days given,
    by rule, variant and day."""
    rows = conn.execute(
        "SELECT d.rule, d.variant, d.day, d.clicks,"
        " (SELECT count(*) FROM link_rule_visitors AS v WHERE v.link_id = d.link_id AND v.day = d.day"
        "  AND v.rule = d.rule AND v.variant = d.variant)"
        " FROM link_rule_days AS d WHERE d.link_id = ? AND d.day BETWEEN ? AND ? ORDER BY d.rule, d.variant, d.day",
        (link_pk, first_day, last_day),
    )
    return [tuple(row) for row in rows]


def add_destination(conn: Connection, link_pk: int, at: str, url: str | None, door: str) -> None:
    """One change of where the link sends everyone (migration 0020); None: back to its originalUrl."""
    conn.execute("INSERT INTO link_destinations (link_id, at, url, door) VALUES (?, ?, ?, ?)", (link_pk, at, url, door))


def destinations_of(conn: Connection, link_pk: int) -> list[tuple[str, str | None, str]]:
    """(at, url, door) of every change of the link's destination, newest first."""
    rows = conn.execute("SELECT at, url, door FROM link_destinations WHERE link_id = ? ORDER BY id DESC", (link_pk,))
    return [tuple(row) for row in rows]


def documents_of_links(conn: Connection, account_id: int, public_ids: list[str]) -> list[tuple[str, str]]:
    """(public id, document) of those of the account's links that have a rules document."""
    if not public_ids:
        return []
    marks = ", ".join("?" * len(public_ids))
    rows = conn.execute(
        "SELECT l.public_id, r.document FROM link_rules AS r JOIN links AS l ON l.id = r.link_id"
        f" WHERE r.account_id = ? AND l.public_id IN ({marks})",
        (account_id, *public_ids),
    )
    return [tuple(row) for row in rows]
