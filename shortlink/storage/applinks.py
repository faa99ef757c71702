"""SQL for apps (migration 0014): the apps an account (or the service itself) registers."""

from __future__ import annotations

from typing import Any

from shortlink.storage.base import Connection, Row, transaction

_COLUMNS = (
    "public_id, account_id, name, ios_team_id, ios_bundle_id, ios_app_store_id, ios_paths,"
    " android_package, android_fingerprints, android_paths, created_at"
)


class AppTaken(Exception):
    """The owner already has an app with this iOS app id or Android package."""


def _owner(account_id: int | None) -> tuple[str, tuple[Any, ...]]:
    return ("account_id IS NULL", ()) if account_id is None else ("account_id = ?", (account_id,))


def insert_app(conn: Connection, fields: dict[str, Any], max_apps: int) -> bool:
    """Insert the app unless its owner has `max_apps` already (False); raises AppTaken."""
    where, params = _owner(fields["account_id"])
    with transaction(conn):
        count = conn.execute(f"SELECT count(*) FROM apps WHERE {where}", params).fetchone()[0]
        if count >= max_apps:
            return False
        try:
            conn.execute(
                f"INSERT INTO apps ({_COLUMNS}) VALUES (:public_id, :account_id, :name, :ios_team_id, :ios_bundle_id,"
                " :ios_app_store_id, :ios_paths, :android_package, :android_fingerprints, :android_paths,"
                " :created_at)",
                fields,
            )
        except conn.IntegrityError:
            raise AppTaken from None
    return True


def apps_of(conn: Connection, account_id: int | None) -> list[Row]:
    """The owner's apps (None: the service's own), oldest first."""
    where, params = _owner(account_id)
    return conn.execute(f"SELECT * FROM apps WHERE {where} ORDER BY id", params).fetchall()


def app_by_public_id(conn: Connection, account_id: int | None, public_id: str) -> Row | None:
    where, params = _owner(account_id)
    return conn.execute(f"SELECT * FROM apps WHERE {where} AND public_id = ?", (*params, public_id)).fetchone()


def delete_app(conn: Connection, account_id: int | None, public_id: str) -> list[str] | None:
    """Delete the app (its links' link_apps rows go with it); the short codes of the links that
    opened it, whose cached entries carried it, or None when the owner has no such app."""
    where, params = _owner(account_id)
    with transaction(conn):
        codes = [
            row[0]
            for row in conn.execute(
                "SELECT short_code FROM links WHERE id IN (SELECT link_id FROM link_apps WHERE app_id IN"
                f" (SELECT id FROM apps WHERE {where} AND public_id = ?))",
                (*params, public_id),
            )
        ]
        cursor = conn.execute(f"DELETE FROM apps WHERE {where} AND public_id = ?", (*params, public_id))
    return codes if cursor.rowcount > 0 else None


def all_apps(conn: Connection) -> list[Row]:
    """Every app of every owner, with the owner's e-mail (None: the service's)."""
    return conn.execute(
        "SELECT apps.*, accounts.email FROM apps LEFT JOIN accounts ON accounts.id = apps.account_id ORDER BY apps.id"
    ).fetchall()


def set_link_app(conn: Connection, link_pk: int, app_id: int, deep_path: str) -> None:
    with transaction(conn):
        conn.execute(
            "INSERT INTO link_apps (link_id, app_id, deep_path) VALUES (?, ?, ?)"
            " ON CONFLICT (link_id) DO UPDATE SET app_id = excluded.app_id, deep_path = excluded.deep_path",
            (link_pk, app_id, deep_path),
        )


def clear_link_app(conn: Connection, link_pk: int) -> None:
    with transaction(conn):
        conn.execute("DELETE FROM link_apps WHERE link_id = ?", (link_pk,))


def link_app(conn: Connection, link_pk: int) -> Row | None:
    """The app a link opens (the app's public id and the deep path), or None."""
    return conn.execute(
        "SELECT apps.public_id AS app_public_id, link_apps.deep_path FROM link_apps"
        " JOIN apps ON apps.id = link_apps.app_id WHERE link_apps.link_id = ?",
        (link_pk,),
    ).fetchone()


def app_row_id(conn: Connection, account_id: int, public_id: str) -> int | None:
    row = conn.execute("SELECT id FROM apps WHERE account_id = ? AND public_id = ?", (account_id, public_id)).fetchone()
    return None if row is None else row[0]


def redeem(conn: Connection, token_hash: str, now_iso: str) -> bool:
    """Record a token as redeemed; False when it was already."""
    with transaction(conn):
        cursor = conn.execute(
            "INSERT INTO deferred_redemptions (token_hash, redeemed_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
            (token_hash, now_iso),
        )
    return cursor.rowcount == 1


def deep_path_of_link(conn: Connection, public_id: str) -> Row | None:
    """A link's deep path and whether it may be read without a password, by the link's public id."""
    return conn.execute(
        "SELECT link_apps.deep_path, links.password_hash, links.is_active FROM links"
        " JOIN link_apps ON link_apps.link_id = links.id WHERE links.public_id = ?",
        (public_id,),
    ).fetchone()


def deep_path_of_code(conn: Connection, code: str) -> Row | None:
    """The same as `deep_path_of_link`, by the link's short code."""
    return conn.execute(
        "SELECT links.public_id, link_apps.deep_path, links.password_hash, links.is_active FROM links"
        " JOIN link_apps ON link_apps.link_id = links.id WHERE links.short_code = ?",
        (code,),
    ).fetchone()


OUTCOME_COLUMNS = ("app", "store", "web")


def add_outcomes(conn: Connection, counts: list[tuple[int, str, str, int]]) -> None:
    """Add (link id, day, outcome, visits) counts; links deleted meanwhile are skipped."""
    with transaction(conn):
        for link_pk, day, outcome, visits in counts:
            column = OUTCOME_COLUMNS[OUTCOME_COLUMNS.index(outcome)]  # one of three names, never input
            conn.execute(
                f"INSERT INTO link_app_days (link_id, day, {column}) SELECT ?, ?, ?"
                " WHERE EXISTS (SELECT 1 FROM links WHERE id = ?)"
                f" ON CONFLICT (link_id, day) DO UPDATE SET {column} = link_app_days.{column} + excluded.{column}",
                (link_pk, day, visits, link_pk),
            )


def outcomes_by_day(conn: Connection, link_pk: int, first_day: str, last_day: str) -> list[Row]:
    return conn.execute(
        "SELECT day, app, store, web FROM link_app_days WHERE link_id = ? AND day BETWEEN ? AND ? ORDER BY day",
        (link_pk, first_day, last_day),
    ).fetchall()
