"""SQL for the domains accounts connect themselves: their verification state and redirects.

The operator's `shortlink domain add` (storage.accounts.insert_domain) writes the same table."""

from __future__ import annotations

from shortlink.storage.base import Connection, Row, transaction

COLUMNS = (
    "public_id, host, token, created_at, verified_at, seen_at, check_at, checked_at, check_error,"
    " root_redirect, not_found_redirect"
)


def claim(
    conn: Connection, host: str, account_id: int, public_id: str, token: str, created_at: str, stale_before: str
) -> Row | None:
    """Add `host` to the account, unverified. None when another account holds it, verified or
    claimed since `stale_before`; an older unverified claim of another account gives way (it
    never proved anything). The account's own existing row when it already has the host."""
    with transaction(conn):
        held = conn.execute(
            "SELECT account_id, verified_at, created_at FROM domains WHERE host = ?", (host,)
        ).fetchone()
        if held is not None:
            if held["account_id"] == account_id:
                return conn.execute(f"SELECT {COLUMNS} FROM domains WHERE host = ?", (host,)).fetchone()
            if held["verified_at"] is not None or held["created_at"] >= stale_before:
                return None
            conn.execute("DELETE FROM domains WHERE host = ?", (host,))
        conn.execute(
            "INSERT INTO domains (host, account_id, created_at, public_id, token, check_at) VALUES (?, ?, ?, ?, ?, ?)",
            (host, account_id, created_at, public_id, token, created_at),
        )
        return conn.execute(f"SELECT {COLUMNS} FROM domains WHERE host = ?", (host,)).fetchone()


def of_account(conn: Connection, account_id: int) -> list[Row]:
    return conn.execute(
        f"SELECT {COLUMNS} FROM domains WHERE account_id = ? ORDER BY created_at, host", (account_id,)
    ).fetchall()


def one(conn: Connection, account_id: int, public_id: str) -> Row | None:
    return conn.execute(
        f"SELECT {COLUMNS} FROM domains WHERE account_id = ? AND public_id = ?", (account_id, public_id)
    ).fetchone()


def find(conn: Connection, host: str, public_id: str) -> Row | None:
    """The domain whose host is `host` or whose id is `public_id`, of any account, with its
    `account_id`: the operator's commands name a domain either way."""
    return conn.execute(
        f"SELECT account_id, {COLUMNS} FROM domains WHERE host = ? OR public_id = ?", (host, public_id)
    ).fetchone()


def delete(conn: Connection, account_id: int, public_id: str) -> bool:
    cursor = conn.execute("DELETE FROM domains WHERE account_id = ? AND public_id = ?", (account_id, public_id))
    return cursor.rowcount > 0


def set_redirects(
    conn: Connection, account_id: int, public_id: str, root_redirect: str | None, not_found_redirect: str | None
) -> bool:
    cursor = conn.execute(
        "UPDATE domains SET root_redirect = ?, not_found_redirect = ? WHERE account_id = ? AND public_id = ?",
        (root_redirect, not_found_redirect, account_id, public_id),
    )
    return cursor.rowcount > 0


def record_check(
    conn: Connection,
    host: str,
    *,
    checked_at: str,
    seen: bool,
    verified_at: str | None,
    error: str | None,
    check_at: str | None,
) -> None:
    """A check's outcome: `seen` keeps the record's last sighting, `verified_at` is the new state."""
    conn.execute(
        "UPDATE domains SET checked_at = ?, seen_at = coalesce(?, seen_at), verified_at = ?,"
        " check_error = ?, check_at = ? WHERE host = ?",
        (checked_at, checked_at if seen else None, verified_at, error, check_at, host),
    )


def claim_due(conn: Connection, now: str, retry_at: str, limit: int) -> list[Row]:
    """The domains whose check is due, pushed to `retry_at` in the same transaction so another
    process does not check them too (the check itself records the real next time)."""
    with transaction(conn):
        rows = conn.execute(
            f"SELECT {COLUMNS} FROM domains WHERE check_at IS NOT NULL AND check_at <= ? ORDER BY check_at LIMIT ?",
            (now, limit),
        ).fetchall()
        for row in rows:
            conn.execute("UPDATE domains SET check_at = ? WHERE host = ?", (retry_at, row["host"]))
    return rows


def redirects(conn: Connection) -> dict[str, tuple[str | None, str | None]]:
    """Each verified domain with a redirect chosen: (for `/`, for an unknown code)."""
    rows = conn.execute(
        "SELECT host, root_redirect, not_found_redirect FROM domains WHERE verified_at IS NOT NULL"
        " AND (root_redirect IS NOT NULL OR not_found_redirect IS NOT NULL)"
    )
    return {row["host"].lower(): (row["root_redirect"], row["not_found_redirect"]) for row in rows}
