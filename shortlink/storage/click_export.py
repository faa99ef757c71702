"""SQL for the raw clicks export: an account's clicks in a range, a page at a time."""

from __future__ import annotations

from shortlink.storage.base import Connection, Row


def clicks_page(
    conn: Connection, account_id: int, start_ms: int, end_ms: int, after: tuple[int, int], limit: int
) -> list[Row]:
    """Up to `limit` clicks of the account with `start_ms <= ts < end_ms`, in (ts, id) order
    after the (ts, id) pair `after`, each with its link's code: keyset pages over the
    (account_id, ts) index, so the millionth row costs what the first did."""
    after_ts, after_id = after
    return conn.execute(
        "SELECT c.id, c.ts, l.short_code, c.device, c.browser, c.os, c.country, c.referrer, c.campaign,"
        " c.user_agent, c.visitor, c.is_bot FROM clicks c JOIN links l ON l.id = c.link_id"
        " WHERE c.account_id = ? AND c.ts >= ? AND c.ts < ? AND (c.ts > ? OR (c.ts = ? AND c.id > ?))"
        " ORDER BY c.ts, c.id LIMIT ?",
        (account_id, max(start_ms, after_ts), end_ms, after_ts, after_ts, after_id, limit),
    ).fetchall()
