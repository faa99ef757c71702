"""Migration 0018 (hourly rollups, and those after it) on a database the versions before it
wrote, on SQLite and on PostgreSQL: every range's analytics equal what raw clicks give, from
the rollups it builds."""

from __future__ import annotations

import random
import sqlite3
from datetime import UTC, datetime

import psycopg

from shortlink.analytics import report
from shortlink.analytics.ranges import DAY_MS, Range
from shortlink.storage import connect
from shortlink.storage.schema import postgresql_migrations, statements
from shortlink.storage.schema import sqlite_migrations as migrations

HOUR_MS = 3_600_000
AGENTS = [
    ("Mozilla/5.0 (iPhone)", "mobile", "Mobile Safari", "iOS"),
    ("Mozilla/5.0 (X11)", "desktop", "Firefox", "Linux"),
]
AGENTS += [("curl/8", "other", "Other", "Other")]
DIMENSIONS = [
    ("device", "other"),
    ("browser", "Other"),
    ("os", "Other"),
    ("country", "Unknown"),
    ("referrer", "Direct"),
    ("campaign", "None"),
]


def old_rollups(day: str) -> list[str]:
    """What the click recorder before 0018 wrote beside the raw clicks, `day` being the
    backend's day of `ts` (the visitor counts of link_days and account_days come from that
    version's triggers on link_visitors)."""
    return [
        f"INSERT INTO link_days (link_id, day, account_id, clicks) SELECT link_id, {day}, min(account_id), count(*)"
        " FROM clicks WHERE is_bot = 0 GROUP BY 1, 2",
        f"INSERT INTO account_days (account_id, day, clicks) SELECT account_id, {day}, count(*)"
        " FROM clicks WHERE is_bot = 0 GROUP BY 1, 2",
        *(
            f"INSERT INTO link_dimensions (link_id, day, dimension, value, account_id, clicks)"
            f" SELECT link_id, {day}, {code}, {name}, min(account_id), count(*) FROM clicks"
            f" WHERE is_bot = 0 AND {name} <> '{unknown}' GROUP BY link_id, 2, {name}"
            for code, (name, unknown) in enumerate(DIMENSIONS, start=1)
        ),
        *(
            f"INSERT INTO account_dimensions (account_id, day, dimension, value, clicks)"
            f" SELECT account_id, day, dimension, value, sum(clicks)"
            f" FROM link_dimensions WHERE dimension = {code} GROUP BY 1, 2, 3, 4"
            for code in range(1, 7)
        ),
        f"INSERT INTO link_visitors (link_id, day, visitor, account_id)"
        f" SELECT link_id, {day}, visitor, min(account_id) FROM clicks WHERE is_bot = 0 GROUP BY 1, 2, 3",
    ]


def old_clicks(now_ms: int) -> list[tuple]:
    """Three links' clicks over a week, as click_rows' (link_id, ts, agent_id, country, referrer,
    campaign, visitor, is_bot), oldest first."""
    rng = random.Random(3)
    rows = [
        (
            rng.randrange(1, 4),
            now_ms - rng.randrange(7 * DAY_MS),
            rng.randrange(1, 4),
            rng.choice(["DE", "FR", "Unknown"]),
            rng.choice(["Direct", "t.co"]),
            rng.choice(["None", "news"]),
            rng.randrange(12),  # few visitors: each comes back within and across hours and days
            int(rng.random() < 0.1),
        )
        for _ in range(1500)
    ]
    return sorted(rows, key=lambda row: row[1])


ACCOUNT = "INSERT INTO accounts (public_id, email, created_at) VALUES ('usr_x', 'a@b.c', 'now')"
LINKS = [
    "INSERT INTO links (public_id, account_id, short_code, original_url, platform, created_at, updated_at)"
    f" VALUES ('lnk_{number}', 1, 'code{number}', 'https://example.com/', 'OTHER', 'then', 'then')"
    for number in range(3)
]
CLICKS = (
    "INSERT INTO click_rows (link_id, account_id, ts, agent_id, country, referrer, campaign, visitor, is_bot)"
    " VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?)"
)
CLICK_COUNTS = "UPDATE links SET click_count = (SELECT count(*) FROM click_rows WHERE link_id = links.id)"


def old_sqlite_database(path: str, now_ms: int) -> None:
    """A file as the last version before 0018 left it."""
    raw = sqlite3.connect(path, isolation_level=None)
    raw.execute("PRAGMA foreign_keys = ON")
    # Migration 0006's function; its tables are still empty here, so it is never called.
    raw.create_function("hex64", 1, lambda text: int(text[:16], 16), deterministic=True)
    raw.execute("CREATE TABLE schema_migrations (number INTEGER PRIMARY KEY)")
    for number, _name, sql in migrations():
        if number < 18:
            for statement in statements(sql):
                raw.execute(statement)
            raw.execute("INSERT INTO schema_migrations VALUES (?)", (number,))
            raw.execute(f"PRAGMA user_version = {number}")
    for statement in (ACCOUNT, *LINKS):
        raw.execute(statement)
    raw.executemany("INSERT INTO user_agents (text, device, browser, os) VALUES (?, ?, ?, ?)", AGENTS)
    raw.executemany(CLICKS, old_clicks(now_ms))
    raw.execute(CLICK_COUNTS)
    for statement in old_rollups("date(ts / 1000, 'unixepoch')"):
        raw.execute(statement)
    raw.close()


def old_postgresql_database(url: str, now_ms: int) -> None:
    """A PostgreSQL database as the last version before 0018 left it."""
    with psycopg.connect(url, autocommit=True) as raw:
        raw.execute("CREATE TABLE schema_migrations (number integer PRIMARY KEY)")
        for number, _name, sql in postgresql_migrations():
            if number < 18:
                with raw.transaction():
                    raw.execute(sql.encode())  # bytes: psycopg runs a script of many statements
                    raw.execute("INSERT INTO schema_migrations VALUES (%s)", (number,))
                    raw.execute("UPDATE schema_version SET version = %s", (number,))
        for statement in (ACCOUNT, *LINKS):
            raw.execute(statement.encode())
        with raw.cursor() as cursor:
            cursor.executemany("INSERT INTO user_agents (text, device, browser, os) VALUES (%s, %s, %s, %s)", AGENTS)
            cursor.executemany(CLICKS.replace("?", "%s"), old_clicks(now_ms))
        raw.execute(CLICK_COUNTS)
        for statement in old_rollups("to_char(to_timestamp(ts / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD')"):
            raw.execute(statement.encode())


def assert_every_range_answers_like_raw_clicks(location: str, now: datetime) -> None:
    now_ms = int(now.timestamp() * 1000)
    conn = connect(location)  # applies 0018 and what follows it
    assert conn.execute("SELECT count(*) FROM account_hours").fetchone()[0] > 0
    rng = random.Random(9)
    ranges = [Range(now_ms - days * DAY_MS, now_ms) for days in (1, 2, 7)]
    ranges += [Range(now_ms - 3 * DAY_MS + HOUR_MS // 2, now_ms - DAY_MS - HOUR_MS // 3)]  # mid-hour ends
    for _ in range(40):  # any second to any second, within one hour, one day or across days
        start = now_ms - rng.randrange(8 * DAY_MS)
        ranges.append(Range(start, min(start + rng.randrange(3 * DAY_MS), now_ms)))
    for span in ranges:
        assert report.account_analytics(conn, 1, span, now) == report.account_analytics(conn, 1, span, now, False)
        for number in range(3):
            link = f"lnk_{number}"
            assert report.link_analytics(conn, 1, link, span, now) == report.link_analytics(
                conn, 1, link, span, now, False
            )
    conn.close()


def test_a_database_from_before_hourly_rollups_answers_every_range_like_raw_clicks(db_path):
    now = datetime.now(UTC)
    old_sqlite_database(str(db_path), int(now.timestamp() * 1000))
    assert_every_range_answers_like_raw_clicks(str(db_path), now)


def test_a_postgresql_database_from_before_hourly_rollups_answers_every_range_like_raw_clicks(postgres_server):
    now = datetime.now(UTC)
    url = postgres_server.empty_database()
    try:
        old_postgresql_database(url, int(now.timestamp() * 1000))
        assert_every_range_answers_like_raw_clicks(url, now)
    finally:
        postgres_server.drop_database(url)
