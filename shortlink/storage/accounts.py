"""SQL for accounts, subscriptions, API keys, custom domains and server settings."""

from __future__ import annotations

from shortlink.storage.base import Connection, Row, transaction


def account_by_email(conn: Connection, email: str) -> Row | None:
    return conn.execute("SELECT * FROM accounts WHERE email = ?", (email,)).fetchone()


def insert_account_with_subscription(
    conn: Connection, public_id: str, email: str, name: str | None, created_at: str
) -> Row:
    """Create the account with an active subscription, or return the existing one."""
    with transaction(conn):
        conn.execute(
            "INSERT INTO accounts (public_id, email, name, created_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (email) DO NOTHING",
            (public_id, email, name, created_at),
        )
        account = account_by_email(conn, email)
        assert account is not None, "inserted in this transaction"
        conn.execute(
            "INSERT INTO subscriptions (account_id, is_active) VALUES (?, 1) ON CONFLICT (account_id) DO NOTHING",
            (account["id"],),
        )
    return account


def all_accounts(conn: Connection) -> list[Row]:
    """Every account with its subscription state and how many live keys and links it has."""
    return conn.execute(
        "SELECT a.public_id, a.email, a.name, a.created_at, coalesce(s.is_active, 0) AS subscription_active,"
        " (SELECT count(*) FROM api_keys k WHERE k.account_id = a.id AND k.revoked_at IS NULL) AS active_keys,"
        " (SELECT count(*) FROM links l WHERE l.account_id = a.id) AS links"
        " FROM accounts a LEFT JOIN subscriptions s ON s.account_id = a.id ORDER BY a.id"
    ).fetchall()


def set_subscription_active(conn: Connection, account_id: int, active: bool) -> None:
    conn.execute(
        "INSERT INTO subscriptions (account_id, is_active) VALUES (?, ?)"
        " ON CONFLICT (account_id) DO UPDATE SET is_active = excluded.is_active",
        (account_id, int(active)),
    )


def insert_api_key(
    conn: Connection,
    public_id: str,
    account_id: int,
    prefix: str,
    key_hash: str,
    name: str | None,
    created_at: str,
) -> None:
    conn.execute(
        "INSERT INTO api_keys (public_id, account_id, prefix, key_hash, name, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        (public_id, account_id, prefix, key_hash, name, created_at),
    )


def revoke_api_key(conn: Connection, public_id: str, revoked_at: str, account_id: int | None = None) -> bool:
    """Revoke a live key; with `account_id`, only a key of that account (the dashboard's
    revocation never reaches another account's key)."""
    cursor = conn.execute(
        "UPDATE api_keys SET revoked_at = ? WHERE public_id = ? AND revoked_at IS NULL"
        " AND (CAST(? AS BIGINT) IS NULL OR account_id = ?)",  # typed: PostgreSQL must know the NULL's type
        (revoked_at, public_id, account_id, account_id),
    )
    return cursor.rowcount == 1


def api_keys_of(conn: Connection, account_id: int) -> list[Row]:
    return conn.execute(
        "SELECT public_id, prefix, name, created_at, revoked_at, last_used_at FROM api_keys"
        " WHERE account_id = ? ORDER BY id",
        (account_id,),
    ).fetchall()


def touch_api_key(conn: Connection, key_id: int, used_at: str) -> None:
    conn.execute("UPDATE api_keys SET last_used_at = ? WHERE id = ?", (used_at, key_id))


def account_by_id(conn: Connection, account_id: int) -> Row | None:
    """The account and its subscription state."""
    return conn.execute(
        "SELECT a.*, coalesce(s.is_active, 0) AS subscription_active, s.current_period_end,"
        " coalesce(s.cancel_at_period_end, 0) AS cancel_at_period_end"
        " FROM accounts a LEFT JOIN subscriptions s ON s.account_id = a.id WHERE a.id = ?",
        (account_id,),
    ).fetchone()


def domains_of(conn: Connection, account_id: int) -> list[str]:
    """The account's verified domains, first-connected first."""
    rows = conn.execute(
        "SELECT host FROM domains WHERE account_id = ? AND verified_at IS NOT NULL ORDER BY created_at, host",
        (account_id,),
    )
    return [row["host"] for row in rows]


def principal_by_key_hash(conn: Connection, key_hash: str) -> Row | None:
    """The live key with this hash, its account and subscription; None if unknown or revoked."""
    return conn.execute(
        """
        SELECT k.id AS key_id, k.public_id AS key_public_id, k.prefix AS key_prefix,
               k.key_hash AS key_hash, k.last_used_at, a.id AS account_id, a.public_id AS account_public_id,
               a.email, a.name, coalesce(s.is_active, 0) AS subscription_active,
               s.current_period_end, coalesce(s.cancel_at_period_end, 0) AS cancel_at_period_end
        FROM api_keys k
        JOIN accounts a ON a.id = k.account_id
        LEFT JOIN subscriptions s ON s.account_id = a.id
        WHERE k.key_hash = ? AND k.revoked_at IS NULL
        """,
        (key_hash,),
    ).fetchone()


def insert_domain(conn: Connection, host: str, account_id: int, created_at: str, public_id: str) -> bool:
    """Connect a host to an account as the operator does: verified, never checked (the operator
    vouches for it). False when another account has it verified; another account's unverified
    claim gives way, and the account's own unverified one becomes verified."""
    with transaction(conn):
        owner = conn.execute("SELECT account_id, verified_at FROM domains WHERE host = ?", (host,)).fetchone()
        if owner is not None and owner["account_id"] != account_id:
            if owner["verified_at"] is not None:
                return False
            conn.execute("DELETE FROM domains WHERE host = ?", (host,))
            owner = None
        if owner is not None:
            conn.execute(
                "UPDATE domains SET verified_at = coalesce(verified_at, ?), token = NULL, check_at = NULL,"
                " check_error = NULL WHERE host = ?",
                (created_at, host),
            )
            return True
        conn.execute(
            "INSERT INTO domains (host, account_id, created_at, public_id, verified_at) VALUES (?, ?, ?, ?, ?)",
            (host, account_id, created_at, public_id, created_at),
        )
    return True


def all_domains(conn: Connection) -> list[tuple[str, int]]:
    """Every verified custom domain (lower-case host) and its account id, each account's
    first-connected domain first: the hosts served."""
    rows = conn.execute("SELECT host, account_id FROM domains WHERE verified_at IS NOT NULL ORDER BY created_at, host")
    return [(row["host"].lower(), row["account_id"]) for row in rows]


def setting(conn: Connection, name: str, default_factory) -> str:
    """A server-wide setting, created once (first writer wins across processes)."""
    row = conn.execute("SELECT value FROM settings WHERE name = ?", (name,)).fetchone()
    if row is not None:
        return row["value"]
    conn.execute(
        "INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING", (name, default_factory())
    )
    return conn.execute("SELECT value FROM settings WHERE name = ?", (name,)).fetchone()["value"]


def data_version(conn: Connection) -> int:
    """A counter that every commit changing what a server caches raises (links as a redirect
    reads them, their rules and apps, bio pages, custom domains), this process's own commits
    too; never a click batch (the triggers of migrations 0006, 0008 and 0015)."""
    return conn.execute("SELECT version FROM data_changes").fetchone()[0]


def ping(conn: Connection) -> bool:
    return conn.execute("SELECT 1").fetchone()[0] == 1
