"""Writing batches of clicks: raw rows, link counters and daily rollups, all together.

The caller holds the transaction, so raw clicks, `links.click_count` and the
rollups always agree, even after a crash.
"""
from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable
from itertools import repeat
from typing import NamedTuple

import msgspec

import msgspec

# The dimensions of link_dimensions / account_dimensions, coded 1, 2, ... in this order.
DIMENSIONS = ("device", "browser", "os", "country", "referrer", "campaign")


class StoredClick(NamedTuple):
    link_id: int
    account_id: int
    ts: int
    day: str
    device: str
    browser: str
    os: str
    country: str
    referrer: str
    campaign: str
    user_agent: str
    visitor_hash: str
    is_bot: bool


def existing_links(conn: sqlite3.Connection, link_ids: Iterable[int]) -> set[int]:
    row = conn.execute("SELECT json_group_array(id) FROM links WHERE id IN (SELECT value FROM json_each(?))",
                       (_json(list(link_ids)),)).fetchone()
    return set(msgspec.json.decode(row[0]))


def day_keys(conn: sqlite3.Connection, days: Iterable[str], oldest_kept: str,
             new_key: Callable[[], bytes]) -> dict[str, bytes]:
    """The visitor-hash key of each day (created on first use); keys before `oldest_kept` are deleted."""
    conn.execute("DELETE FROM visitor_keys WHERE day < ?", (oldest_kept,))
    keys = {}
    for day in days:
        # INSERT OR IGNORE: another process (the demo seeder) may have made today's key already.
        conn.execute("INSERT OR IGNORE INTO visitor_keys (day, key) VALUES (?, ?)", (day, new_key()))
        keys[day] = conn.execute("SELECT key FROM visitor_keys WHERE day = ?", (day,)).fetchone()[0]
    return keys


def _json_rows(rows: Iterable[tuple]) -> str:
    return msgspec.json.encode(list(rows)).decode()


def _columns(count: int) -> str:
    return ", ".join(f"value ->> {index}" for index in range(count))


def _json(rows: list) -> str:
    return msgspec.json.encode(rows).decode()


def _columns(count: int) -> str:
    return ", ".join(f"value ->> {index}" for index in range(count))


def _insert_rows(conn: sqlite3.Connection, head: str, width: int, rows: list, tail: str = "") -> None:
    """One INSERT ... SELECT over a JSON array of rows.

    One statement step for the whole batch instead of one per row: the database
    thread releases and re-takes the GIL around every step, and under load each
    re-take waits for the busy event loop, so per-row statements crawl.
    """
    if rows:
        conn.execute(f"{head} SELECT {_columns(width)} FROM json_each(?) WHERE true {tail}", (_json(rows),))


def insert_clicks(conn: sqlite3.Connection, clicks: list[StoredClick]) -> None:
    _insert_rows(conn, "INSERT INTO clicks (link_id, account_id, ts, device, browser, os, country, referrer,"
                       " campaign, user_agent, visitor_hash, is_bot)", 12,
                 [(c.link_id, c.account_id, c.ts, c.device, c.browser, c.os, c.country, c.referrer, c.campaign,
                   c.user_agent, c.visitor_hash, int(c.is_bot)) for c in clicks])
    per_link = Counter(c.link_id for c in clicks)
    if per_link:
        conn.execute("UPDATE links SET click_count = click_count + (j.value ->> 1) FROM json_each(?) AS j"
                     " WHERE links.id = j.value ->> 0", (_json(list(per_link.items())),))

    humans = [c for c in clicks if not c.is_bot]
    link_days = Counter((c.link_id, c.day, c.account_id) for c in humans)
    _insert_rows(conn, "INSERT INTO link_days (link_id, day, account_id, clicks)", 4,
                 [(*key, count) for key, count in link_days.items()],
                 "ON CONFLICT (link_id, day) DO UPDATE SET clicks = clicks + excluded.clicks")
    account_days = Counter((c.account_id, c.day) for c in humans)
    _insert_rows(conn, "INSERT INTO account_days (account_id, day, clicks)", 3,
                 [(*key, count) for key, count in account_days.items()],
                 "ON CONFLICT (account_id, day) DO UPDATE SET clicks = clicks + excluded.clicks")

    link_values: Counter = Counter()
    for code, field in enumerate(DIMENSIONS, start=1):
        link_values.update(zip([c.link_id for c in humans], repeat(code), [c.day for c in humans],
                               [getattr(c, field) for c in humans], [c.account_id for c in humans]))
    _insert_rows(conn, "INSERT INTO link_dimensions (link_id, dimension, day, value, account_id, clicks)", 6,
                 [(*key, count) for key, count in link_values.items()],
                 "ON CONFLICT (link_id, dimension, day, value) DO UPDATE SET clicks = clicks + excluded.clicks")
    account_values: Counter = Counter()
    for (_, code, day, value, account_id), count in link_values.items():
        account_values[(account_id, code, day, value)] += count
    _insert_rows(conn, "INSERT INTO account_dimensions (account_id, dimension, day, value, clicks)", 5,
                 [(*key, count) for key, count in account_values.items()],
                 "ON CONFLICT (account_id, dimension, day, value) DO UPDATE SET clicks = clicks + excluded.clicks")

    # New (link, day, visitor) rows count themselves in link_days and the account (triggers).
    _insert_rows(conn, "INSERT OR IGNORE INTO link_visitors (link_id, day, visitor_hash, account_id)", 4,
                 list(dict.fromkeys((c.link_id, c.day, c.visitor_hash, c.account_id) for c in humans)))
