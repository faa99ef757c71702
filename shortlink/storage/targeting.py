"""SQL for link rules (migration 0012): one JSON document per link that has rules."""

from __future__ import annotations

from shortlink.storage.base import Connection, transaction


def document_of(conn: Connection, link_id: int) -> str | None:
    row = conn.execute("SELECT document FROM link_rules WHERE link_id = ?", (link_id,)).fetchone()
    return None if row is None else row[0]


def replace_document(conn: Connection, link_id: int, account_id: int, document: str | None, now: str) -> None:
    """The link's document from now on; None removes it (and its count of capped clicks).
    A changed document keeps the human clicks already counted against maxClicks."""
    with transaction(conn):
        if document is None:
            conn.execute("DELETE FROM link_rules WHERE link_id = ?", (link_id,))
            return
        conn.execute(
            "INSERT INTO link_rules (link_id, account_id, document, updated_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (link_id) DO UPDATE SET document = excluded.document, updated_at = excluded.updated_at",
            (link_id, account_id, document, now),
        )
