"""SQL for pending title fetches: claim the due ones, save a result, record a failure."""

from __future__ import annotations

from typing import NamedTuple

from shortlink.storage.base import Connection, on_postgres, transaction


class DueFetch(NamedTuple):
    link_pk: int  # links.id
    public_id: str  # the API's id (lnk_...), for messages an operator can follow up
    url: str
    attempts: int  # made so far


def claim_due(conn: Connection, now_ms: int, limit: int, lease_ms: int) -> tuple[list[DueFetch], int | None]:
    """Up to `limit` due fetches, each pushed `lease_ms` into the
    future so it is not handed out twice while in flight (and is retried after
    the lease if the process dies mid-fetch). Also returns when the next of
    the remaining rows falls due (Unix ms), or None when none remain."""
    with transaction(conn):
        rows = conn.execute(
            "SELECT p.link_id, l.public_id, l.original_url, p.attempts"
            " FROM pending_fetches p JOIN links l ON l.id = p.link_id"
            " WHERE p.next_attempt_at <= ? ORDER BY p.next_attempt_at, p.link_id LIMIT ?"
            # Other processes claim at the same time on PostgreSQL: each takes other rows.
            + (" FOR UPDATE OF p SKIP LOCKED" if on_postgres(conn) else ""),
            (now_ms, limit),
        ).fetchall()
        conn.executemany(
            "UPDATE pending_fetches SET next_attempt_at = ? WHERE link_id = ?",
            [(now_ms + lease_ms, row[0]) for row in rows],
        )
        next_due = conn.execute("SELECT min(next_attempt_at) FROM pending_fetches").fetchone()[0]
    return [DueFetch(*row) for row in rows], next_due


def save_preview(
    conn: Connection, link_pk: int, title: str | None, description: str | None, og_image: str | None
) -> str | None:
    """Fill what is still empty (a title set by the client, at creation or by a PATCH
    that raced the fetch, is kept) and drop the pending row. Returns the short code,
    or None when the link was deleted meanwhile."""
    with transaction(conn):
        row = conn.execute(
            "UPDATE links SET title = COALESCE(title, ?), description = COALESCE(description, ?),"
            " og_image = COALESCE(og_image, ?) WHERE id = ? RETURNING short_code",
            (title, description, og_image, link_pk),
        ).fetchone()
        conn.execute("DELETE FROM pending_fetches WHERE link_id = ?", (link_pk,))
    return row[0] if row else None


def record_failure(
    conn: Connection, link_pk: int, error: str, *, retry_at_ms: int | None, max_attempts: int
) -> int | None:
    """Count a failed attempt; the row is removed once `max_attempts` are spent or when
    `retry_at_ms` is None (not worth retrying). Returns the attempts made, or None when
    the link is gone."""
    with transaction(conn):
        row = conn.execute(
            "UPDATE pending_fetches SET attempts = attempts + 1, last_error = ?, next_attempt_at = ?"
            " WHERE link_id = ? RETURNING attempts",
            (error, retry_at_ms or 0, link_pk),
        ).fetchone()
        if row is not None and (retry_at_ms is None or row[0] >= max_attempts):
            conn.execute("DELETE FROM pending_fetches WHERE link_id = ?", (link_pk,))
    return None if row is None else row[0]


def release(conn: Connection, link_pks: list[int], now_ms: int) -> None:
    """Fetches interrupted by shutdown are due again at once (on the next start)."""
    with transaction(conn):
        conn.executemany(
            "UPDATE pending_fetches SET next_attempt_at = ? WHERE link_id = ?",
            [(now_ms, link_pk) for link_pk in link_pks],
        )
