"""Writing batches of clicks: raw rows, link counters and daily rollups, all together.

A batch is written in one transaction, so raw clicks, `links.click_count` and
the rollups always agree, even after a crash.

The event loop only labels each click and encodes the batch as one JSON array
(`encode_batch`, a single msgspec call). `write_batch` runs on the database
thread, and every count is made there, in SQL: the array is read once (on SQLite
into a temporary table), then one statement per table aggregates it with GROUP BY. That
is SQLite's C code on the other core, without the GIL, instead of Python on
the loop that serves the redirects. Per-row statements or Python work on the
database thread made the writer fall behind (measured): a thread releases and
re-takes the GIL around every SQLite call, and each re-take waits for the
busy event loop.
"""

from __future__ import annotations

import sqlite3
from typing import Any, NamedTuple

import msgspec

from shortlink.analytics.labels import UNKNOWN
from shortlink.storage.database import on_postgres, transaction

# The dimensions of link_dimensions / account_dimensions, coded 1, 2, ... in this order.
DIMENSIONS = ("device", "browser", "os", "country", "referrer", "campaign")
# Per dimension, the label whose rows are not stored (analytics.labels): a click of a
# sparse link would otherwise add a row per dimension to the writer's busiest tables.
UNSTORED = tuple(UNKNOWN[name] for name in DIMENSIONS)
# pg_advisory_xact_lock key that click batches take on PostgreSQL.
CLICK_BATCH_LOCK = 0x5EED_0002


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
    is_bot: int  # 1 for a bot or previewer: stored raw, left out of every rollup


def encode_batch(clicks: list[StoredClick]) -> str:
    """A batch as the one JSON array `write_batch` reads: a row of StoredClick's fields per click."""
    return msgspec.json.encode(clicks).decode()


def _columns(conn: sqlite3.Connection, types: str, alias: str = "") -> str:
    """The columns of JSON rows `[a, b, ...]`: `value ->> 0, ...`; on PostgreSQL cast to
    the SQL types named in `types` (its ->> gives text), e.g. "bigint text integer"."""
    prefix = f"{alias}." if alias else ""
    if not on_postgres(conn):
        return ", ".join(f"{prefix}value ->> {index}" for index in range(len(types.split())))
    return ", ".join(f"({prefix}value ->> {index})::{kind}" for index, kind in enumerate(types.split()))


def _json_rows(conn: sqlite3.Connection, alias: str = "j") -> str:
    """The rows of a JSON array parameter, as `alias.value`, numbered by `alias.key`."""
    if on_postgres(conn):
        return f"json_array_elements(?::json) WITH ORDINALITY AS {alias}(value, key)"
    return f"json_each(?) AS {alias}"


def delete_raw_clicks_before(conn: sqlite3.Connection, ts_ms: int, limit: int) -> int:
    """Delete up to `limit` raw clicks older than `ts_ms`, the oldest rows first; returns
    how many. The rollups, written with them, keep their history."""
    with transaction(conn):
        return conn.execute(
            "DELETE FROM click_rows WHERE id IN (SELECT id FROM click_rows WHERE ts < ? ORDER BY id LIMIT ?)",
            (ts_ms, limit),
        ).rowcount


# StoredClick's fields as SQL types, for `_load_batch`.
_STORED_TYPES = "bigint bigint bigint text text text text text text text text bigint integer"


def _load_batch(conn: sqlite3.Connection, batch: str) -> tuple[str, tuple]:
    """Make the batch (`encode_batch`) readable as a table `b` with StoredClick's columns:
    (the WITH clause that names it, the parameters that clause takes).

    SQLite parses the JSON once, into a temporary table of this connection; PostgreSQL
    reads the parameter in each statement (its JSON parsing is cheap, and a temporary
    table there would be a catalogue change per connection)."""
    columns = zip(_columns(conn, _STORED_TYPES, "j").split(", "), StoredClick._fields, strict=True)
    selected = ", ".join(f"{value} AS {name}" for value, name in columns)
    if on_postgres(conn):
        return f"WITH b AS MATERIALIZED (SELECT {selected}, j.key AS position FROM {_json_rows(conn)})", (batch,)
    conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS batch_clicks ({', '.join(StoredClick._fields)}, position)")
    conn.execute("DELETE FROM temp.batch_clicks")
    conn.execute(f"INSERT INTO temp.batch_clicks SELECT {selected}, j.key FROM {_json_rows(conn)}", (batch,))
    return "WITH b AS (SELECT * FROM temp.batch_clicks)", ()


def _add_dimension_counts(conn: sqlite3.Connection, with_batch: str, parameters: tuple, table: str, owner: str) -> None:
    """Add the batch's human clicks to `table` (link_dimensions or account_dimensions) per
    (owner, dimension, day, label), `owner` being its link_id or account_id, for each of
    DIMENSIONS (coded 1, 2, ...) but its unstored label; in key order (see write_batch)."""
    key = f"{owner}, dimension, day, value"
    account = ", min(account_id) AS account_id" if owner == "link_id" else ""
    counts = " UNION ALL ".join(
        f"SELECT {owner}, {code} AS dimension, day, {name} AS value{account}, count(*) AS clicks FROM b"
        f" WHERE is_bot = 0 AND {name} <> ? GROUP BY {owner}, day, {name}"
        for code, name in enumerate(DIMENSIONS, start=1)
    )
    columns = f"{key}, account_id, clicks" if account else f"{key}, clicks"
    conn.execute(
        f"{with_batch} INSERT INTO {table} ({columns}) SELECT {columns} FROM ({counts}) AS d"
        f" WHERE true ORDER BY {key} ON CONFLICT ({key}) DO UPDATE SET clicks = {table}.clicks + excluded.clicks",
        (*parameters, *UNSTORED),
    )


def write_batch(conn: sqlite3.Connection, batch: str) -> set[int]:
    """Store a batch (`encode_batch`) in one transaction: raw rows, link counters and every
    rollup, aggregated here in SQL. If some of its links were deleted meanwhile, store
    nothing and return their ids (the caller drops their clicks and retries)."""
    with transaction(conn):
        if on_postgres(conn):
            # Batches of every process one at a time: their rollup upserts would otherwise
            # lock rows in orders that deadlock each other.
            conn.execute("SELECT pg_advisory_xact_lock(?)", (CLICK_BATCH_LOCK,))
            batch = _without_nul(batch)
        with_batch, batch_parameters = _load_batch(conn, batch)
        missing = {
            row[0]
            for row in conn.execute(
                f"{with_batch} SELECT DISTINCT link_id FROM b WHERE link_id NOT IN (SELECT id FROM links)",
                batch_parameters,
            )
        }
        if missing:
            return missing
        # Each distinct user agent is stored once; a click refers to it by number.
        conn.execute(
            f"{with_batch} INSERT INTO user_agents (text, device, browser, os)"
            " SELECT user_agent, min(device), min(browser), min(os) FROM b WHERE true GROUP BY user_agent"
            " ON CONFLICT (text) DO NOTHING",
            batch_parameters,
        )
        conn.execute(
            f"{with_batch} INSERT INTO click_rows"
            " (link_id, account_id, ts, agent_id, country, referrer, campaign, visitor, is_bot)"
            " SELECT b.link_id, b.account_id, b.ts, u.id, b.country, b.referrer, b.campaign, b.visitor, b.is_bot"
            " FROM b JOIN user_agents AS u ON u.text = b.user_agent ORDER BY b.position",
            batch_parameters,
        )
        conn.execute(
            f"{with_batch} UPDATE links SET click_count = click_count + n.clicks"
            " FROM (SELECT link_id, count(*) AS clicks FROM b GROUP BY link_id) AS n WHERE links.id = n.link_id",
            batch_parameters,
        )
        # GROUP BY hands the rows over in key order, so that SQLite inserts along each
        # B-tree instead of all over it: cheaper for the many small rows of sparse links.
        conn.execute(
            f"{with_batch} INSERT INTO link_days (link_id, day, account_id, clicks)"
            " SELECT link_id, day, min(account_id), count(*) FROM b WHERE is_bot = 0 GROUP BY link_id, day"
            " ON CONFLICT (link_id, day) DO UPDATE SET clicks = link_days.clicks + excluded.clicks",
            batch_parameters,
        )
        conn.execute(
            f"{with_batch} INSERT INTO account_days (account_id, day, clicks)"
            " SELECT account_id, day, count(*) FROM b WHERE is_bot = 0 GROUP BY account_id, day"
            " ON CONFLICT (account_id, day) DO UPDATE SET clicks = account_days.clicks + excluded.clicks",
            batch_parameters,
        )
        _add_dimension_counts(conn, with_batch, batch_parameters, "link_dimensions", "link_id")
        _add_dimension_counts(conn, with_batch, batch_parameters, "account_dimensions", "account_id")
        # New (link, day, visitor) rows count themselves in link_days and the account (triggers).
        conn.execute(
            f"{with_batch} INSERT INTO link_visitors (link_id, day, visitor, account_id)"
            " SELECT link_id, day, visitor, min(account_id) FROM b WHERE is_bot = 0"
            " GROUP BY link_id, day, visitor ON CONFLICT DO NOTHING",
            batch_parameters,
        )
    return set()


def _without_nul(batch: str) -> str:
    """PostgreSQL text cannot hold a NUL, which a visitor can put in a campaign (?utm_source=%00):
    there it is stored as U+FFFD, rather than failing the batch again and again."""
    if "\\u0000" not in batch:
        return batch
    return msgspec.json.encode(_replace_nul(msgspec.json.decode(batch))).decode()


def _replace_nul(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, list):
        return [_replace_nul(item) for item in value]
    return value
