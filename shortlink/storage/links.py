"""SQL for links: create, find, list, change, delete, and the daily creation count."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shortlink.storage import clicks as click_store
from shortlink.storage.base import Connection, Row, on_postgres, transaction

# The orders a list may ask for, by name: the only text of an ORDER BY (never built from input).
# Each ends in a unique column, so that pages never overlap. Codes compare byte by byte on
# both backends (PostgreSQL's default collation would fold case and skip "-" and "_").
LIST_ORDERS = {
    "-created": "created_at DESC, id DESC",
    "created": "created_at, id",
    "-clicks": "click_count DESC, id DESC",
    "clicks": "click_count, id",
    "-code": "short_code {collate}DESC",
    "code": "short_code {collate}",
}


class CodeTaken(Exception):
    """The short code is already used by another link."""


class DailyLimitReached(Exception):
    pass


def insert_link(
    conn: Connection, row: dict[str, Any], day: str, daily_limit: int, fetch_title_at_ms: int | None
) -> Row:
    """Insert a link, counting it against the account's daily limit, in one transaction.

    Raises CodeTaken when the code exists (the UNIQUE index decides, so of two
    concurrent creates of one code exactly one wins) and DailyLimitReached.
    """
    with transaction(conn):
        # Counted first: the upsert locks the account's row for the day, so that creates
        # racing in other processes (PostgreSQL) wait for this one and see its count.
        count_creation(conn, row["account_id"], day, daily_limit)
        columns = ", ".join(row)
        # The next id above every id ever used: never a deleted link's (SQLite's migration
        # 0004; a PostgreSQL identity sequence never goes back).
        next_id = "DEFAULT" if on_postgres(conn) else "(SELECT last_id + 1 FROM link_id_high_water)"
        try:
            link_pk = conn.execute(
                f"INSERT INTO links (id, {columns}) VALUES ({next_id}, {', '.join('?' * len(row))}) RETURNING id",
                tuple(row.values()),
            ).fetchone()[0]
        except conn.IntegrityError as exc:
            if "short_code" in str(exc):
                raise CodeTaken from None
            raise
        if fetch_title_at_ms is not None:
            conn.execute(
                "INSERT INTO pending_fetches (link_id, next_attempt_at) VALUES (?, ?)", (link_pk, fetch_title_at_ms)
            )
    return _existing(link_by_pk(conn, link_pk))


def link_by_pk(conn: Connection, link_pk: int) -> Row | None:
    return conn.execute("SELECT * FROM links WHERE id = ?", (link_pk,)).fetchone()


def link_of_account(conn: Connection, account_id: int, public_id: str) -> Row | None:
    return conn.execute(
        "SELECT * FROM links WHERE public_id = ? AND account_id = ?", (public_id, account_id)
    ).fetchone()


def account_of_link(conn: Connection, public_id: str) -> int | None:
    row = conn.execute("SELECT account_id FROM links WHERE public_id = ?", (public_id,)).fetchone()
    return None if row is None else row[0]


def link_by_code(conn: Connection, code: str) -> Row | None:
    return conn.execute("SELECT * FROM links WHERE short_code = ?", (code,)).fetchone()


# The columns a visit reads, in the order of visits.cache.VisitTarget's fields.
# The app a link opens (migration 0014) comes in the same read: NULLs for most links; then the
# link's rules document and its human clicks (NULL for a link without rules).
_VISIT_TARGETS = (
    "SELECT l.id, l.public_id, l.account_id, l.short_code, l.original_url, l.platform, l.ios_url, l.android_url,"
    " l.title, l.is_active, l.expires_at, l.password_hash,"
    " la.deep_path, a.name, a.ios_app_store_id, a.android_package, r.document, r.human_clicks"
    " FROM links AS l LEFT JOIN link_apps AS la ON la.link_id = l.id LEFT JOIN apps AS a ON a.id = la.app_id"
    " LEFT JOIN link_rules AS r ON r.link_id = l.id WHERE l.short_code IN ({})"
)
# Codes per statement: well under every engine's limit on parameters.
MAX_CODES_PER_READ = 256


def visit_target_rows(conn: Connection, codes: Sequence[str]) -> list[Row]:
    """What a visit needs of the links with these codes (a code without a link has no
    row): the redirect path's read on a cache miss, for all the misses of one turn of
    the event loop, so only the columns it uses."""
    rows: list[Row] = []
    for start in range(0, len(codes), MAX_CODES_PER_READ):
        chunk = list(codes[start : start + MAX_CODES_PER_READ])
        # Padded to a power of two with repeats, which IN ignores: a handful of
        # statement texts, each prepared once and kept in the connection's cache.
        size = 1 << (len(chunk) - 1).bit_length()
        chunk += chunk[-1:] * (size - len(chunk))
        rows += conn.execute(_VISIT_TARGETS.format(",".join("?" * size)), chunk).fetchall()
    return rows


TRIGRAM = 3  # the shortest search text the link_search index can answer
# OFFSET is a signed 64-bit integer in SQLite; a page past it is past the end all the same.
MAX_OFFSET = 2**63 - 1


def list_links(
    conn: Connection,
    account_id: int,
    *,
    offset: int,
    limit: int,
    search: str | None,
    short_code: str | None,
    platform: str | None,
    is_active: bool | None,
    source: str | None = None,
    tag: str | None = None,
    order: str = "-created",
) -> tuple[list[Row], int]:
    """One page of the account's links in `order` (a key of LIST_ORDERS; newest first by
    default), and the total matching."""
    if order not in LIST_ORDERS:
        raise ValueError(f"no list order {order!r}")
    order_by = LIST_ORDERS[order].format(collate='COLLATE "C" ' if on_postgres(conn) else "")
    where: list[str] = ["account_id = ?"]
    params: list[object] = [account_id]
    if search and on_postgres(conn):
        condition, arguments = _contains_on_postgres(search)
        where.append(condition)
        params.extend(arguments)
    elif search and len(search) >= TRIGRAM and "\x00" not in search:  # FTS5 query text ends at a NUL
        # A quoted FTS5 phrase is literal text: a substring match through the trigram index.
        # "+account_id" keeps the planner from scanning the account's links instead of
        # starting from the (usually few) matches.
        where[0] = "+account_id = ?"
        where.append("id IN (SELECT rowid FROM link_search WHERE link_search MATCH ?)")
        params.append('"' + search.replace('"', '""') + '"')
    elif search:
        # Too short for trigrams: a scan of the account's links, lower-cased in Python
        # (LIKE folds ASCII letters only). A plain substring test: no wildcards.
        where.append("folded_contains(?, original_url, title, short_code)")
        params.append(search.lower())
    if short_code is not None:
        where.append("short_code = ?")
        params.append(short_code)
    if platform is not None:
        where.append("platform = ?")
        params.append(platform)
    if is_active is not None:
        where.append("is_active = ?")
        params.append(int(is_active))
    if source is not None:
        where.append("source = ?")
        params.append(source)
    if tag is not None:
        where.append("id IN (SELECT link_id FROM link_tags WHERE account_id = ? AND name = ?)")
        params.extend([account_id, tag])
    condition = " AND ".join(where)
    total = conn.execute(f"SELECT count(*) FROM links WHERE {condition}", params).fetchone()[0]
    rows = conn.execute(
        f"SELECT * FROM links WHERE {condition} ORDER BY {order_by} LIMIT ? OFFSET ?",
        [*params, limit, min(offset, MAX_OFFSET)],
    ).fetchall()
    return rows, total


# The expressions of the links_search index (PostgreSQL's migration 0006): lower-cased by
# ICU, whatever the database's locale, so that every alphabet folds, as on SQLite.
_FOLDED = [f'lower({column} COLLATE "und-x-icu")' for column in ("original_url", "title", "short_code")]


def _contains_on_postgres(search: str) -> tuple[str, list[str]]:
    """The search as a literal substring of one of the three texts, through the pg_trgm
    index: LIKE, with its own characters (% _ \\) escaped. A search shorter than a trigram
    is answered too, by a scan of the account's links."""
    literal = search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    pattern = "'%' || lower(? COLLATE \"und-x-icu\") || '%'"
    return "(" + " OR ".join(f"{text} LIKE {pattern} ESCAPE '\\'" for text in _FOLDED) + ")", [literal] * 3


def update_link(conn: Connection, link_pk: int, changes: dict[str, Any]) -> Row:
    assignments = ", ".join(f"{column} = ?" for column in changes)
    conn.execute(f"UPDATE links SET {assignments} WHERE id = ?", (*changes.values(), link_pk))
    return _existing(link_by_pk(conn, link_pk))


def _existing(row: Row | None) -> Row:
    # Read back inside the write that made it: it cannot be missing.
    assert row is not None, "a link just written is missing"
    return row


def delete_link(conn: Connection, link_pk: int) -> None:
    """The link, its clicks and its rollups go together (ON DELETE CASCADE)."""
    with transaction(conn):
        click_store.forget_link_hours(conn, link_pk)
        conn.execute("DELETE FROM links WHERE id = ?", (link_pk,))


def count_creation(conn: Connection, account_id: int, day: str, daily_limit: int) -> None:
    """One more link created by the account on `day`; DailyLimitReached over `daily_limit`
    (the caller's transaction, with its count, is then rolled back)."""
    created = conn.execute(
        "INSERT INTO link_creations (account_id, day, created) VALUES (?, ?, 1)"
        " ON CONFLICT (account_id, day) DO UPDATE SET created = link_creations.created + 1 RETURNING created",
        (account_id, day),
    ).fetchone()[0]
    if created > daily_limit:
        raise DailyLimitReached


def links_created_on(conn: Connection, account_id: int, day: str) -> int:
    row = conn.execute(
        "SELECT created FROM link_creations WHERE account_id = ? AND day = ?", (account_id, day)
    ).fetchone()
    return row[0] if row else 0


def destinations_of_account(conn: Connection, account_id: int) -> list[Row]:
    """(short_code, original_url, created_at) of each of the account's links: what an import
    matches rows without a code against, read once."""
    return conn.execute(
        "SELECT short_code, original_url, created_at FROM links WHERE account_id = ?", (account_id,)
    ).fetchall()


def links_after(conn: Connection, account_id: int, after_id: int, limit: int) -> list[Row]:
    """The account's links with an internal id above `after_id`, oldest first: one page of
    an export that never holds every link in memory."""
    return conn.execute(
        "SELECT * FROM links WHERE account_id = ? AND id > ? ORDER BY id LIMIT ?", (account_id, after_id, limit)
    ).fetchall()


def links_by_pk(conn: Connection, link_pks: Sequence[int]) -> dict[int, Row]:
    """Links by internal id, many at once (the webhook deliverer's fan-out of click events)."""
    if not link_pks:
        return {}
    marks = ", ".join("?" * len(link_pks))
    return {row["id"]: row for row in conn.execute(f"SELECT * FROM links WHERE id IN ({marks})", tuple(link_pks))}
