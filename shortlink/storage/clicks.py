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


class BatchEncoder:
    """A batch's JSON arrays, aggregated a chunk of clicks at a time: the click writer
    yields to the event loop between chunks, so no batch stalls visits for long."""

    def __init__(self) -> None:
        self.clicks: list[StoredClick] = []
        self._rows: list[tuple] = []
        self._agents: dict[str, tuple[str, str, str, str]] = {}
        self._per_link: Counter = Counter()
        self._link_days: Counter = Counter()
        self._account_days: Counter = Counter()
        self._link_values: Counter = Counter()
        self._account_values: Counter = Counter()
        self._visitors: dict[tuple, None] = {}

    def add(self, clicks: list[StoredClick]) -> None:
        self.clicks += clicks
        self._rows += [
            (c.link_id, c.account_id, c.ts, c.user_agent, c.country, c.referrer, c.campaign, c.visitor, int(c.is_bot))
            for c in clicks
        ]
        self._agents.update((c.user_agent, (c.user_agent, c.device, c.browser, c.os)) for c in clicks)
        self._per_link.update(c.link_id for c in clicks)
        humans = [c for c in clicks if not c.is_bot]
        self._link_days.update((c.link_id, c.day, c.account_id) for c in humans)
        self._account_days.update((c.account_id, c.day) for c in humans)
        for code, (field, unstored) in enumerate(zip(DIMENSIONS, UNSTORED, strict=True), start=1):
            labelled = [(c, value) for c in humans if (value := getattr(c, field)) != unstored]
            self._link_values.update((c.link_id, code, c.day, value, c.account_id) for c, value in labelled)
            self._account_values.update((c.account_id, code, c.day, value) for c, value in labelled)
        self._visitors.update(dict.fromkeys((c.link_id, c.day, c.visitor, c.account_id) for c in humans))

    def encode(self) -> EncodedBatch:
        return EncodedBatch(
            link_ids=_json(list(self._per_link)),
            user_agents=_json(list(self._agents.values())),
            clicks=_json(self._rows),
            per_link=_json(list(self._per_link.items())),
            link_days=_json([(*key, count) for key, count in self._link_days.items()]),
            account_days=_json([(*key, count) for key, count in self._account_days.items()]),
            link_values=_json([(*key, count) for key, count in self._link_values.items()]),
            account_values=_json([(*key, count) for key, count in self._account_values.items()]),
            link_visitors=_json(list(self._visitors)),
        )


def encode_batch(clicks: list[StoredClick]) -> EncodedBatch:
    encoder = BatchEncoder()
    encoder.add(clicks)
    return encoder.encode()


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


def _insert_rows(
    conn: sqlite3.Connection, head: str, types: str, rows: str, tail: str = "", key_width: int = 0
) -> None:
    """Insert a JSON array of rows; with key_width, in the order of their first key_width
    columns (the table's primary key), so that SQLite inserts along the B-tree instead of
    all over it: cheaper for the many small rollup rows of sparse links.
    The sort runs here, in SQLite on the database thread, not on the event loop."""
    order = f"ORDER BY {', '.join(str(column) for column in range(1, key_width + 1))}" if key_width else ""
    conn.execute(f"{head} SELECT {_columns(conn, types)} FROM {_json_rows(conn)} WHERE true {order} {tail}", (rows,))


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
        if on_postgres(conn):
            # Batches of every process one at a time: their rollup upserts would otherwise
            # lock rows in orders that deadlock each other.
            conn.execute("SELECT pg_advisory_xact_lock(?)", (CLICK_BATCH_LOCK,))
            batch = _batch_without_nul(batch)
        missing = {
            row[0]
            for row in conn.execute(
                "SELECT value::bigint FROM json_array_elements_text(?::json) AS j(value)"
                " WHERE value::bigint NOT IN (SELECT id FROM links)"
                if on_postgres(conn)
                else "SELECT value FROM json_each(?) WHERE value NOT IN (SELECT id FROM links)",
                (batch.link_ids,),
            )
        }
        if missing:
            return missing
        # Each distinct user agent is stored once; a click refers to it by number.
        _insert_rows(
            conn,
            "INSERT INTO user_agents (text, device, browser, os)",
            "text text text text",
            batch.user_agents,
            "ON CONFLICT (text) DO NOTHING",
        )
        click = _columns(conn, "bigint bigint bigint text text text text bigint integer", "j").split(", ")
        conn.execute(
            "INSERT INTO click_rows (link_id, account_id, ts, agent_id, country, referrer, campaign, visitor, is_bot)"
            f" SELECT {', '.join(click[:3])}, u.id, {', '.join(click[4:])}"
            f" FROM {_json_rows(conn)} JOIN user_agents AS u ON u.text = {click[3]} ORDER BY j.key",
            (batch.clicks,),
        )
        link_id, count = _columns(conn, "bigint bigint", "j").split(", ")
        conn.execute(
            f"UPDATE links SET click_count = click_count + {count} FROM {_json_rows(conn)} WHERE links.id = {link_id}",
            (batch.per_link,),
        )
        _insert_rows(
            conn,
            "INSERT INTO link_days (link_id, day, account_id, clicks)",
            "bigint text bigint integer",
            batch.link_days,
            "ON CONFLICT (link_id, day) DO UPDATE SET clicks = link_days.clicks + excluded.clicks",
        )
        _insert_rows(
            conn,
            "INSERT INTO account_days (account_id, day, clicks)",
            "bigint text integer",
            batch.account_days,
            "ON CONFLICT (account_id, day) DO UPDATE SET clicks = account_days.clicks + excluded.clicks",
        )
        _insert_rows(
            conn,
            "INSERT INTO link_dimensions (link_id, dimension, day, value, account_id, clicks)",
            "bigint integer text text bigint integer",
            batch.link_values,
            "ON CONFLICT (link_id, dimension, day, value) DO UPDATE"
            " SET clicks = link_dimensions.clicks + excluded.clicks",
            key_width=4,
        )
        _insert_rows(
            conn,
            "INSERT INTO account_dimensions (account_id, dimension, day, value, clicks)",
            "bigint integer text text integer",
            batch.account_values,
            "ON CONFLICT (account_id, dimension, day, value) DO UPDATE"
            " SET clicks = account_dimensions.clicks + excluded.clicks",
        )
        # New (link, day, visitor) rows count themselves in link_days and the account (triggers).
        _insert_rows(
            conn,
            "INSERT INTO link_visitors (link_id, day, visitor, account_id)",
            "bigint text bigint bigint",
            batch.link_visitors,
            "ON CONFLICT DO NOTHING",
            key_width=3,
        )
    return set()


def _batch_without_nul(batch: EncodedBatch) -> EncodedBatch:
    """PostgreSQL text cannot hold a NUL, which a visitor can put in a campaign (?utm_source=%00):
    there it is stored as U+FFFD, rather than failing the batch again and again."""
    if not any("\\u0000" in rows for rows in batch):
        return batch
    clean = [msgspec.json.decode(rows) for rows in batch]
    return EncodedBatch(*(_json(_replace_nul(rows)) for rows in clean))


def _replace_nul(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, list):
        return [_replace_nul(item) for item in value]
    return value
