"""The queries behind the analytics endpoints: daily rollups for whole UTC days, an account's
hourly rollups for the whole hours of a partial day, raw clicks for the rest.

A scope is one link (`LINK`, by links.id) or one account (`ACCOUNT`, by
accounts.id). Every figure counts human clicks only (is_bot = 0). Times are Unix
milliseconds, ranges inclusive at both ends; days are 'YYYY-MM-DD' UTC text.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from shortlink.storage.base import Connection, Row, on_postgres
from shortlink.storage.clicks import DIMENSIONS


class Scope(NamedTuple):
    column: str  # the clicks / rollup column naming the scope
    days: str  # per-day table: clicks, visitors
    dimensions: str  # per-day, per-value table


LINK = Scope("link_id", "link_days", "link_dimensions")
ACCOUNT = Scope("account_id", "account_days", "account_dimensions")


@contextmanager
def snapshot(conn: Connection) -> Iterator[None]:
    """One read transaction: all the queries of an answer see the same data (on
    PostgreSQL that takes REPEATABLE READ: its default gives each statement its own)."""
    conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" if on_postgres(conn) else "BEGIN")
    try:
        yield
    finally:
        conn.execute("COMMIT")


def day_rows(conn: Connection, scope: Scope, owner: int, first_day: str, last_day: str) -> list[tuple[str, int, int]]:
    """(day, clicks, visitors) of the whole days from first_day to last_day."""
    return conn.execute(
        f"SELECT day, clicks, visitors FROM {scope.days} WHERE {scope.column} = ? AND day BETWEEN ? AND ?",
        (owner, first_day, last_day),
    ).fetchall()


def clicks_since(conn: Connection, scope: Scope, owner: int, first_day: str) -> int:
    """Human clicks of the days from first_day on (all days when first_day is '')."""
    return conn.execute(
        f"SELECT coalesce(sum(clicks), 0) FROM {scope.days} WHERE {scope.column} = ? AND day >= ?", (owner, first_day)
    ).fetchone()[0]


def dimension_totals(
    conn: Connection, scope: Scope, owner: int, dimension: int, first_day: str, last_day: str
) -> list[tuple[str, int]]:
    return conn.execute(
        f"SELECT value, sum(clicks) FROM {scope.dimensions} WHERE {scope.column} = ? AND dimension = ?"
        " AND day BETWEEN ? AND ? GROUP BY value",
        (owner, dimension, first_day, last_day),
    ).fetchall()


def link_totals(conn: Connection, account_id: int, first_day: str, last_day: str) -> list[tuple[int, int]]:
    """(link id, human clicks) of the account's links over whole days."""
    return conn.execute(
        "SELECT link_id, sum(clicks) FROM link_days WHERE account_id = ? AND day BETWEEN ? AND ? GROUP BY link_id",
        (account_id, first_day, last_day),
    ).fetchall()


def links_by_all_time_clicks(conn: Connection, account_id: int, limit: int) -> list[tuple[int, int]]:
    """(link id, clicks ever, bots included) of the account's most clicked links."""
    return conn.execute(
        "SELECT id, click_count FROM links WHERE account_id = ? ORDER BY click_count DESC LIMIT ?", (account_id, limit)
    ).fetchall()


def links_clicks_between(conn: Connection, link_pks: list[int], first_day: str, last_day: str) -> list[tuple[int, int]]:
    """(link id, human clicks) of these links (at most a few hundred) over whole days."""
    marks = ",".join("?" * len(link_pks))
    return conn.execute(
        f"SELECT link_id, sum(clicks) FROM link_days WHERE link_id IN ({marks}) AND day BETWEEN ? AND ?"
        " GROUP BY link_id",
        (*link_pks, first_day, last_day),
    ).fetchall()


def hour_rows(conn: Connection, account_id: int, first_hour: int, last_hour: int) -> list[tuple[int, int]]:
    """(hour since the epoch, human clicks) of the account's hours from first_hour to last_hour."""
    return conn.execute(
        "SELECT hour, clicks FROM account_hours WHERE account_id = ? AND hour BETWEEN ? AND ?",
        (account_id, first_hour, last_hour),
    ).fetchall()


def hour_dimension_totals(
    conn: Connection, account_id: int, dimension: int, first_hour: int, last_hour: int
) -> list[tuple[str, int]]:
    return conn.execute(
        "SELECT value, sum(clicks) FROM account_hour_dimensions WHERE account_id = ? AND dimension = ?"
        " AND hour BETWEEN ? AND ? GROUP BY value",
        (account_id, dimension, first_hour, last_hour),
    ).fetchall()


def links_clicks_in_hours(
    conn: Connection, link_pks: list[int], first_hour: int, last_hour: int
) -> list[tuple[int, int]]:
    """(link id, human clicks) of these links (at most a few hundred) over whole hours."""
    marks = ",".join("?" * len(link_pks))
    return conn.execute(
        f"SELECT link_id, sum(clicks) FROM link_hours WHERE link_id IN ({marks}) AND hour BETWEEN ? AND ?"
        " GROUP BY link_id",
        (*link_pks, first_hour, last_hour),
    ).fetchall()


def raw_link_clicks(conn: Connection, account_id: int, start_ms: int, end_ms: int) -> list[tuple[int, int]]:
    """(link id, human clicks) of the account's links between two moments, from raw clicks."""
    return conn.execute(
        "SELECT link_id, count(*) FROM click_rows WHERE account_id = ? AND ts BETWEEN ? AND ? AND is_bot = 0"
        " GROUP BY link_id",
        (account_id, start_ms, end_ms),
    ).fetchall()


def visitors_in_day_part(
    conn: Connection, account_id: int, day: str, hours: tuple[int, int] | None, pieces: list[tuple[int, int]]
) -> int:
    """Distinct visitors of a part of one day: the hours of that day (0-23, both included) read
    from the visitor rollups, and the raw clicks between the moments of each piece."""
    parts = ["SELECT visitor FROM account_visitors WHERE account_id = ? AND day = ? AND hour BETWEEN ? AND ?"]
    parameters: list[Any] = [account_id, day, *(hours or (1, 0))]
    for start_ms, end_ms in pieces:
        parts.append("SELECT visitor FROM click_rows WHERE account_id = ? AND ts BETWEEN ? AND ? AND is_bot = 0")
        parameters += [account_id, start_ms, end_ms]
    union = " UNION ALL ".join(parts)
    return conn.execute(f"SELECT count(DISTINCT visitor) FROM ({union}) AS v", parameters).fetchone()[0]


def raw_counts(conn: Connection, scope: Scope, owner: int, start_ms: int, end_ms: int) -> list[tuple[str, Any, int]]:
    """Every figure of the human clicks between two moments, from raw clicks, as
    (kind, value, clicks) rows: kind "day" (value: day number since the epoch), "link"
    (value: links.id), each of DIMENSIONS, and "visitors" (distinct per day, summed).

    One statement: the matching clicks are read once into a materialised temporary
    result, and every grouping runs over that instead of over the table again."""
    # PostgreSQL wants one type per column of a UNION: there, numbers travel as text.
    numbers = "{}::text" if on_postgres(conn) else "{}"
    groupings = " UNION ALL ".join(
        [f"SELECT '{name}', {name}, count(*) FROM r GROUP BY {name}" for name in DIMENSIONS]
        + [
            f"SELECT 'day', {numbers.format('day')}, count(*) FROM r GROUP BY day",
            f"SELECT 'link', {numbers.format('link_id')}, count(*) FROM r GROUP BY link_id",
            "SELECT 'visitors', NULL, count(*) FROM (SELECT DISTINCT day, visitor FROM r) AS v",
        ]
    )
    rows = conn.execute(
        f"WITH r AS MATERIALIZED (SELECT ts / 86400000 AS day, link_id, visitor, {', '.join(DIMENSIONS)}"
        f" FROM clicks WHERE {scope.column} = ? AND ts BETWEEN ? AND ? AND is_bot = 0) {groupings}",
        (owner, start_ms, end_ms),
    ).fetchall()
    if on_postgres(conn):
        return [(kind, int(value) if kind in ("day", "link") else value, clicks) for kind, value, clicks in rows]
    return rows


def has_clicks(conn: Connection, scope: Scope, owner: int, start_ms: int, end_ms: int) -> bool:
    """Whether any click, bots included, falls between two moments (one index probe)."""
    return (
        conn.execute(
            f"SELECT EXISTS (SELECT 1 FROM clicks WHERE {scope.column} = ? AND ts BETWEEN ? AND ?)",
            (owner, start_ms, end_ms),
        ).fetchone()[0]
        == 1
    )


def raw_clicks_since(conn: Connection, scope: Scope, owner: int, start_ms: int) -> int:
    return conn.execute(
        f"SELECT count(*) FROM clicks WHERE {scope.column} = ? AND ts >= ? AND is_bot = 0", (owner, start_ms)
    ).fetchone()[0]


def hourly_clicks(conn: Connection, scope: Scope, owner: int, start_ms: int, end_ms: int) -> list[tuple[int, int]]:
    """(hour number since the epoch, human clicks) between two moments."""
    return conn.execute(
        f"SELECT ts / 3600000 AS hour, count(*) FROM clicks WHERE {scope.column} = ?"
        " AND ts BETWEEN ? AND ? AND is_bot = 0 GROUP BY hour",
        (owner, start_ms, end_ms),
    ).fetchall()


def recent_clicks(conn: Connection, scope: Scope, owner: int, start_ms: int, end_ms: int, limit: int) -> list[Row]:
    """The newest human clicks between two moments, with their link's short code."""
    return conn.execute(
        f"SELECT c.id, l.short_code, c.device, c.browser, c.os, c.country, c.user_agent, c.ts"
        f" FROM clicks c JOIN links l ON l.id = c.link_id WHERE c.{scope.column} = ?"
        " AND c.ts BETWEEN ? AND ? AND c.is_bot = 0 ORDER BY c.ts DESC, c.id DESC LIMIT ?",
        (owner, start_ms, end_ms, limit),
    ).fetchall()


def link_counts(conn: Connection, account_id: int, now_iso: str) -> tuple[int, int]:
    """(links, active links) of the account; active = not paused and not expired."""
    row = conn.execute(
        "SELECT count(*), count(*) FILTER (WHERE is_active = 1 AND (expires_at IS NULL OR expires_at > ?))"
        " FROM links WHERE account_id = ?",
        (now_iso, account_id),
    ).fetchone()
    return row[0], row[1]


def links_by_pk(conn: Connection, link_pks: list[int]) -> dict[int, Row]:
    found: dict[int, Row] = {}
    for start in range(0, len(link_pks), 500):  # stay under SQLite's bound-parameter limit
        chunk = link_pks[start : start + 500]
        marks = ",".join("?" * len(chunk))
        found.update((row["id"], row) for row in conn.execute(f"SELECT * FROM links WHERE id IN ({marks})", chunk))
    return found
