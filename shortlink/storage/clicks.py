"""Writing batches of clicks: raw rows, link counters and daily rollups, all together.

A batch is written in one transaction, so raw clicks, `links.click_count` and
the rollups always agree, even after a crash.

The work is split in two on purpose. `encode_batch` (pure Python: aggregation
and JSON) runs on the event loop; `write_batch` runs on the database thread and
is almost all SQLite C code: one statement per table, each taking the whole
batch as one JSON array (json_each). A thread releases and re-takes the GIL
around every SQLite call, and under load each re-take waits for the busy event
loop, so per-row statements or Python work on the database thread made the
writer fall seconds behind the redirects (measured).
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from itertools import repeat
from typing import NamedTuple

import msgspec

from shortlink.storage.database import transaction

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
    visitor: int
    is_bot: bool


class EncodedBatch(NamedTuple):
    """One batch as the JSON arrays its statements read."""

    link_ids: str
    user_agents: str
    clicks: str
    per_link: str
    link_days: str
    account_days: str
    link_values: str
    account_values: str
    link_visitors: str


def _json(rows: list) -> str:
    return msgspec.json.encode(rows).decode()


def encode_batch(clicks: list[StoredClick]) -> EncodedBatch:
    per_link = Counter(c.link_id for c in clicks)
    humans = [c for c in clicks if not c.is_bot]
    link_days = Counter((c.link_id, c.day, c.account_id) for c in humans)
    account_days = Counter((c.account_id, c.day) for c in humans)
    link_values: Counter = Counter()
    for code, field in enumerate(DIMENSIONS, start=1):
        link_values.update(
            zip(
                [c.link_id for c in humans],
                repeat(code),
                [c.day for c in humans],
                [getattr(c, field) for c in humans],
                [c.account_id for c in humans],
            )
        )
    account_values: Counter = Counter()
    for (_, code, day, value, account_id), count in link_values.items():
        account_values[(account_id, code, day, value)] += count
    return EncodedBatch(
        link_ids=_json(list(per_link)),
        user_agents=_json(list({c.user_agent: (c.user_agent, c.device, c.browser, c.os) for c in clicks}.values())),
        clicks=_json(
            [
                (
                    c.link_id,
                    c.account_id,
                    c.ts,
                    c.user_agent,
                    c.country,
                    c.referrer,
                    c.campaign,
                    c.visitor,
                    int(c.is_bot),
                )
                for c in clicks
            ]
        ),
        per_link=_json(list(per_link.items())),
        link_days=_json([(*key, count) for key, count in link_days.items()]),
        account_days=_json([(*key, count) for key, count in account_days.items()]),
        link_values=_json([(*key, count) for key, count in link_values.items()]),
        account_values=_json([(*key, count) for key, count in account_values.items()]),
        link_visitors=_json(list(dict.fromkeys((c.link_id, c.day, c.visitor, c.account_id) for c in humans))),
    )


def _columns(count: int) -> str:
    return ", ".join(f"value ->> {index}" for index in range(count))


def _insert_rows(
    conn: sqlite3.Connection, head: str, width: int, rows: str, tail: str = "", key_width: int = 0
) -> None:
    """Insert a JSON array of rows; with key_width, in the order of their first key_width
    columns (the table's primary key), so that SQLite inserts along the B-tree instead of
    all over it: cheaper for the many small rollup rows of sparse links.
    The sort runs here, in SQLite on the database thread, not on the event loop."""
    order = f"ORDER BY {', '.join(str(column) for column in range(1, key_width + 1))}" if key_width else ""
    conn.execute(f"{head} SELECT {_columns(width)} FROM json_each(?) WHERE true {order} {tail}", (rows,))


def delete_raw_clicks_before(conn: sqlite3.Connection, ts_ms: int, limit: int) -> int:
    """Delete up to `limit` raw clicks older than `ts_ms`, the oldest rows first; returns
    how many. The rollups, written with them, keep their history."""
    with transaction(conn):
        return conn.execute(
            "DELETE FROM click_rows WHERE id IN (SELECT id FROM click_rows WHERE ts < ? ORDER BY id LIMIT ?)",
            (ts_ms, limit),
        ).rowcount


def write_batch(conn: sqlite3.Connection, batch: EncodedBatch) -> set[int]:
    """Store a batch in one transaction. If some of its links were deleted meanwhile,
    store nothing and return their ids (the caller drops their clicks and retries)."""
    with transaction(conn):
        missing = {
            row[0]
            for row in conn.execute(
                "SELECT value FROM json_each(?) WHERE value NOT IN (SELECT id FROM links)", (batch.link_ids,)
            )
        }
        if missing:
            return missing
        # Each distinct user agent is stored once; a click refers to it by number.
        _insert_rows(
            conn,
            "INSERT INTO user_agents (text, device, browser, os)",
            4,
            batch.user_agents,
            "ON CONFLICT (text) DO NOTHING",
        )
        conn.execute(
            "INSERT INTO click_rows (link_id, account_id, ts, agent_id, country, referrer, campaign, visitor, is_bot)"
            " SELECT j.value ->> 0, j.value ->> 1, j.value ->> 2, u.id, j.value ->> 4, j.value ->> 5,"
            " j.value ->> 6, j.value ->> 7, j.value ->> 8"
            " FROM json_each(?) AS j JOIN user_agents AS u ON u.text = j.value ->> 3 ORDER BY j.key",
            (batch.clicks,),
        )
        conn.execute(
            "UPDATE links SET click_count = click_count + (j.value ->> 1) FROM json_each(?) AS j"
            " WHERE links.id = j.value ->> 0",
            (batch.per_link,),
        )
        _insert_rows(
            conn,
            "INSERT INTO link_days (link_id, day, account_id, clicks)",
            4,
            batch.link_days,
            "ON CONFLICT (link_id, day) DO UPDATE SET clicks = clicks + excluded.clicks",
        )
        _insert_rows(
            conn,
            "INSERT INTO account_days (account_id, day, clicks)",
            3,
            batch.account_days,
            "ON CONFLICT (account_id, day) DO UPDATE SET clicks = clicks + excluded.clicks",
        )
        _insert_rows(
            conn,
            "INSERT INTO link_dimensions (link_id, dimension, day, value, account_id, clicks)",
            6,
            batch.link_values,
            "ON CONFLICT (link_id, dimension, day, value) DO UPDATE SET clicks = clicks + excluded.clicks",
            key_width=4,
        )
        _insert_rows(
            conn,
            "INSERT INTO account_dimensions (account_id, dimension, day, value, clicks)",
            5,
            batch.account_values,
            "ON CONFLICT (account_id, dimension, day, value) DO UPDATE SET clicks = clicks + excluded.clicks",
        )
        # New (link, day, visitor) rows count themselves in link_days and the account (triggers).
        _insert_rows(
            conn,
            "INSERT OR IGNORE INTO link_visitors (link_id, day, visitor, account_id)",
            4,
            batch.link_visitors,
            key_width=3,
        )
    return set()
