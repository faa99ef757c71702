"""SQL for dashboard passwords and sessions."""

from __future__ import annotations

from shortlink.storage.base import Connection, Row


def set_password_hash(conn: Connection, account_id: int, password_hash: str) -> None:
    conn.execute("UPDATE accounts SET password_hash = ? WHERE id = ?", (password_hash, account_id))


def hold_password_hash(conn: Connection, account_id: int, password_hash: str) -> bool:
    """Whether the account's password hash is still `password_hash`, its row then locked
    until the transaction ends (a no-op UPDATE locks on both backends, where PostgreSQL's
    plain SELECT would not), so that a password change waits for the session being made
    and then ends it."""
    cursor = conn.execute(
        "UPDATE accounts SET password_hash = password_hash WHERE id = ? AND password_hash = ?",
        (account_id, password_hash),
    )
    return cursor.rowcount == 1


def insert_session(conn: Connection, token_hash: str, account_id: int, now_ms: int) -> None:
    conn.execute(
        "INSERT INTO dashboard_sessions (token_hash, account_id, created_ms, seen_ms) VALUES (?, ?, ?, ?)",
        (token_hash, account_id, now_ms, now_ms),
    )


def session_by_token_hash(conn: Connection, token_hash: str) -> Row | None:
    """The session, its account and subscription."""
    return conn.execute(
        """
        SELECT s.id AS session_id, s.token_hash, s.created_ms, s.seen_ms,
               a.id AS account_id, a.public_id AS account_public_id, a.email, a.name,
               coalesce(sub.is_active, 0) AS subscription_active
        FROM dashboard_sessions s
        JOIN accounts a ON a.id = s.account_id
        LEFT JOIN subscriptions sub ON sub.account_id = a.id
        WHERE s.token_hash = ?
        """,
        (token_hash,),
    ).fetchone()


def touch_session(conn: Connection, session_id: int, now_ms: int) -> None:
    conn.execute("UPDATE dashboard_sessions SET seen_ms = ? WHERE id = ?", (now_ms, session_id))


def delete_session(conn: Connection, token_hash: str) -> None:
    conn.execute("DELETE FROM dashboard_sessions WHERE token_hash = ?", (token_hash,))


def delete_sessions_of(conn: Connection, account_id: int) -> None:
    conn.execute("DELETE FROM dashboard_sessions WHERE account_id = ?", (account_id,))


def delete_sessions_before(conn: Connection, created_before_ms: int, seen_before_ms: int) -> int:
    """Sessions past their absolute or idle expiry."""
    cursor = conn.execute(
        "DELETE FROM dashboard_sessions WHERE created_ms < ? OR seen_ms < ?", (created_before_ms, seen_before_ms)
    )
    return cursor.rowcount
