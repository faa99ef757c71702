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

On SQLite those statements run inside one statement of their own, a trigger's body
(`_sqlite_batch_writer`), which is the whole transaction; see there for why.
"""

from __future__ import annotations

import sqlite3
from typing import Any, NamedTuple

import msgspec

from shortlink.storage import webhooks as webhook_store
from shortlink.storage.base import Connection, on_postgres, transaction
from shortlink.storage.labels import UNKNOWN

# The dimensions of link_dimensions / account_dimensions, coded 1, 2, ... in this order.
DIMENSIONS = ("device", "browser", "os", "country", "referrer", "campaign")
# Per dimension, the label whose rows are not stored (storage.labels): a click of a
# sparse link would otherwise add a row per dimension to the writer's busiest tables.
UNSTORED = tuple(UNKNOWN[name] for name in DIMENSIONS)
# pg_advisory_xact_lock key that click batches take on PostgreSQL.
CLICK_BATCH_LOCK = 0x5EED_0002


class StoredClick(NamedTuple):
    """A click as the writer stores it. Its fields are named as the columns they fill, and the SQL
    reads those names: `link_id` is the link's primary key here, as in the tables."""

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
    rule: int = -1  # the link rule that sent the click (its index), -1: the link's own destination
    variant: int = -1  # the variant of that rule's split, -1: no split


def encode_batch(clicks: list[StoredClick]) -> str:
    """A batch as the one JSON array `write_batch` reads: a row of StoredClick's fields per click."""
    return msgspec.json.encode(clicks).decode()


def _columns(postgres: bool, types: str) -> str:
    """The columns of JSON rows `j`, each `[a, b, ...]`: `j.value ->> 0, ...`; on PostgreSQL
    cast to the SQL types named in `types` (its ->> gives text), e.g. "bigint text integer"."""
    if not postgres:
        return ", ".join(f"j.value ->> {index}" for index in range(len(types.split())))
    return ", ".join(f"(j.value ->> {index})::{kind}" for index, kind in enumerate(types.split()))


def _json_rows(postgres: bool, source: str = "?") -> str:
    """The rows of a JSON array (`source`: a parameter by default), as `j.value`, numbered
    by `j.key`."""
    if postgres:
        return f"json_array_elements({source}::json) WITH ORDINALITY AS j(value, key)"
    return f"json_each({source}) AS j"


def delete_raw_clicks_before(conn: Connection, ts_ms: int, limit: int) -> int:
    """Delete up to `limit` raw clicks older than `ts_ms`, the oldest rows first; returns
    how many. The rollups, written with them, keep their history."""
    with transaction(conn):
        return conn.execute(
            "DELETE FROM click_rows WHERE id IN (SELECT id FROM click_rows WHERE ts < ? ORDER BY id LIMIT ?)",
            (ts_ms, limit),
        ).rowcount


# A click's hour, counted since the epoch (the hourly rollups' key), and its hour of the day.
_HOUR = "ts / 3600000"
_HOUR_OF_DAY = "ts / 3600000 % 24"
# StoredClick's fields as SQL types, for `_batch_columns`.
_STORED_TYPES = "bigint bigint bigint text text text text text text text text bigint integer integer integer"
# The message of the abort that a batch with clicks of a deleted link ends in, on SQLite.
_DELETED_LINKS = "a link of the click batch was deleted"


def _batch_columns(postgres: bool) -> str:
    """The select list that reads a batch's JSON rows `j` as StoredClick's columns, and its
    `position` in the batch."""
    columns = zip(_columns(postgres, _STORED_TYPES).split(", "), StoredClick._fields, strict=True)
    return ", ".join(f"{value} AS {name}" for value, name in columns) + ", j.key AS position"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _dimension_rows(b: str, owner: str, period: str, extra: str = "") -> str:
    """The human clicks of `b` per (owner, dimension, period, value), but each dimension's
    unstored label, as one UNION ALL; `extra`: more aggregate columns."""
    moment = "day" if period == "day" else f"{_HOUR} AS hour"
    return " UNION ALL ".join(
        f"SELECT {owner}, {code} AS dimension, {moment}, {name} AS value{extra}, count(*) AS clicks FROM {b}"
        f" WHERE is_bot = 0 AND {name} <> {_literal(unstored)} GROUP BY {owner}, {period}, {name}"
        for code, (name, unstored) in enumerate(zip(DIMENSIONS, UNSTORED, strict=True), start=1)
    )


def forget_link_hours(conn: Connection, link_pk: int) -> None:
    """Take a link about to be deleted out of its account's hourly rollups, as its raw clicks
    count it (its daily rollups leave by trigger, with its own rows). Hours whose raw clicks
    were already deleted by the retention keep the link's share: nothing says what it was."""
    link = "(SELECT * FROM clicks WHERE link_id = ?) AS b"
    conn.execute(
        "UPDATE account_hours SET clicks = account_hours.clicks - r.clicks"
        f" FROM (SELECT account_id, {_HOUR} AS hour, count(*) AS clicks FROM {link} WHERE is_bot = 0"
        " GROUP BY account_id, hour) AS r"
        " WHERE account_hours.account_id = r.account_id AND account_hours.hour = r.hour",
        (link_pk,),
    )
    conn.execute(
        "UPDATE account_hour_dimensions SET clicks = account_hour_dimensions.clicks - r.clicks"
        f" FROM ({_dimension_rows(link, 'account_id', 'hour')}) AS r"
        " WHERE account_hour_dimensions.account_id = r.account_id AND account_hour_dimensions.dimension = r.dimension"
        " AND account_hour_dimensions.hour = r.hour AND account_hour_dimensions.value = r.value",
        (link_pk,) * len(DIMENSIONS),
    )


def _dimension_counts(b: str, table: str, owner: str, period: str = "day") -> str:
    """Add the batch's human clicks to `table` (link_dimensions, account_dimensions or
    account_hour_dimensions) per (owner, dimension, period, label), `owner` being its link_id or
    account_id and `period` its day or hour, for each of DIMENSIONS (coded 1, 2, ...) but its
    unstored label; in key order (see `_counting`)."""
    key = f"{owner}, dimension, {period}, value"
    account = ", min(account_id) AS account_id" if owner == "link_id" else ""
    counts = _dimension_rows(b, owner, period, account)
    columns = f"{key}, account_id, clicks" if account else f"{key}, clicks"
    return (
        f"INSERT INTO {table} ({columns}) SELECT {columns} FROM ({counts}) AS d"
        f" WHERE true ORDER BY {key} ON CONFLICT ({key}) DO UPDATE SET clicks = {table}.clicks + excluded.clicks"
    )


def _counting(b: str) -> list[str]:
    """The statements that store a batch whose links all exist, read from `b` (a FROM item
    named b with StoredClick's columns): raw rows, link counters and every rollup, each
    aggregated in SQL."""
    return [
        # Each distinct user agent is stored once; a click refers to it by number.
        "INSERT INTO user_agents (text, device, browser, os)"
        f" SELECT user_agent, min(device), min(browser), min(os) FROM {b} WHERE true GROUP BY user_agent"
        " ON CONFLICT (text) DO NOTHING",
        "INSERT INTO click_rows (link_id, account_id, ts, agent_id, country, referrer, campaign, visitor, is_bot,"
        " rule, variant)"
        " SELECT b.link_id, b.account_id, b.ts, u.id, b.country, b.referrer, b.campaign, b.visitor, b.is_bot,"
        " nullif(b.rule, -1), nullif(b.variant, -1)"
        f" FROM {b} JOIN user_agents AS u ON u.text = b.user_agent ORDER BY b.position",
        "UPDATE links SET click_count = click_count + n.clicks"
        f" FROM (SELECT link_id, count(*) AS clicks FROM {b} GROUP BY link_id) AS n WHERE links.id = n.link_id",
        # GROUP BY hands the rows over in key order, so that SQLite inserts along each
        # B-tree instead of all over it: cheaper for the many small rows of sparse links.
        "INSERT INTO link_days (link_id, day, account_id, clicks)"
        f" SELECT link_id, day, min(account_id), count(*) FROM {b} WHERE is_bot = 0 GROUP BY link_id, day"
        " ON CONFLICT (link_id, day) DO UPDATE SET clicks = link_days.clicks + excluded.clicks",
        "INSERT INTO account_days (account_id, day, clicks)"
        f" SELECT account_id, day, count(*) FROM {b} WHERE is_bot = 0 GROUP BY account_id, day"
        " ON CONFLICT (account_id, day) DO UPDATE SET clicks = account_days.clicks + excluded.clicks",
        _dimension_counts(b, "link_dimensions", "link_id"),
        _dimension_counts(b, "account_dimensions", "account_id"),
        # An account's hourly rollups (migration 0018): what its partial days are read from.
        "INSERT INTO account_hours (account_id, hour, clicks)"
        f" SELECT account_id, {_HOUR} AS hour, count(*) FROM {b} WHERE is_bot = 0 GROUP BY account_id, hour"
        " ORDER BY account_id, hour"
        " ON CONFLICT (account_id, hour) DO UPDATE SET clicks = account_hours.clicks + excluded.clicks",
        # Per link (migration 0021): what an account's top links over those hours are read from.
        "INSERT INTO link_hours (link_id, hour, clicks)"
        f" SELECT link_id, {_HOUR} AS hour, count(*) FROM {b} WHERE is_bot = 0 GROUP BY link_id, hour"
        " ORDER BY link_id, hour"
        " ON CONFLICT (link_id, hour) DO UPDATE SET clicks = link_hours.clicks + excluded.clicks",
        _dimension_counts(b, "account_hour_dimensions", "account_id", period="hour"),
        # New (link, day, visitor, hour) rows count themselves in the account, and in link_days
        # and account_days when the visitor is new for the day (triggers).
        "INSERT INTO link_visitors (link_id, day, visitor, hour, account_id)"
        f" SELECT link_id, day, visitor, {_HOUR_OF_DAY} AS hour, min(account_id) FROM {b} WHERE is_bot = 0"
        " GROUP BY link_id, day, visitor, hour ON CONFLICT DO NOTHING",
        *_rule_counts(b),
    ]


def _rule_counts(b: str) -> list[str]:
    """Link rules (migration 0012): the human clicks each link's rules document has seen (what
    maxClicks is measured against), and the daily rollups per rule and variant. Each reads only
    the batch's clicks that a rule sent, or that a link with rules had."""
    return [
        "UPDATE link_rules SET human_clicks = human_clicks + n.clicks"
        f" FROM (SELECT link_id, count(*) AS clicks FROM {b} WHERE is_bot = 0 GROUP BY link_id) AS n"
        " WHERE link_rules.link_id = n.link_id",
        "INSERT INTO link_rule_days (link_id, day, rule, variant, clicks)"
        f" SELECT link_id, day, rule, variant, count(*) FROM {b} WHERE is_bot = 0 AND rule >= 0"
        " GROUP BY link_id, day, rule, variant"
        " ON CONFLICT (link_id, day, rule, variant) DO UPDATE SET clicks = link_rule_days.clicks + excluded.clicks",
        "INSERT INTO link_rule_visitors (link_id, day, rule, variant, visitor)"
        f" SELECT link_id, day, rule, variant, visitor FROM {b} WHERE is_bot = 0 AND rule >= 0"
        " GROUP BY link_id, day, rule, variant, visitor ON CONFLICT DO NOTHING",
    ]


def write_batch(conn: Connection, batch: str, with_events: bool = False) -> set[int]:
    """Store a batch (`encode_batch`) in one transaction: raw rows, link counters and every
    rollup, aggregated here in SQL. If some of its links were deleted meanwhile, store
    nothing and return their ids (the caller drops their clicks and retries).

    `with_events`: also add a `link.clicked` webhook event per human click of an account
    subscribed to them, and a `link.cap_reached` event per link whose maxClicks the batch
    reached, in the same transaction (storage.webhooks.click_events_statement,
    cap_events_statement). Without it, the batch is written exactly as before webhooks existed."""
    if on_postgres(conn):
        return _write_batch_postgres(conn, batch, with_events)
    for statement in _SQLITE_BATCH_WRITER:
        conn.execute(statement)
    target = "click_batches_with_events" if with_events else "click_batches"
    try:
        conn.execute(f"INSERT INTO {target} (batch) VALUES (?)", (batch,))
    except sqlite3.IntegrityError as error:
        if str(error) != _DELETED_LINKS:
            raise
        return _deleted_links(conn, batch)
    return set()


def _deleted_links(conn: Connection, batch: str) -> set[int]:
    postgres = on_postgres(conn)
    link_id = _columns(postgres, "bigint")
    rows = conn.execute(
        f"SELECT DISTINCT {link_id} FROM {_json_rows(postgres)} WHERE {link_id} NOT IN (SELECT id FROM links)",
        (batch,),
    )
    return {row[0] for row in rows}


def _event_statements(b: str, postgres: bool) -> list[str]:
    """The batch's webhook events, after `_counting` (the cap's after its human_clicks update):
    its clicks' events, then the caps those clicks reached."""
    return [
        webhook_store.click_events_statement(b, postgres=postgres),
        webhook_store.cap_events_statement(b, postgres=postgres),
    ]


def _sqlite_batch_writer() -> tuple[str, ...]:
    """The writer connection's temporary objects that store a batch in one statement,
    `INSERT INTO click_batches (batch) VALUES (?)`: its trigger runs every statement.

    One statement outside BEGIN is its own transaction, and SQLite then writes no
    statement journal: within BEGIN, each upsert first copies every page it changes to a
    temporary file, so that it alone can be undone (docs/performance.md)."""
    fields = ", ".join(StoredClick._fields)
    # A trigger takes no parameters and may not name the schema of a table it writes: the
    # batch comes in as NEW.batch, and batch_clicks is found as the temporary table.
    read = f"SELECT {_batch_columns(False)} FROM {_json_rows(False, source='NEW.batch')}"
    body = [
        "DELETE FROM batch_clicks",
        f"INSERT INTO batch_clicks {read}",
        f"SELECT RAISE(ABORT, {_literal(_DELETED_LINKS)})"
        " WHERE EXISTS (SELECT 1 FROM batch_clicks WHERE link_id NOT IN (SELECT id FROM links))",
        *_counting("batch_clicks AS b"),
    ]
    with_events = [*body, *_event_statements("batch_clicks AS b", postgres=False)]
    return (
        # A trigger is compiled against the schema this connection last read, and an object
        # another connection renamed or dropped meanwhile fails the compile until something
        # reads the schema again: this read does, before every batch.
        "SELECT 1 FROM sqlite_schema LIMIT 0",
        f"CREATE TEMP TABLE IF NOT EXISTS batch_clicks ({fields}, position)",
        "CREATE TEMP VIEW IF NOT EXISTS click_batches (batch) AS SELECT NULL",
        "CREATE TEMP TRIGGER IF NOT EXISTS write_click_batch INSTEAD OF INSERT ON click_batches BEGIN "
        + "; ".join(body)
        + "; END",
        # The same and the batch's webhook events, for when an endpoint subscribes to clicks.
        "CREATE TEMP VIEW IF NOT EXISTS click_batches_with_events (batch) AS SELECT NULL",
        "CREATE TEMP TRIGGER IF NOT EXISTS write_click_batch_with_events INSTEAD OF INSERT"
        " ON click_batches_with_events BEGIN " + "; ".join(with_events) + "; END",
    )


_SQLITE_BATCH_WRITER = _sqlite_batch_writer()


def _write_batch_postgres(conn: Connection, batch: str, with_events: bool) -> set[int]:
    """The same statements, reading the batch parameter (a temporary table there would be
    a catalogue change per connection) in as few statements as their order allows."""
    with transaction(conn):
        # Batches of every process one at a time: their rollup upserts would otherwise
        # lock rows in orders that deadlock each other.
        conn.execute("SELECT pg_advisory_xact_lock(?)", (CLICK_BATCH_LOCK,))
        batch = _without_nul(batch)
        if missing := _deleted_links(conn, batch):
            return missing
        with_batch = f"WITH b AS MATERIALIZED (SELECT {_batch_columns(True)} FROM {_json_rows(True)})"
        agents, *counting = _counting("b")
        # The raw rows need the agents' ids, so the agents go first. Every other upsert writes a
        # table of its own, so they run as one statement reading the batch once: parsing it
        # again for each was most of each statement's time (docs/performance.md). The
        # link_visitors trigger fires at the end of that statement, its rollups already written.
        together = ", ".join(f"w{index} AS ({statement})" for index, statement in enumerate(counting))
        statements = [f"{with_batch} {agents}", f"{with_batch}, {together} SELECT 1"]
        if with_events:
            statements += [f"{with_batch} {statement}" for statement in _event_statements("b", postgres=True)]
        for statement in statements:
            conn.execute(statement, (batch,))
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


# Imported history (shortlink.application.imports): written by an import, which has no event loop to keep
# free, in transactions far larger than a live batch, as a rollup pass rewrites every page it
# touches (the rollups of a long history are spread over the whole of each table). On SQLite,
# batches are staged in a temporary table, each with one executemany (reading a JSON array took
# a third of a live batch's time), then one trigger stores all that is staged with the same
# statements as a live batch (`_counting`): rollups are kept exactly as for visits. PostgreSQL
# takes the live path at once, a batch per transaction: its statements read the JSON themselves.
IMPORT_BATCH_PLACES = ", ".join("?" * (len(StoredClick._fields) + 1))


def stage_imported_clicks(conn: Connection, batch: list[StoredClick], first_position: int) -> int:
    """Stage a batch of imported clicks (their order in the batch numbered from
    `first_position`); returns how many were stored at once (all of them on PostgreSQL,
    less those of links deleted meanwhile; none on SQLite: see `write_staged_clicks`)."""
    if on_postgres(conn):
        while missing := _write_batch_postgres(conn, encode_batch(batch), with_events=False):
            batch = [click for click in batch if click.link_id not in missing]
        return len(batch)
    for statement in _SQLITE_IMPORT_WRITER:
        conn.execute(statement)
    with transaction(conn):  # the temporary table's own: nothing of the database changes
        if first_position == 0:  # a new import: nothing left by one that failed on this connection
            conn.execute("DELETE FROM imported_clicks")
        conn.executemany(
            f"INSERT INTO imported_clicks VALUES ({IMPORT_BATCH_PLACES})",
            ((*click, position) for position, click in enumerate(batch, start=first_position)),
        )
    return 0


def write_staged_clicks(conn: Connection) -> int:
    """Store every staged click in one transaction, as `write_batch` stores a batch (raw rows,
    counters, rollups), leaving out those of links deleted meanwhile; returns how many."""
    if on_postgres(conn):
        return 0
    for statement in _SQLITE_IMPORT_WRITER:
        conn.execute(statement)
    while True:
        with transaction(conn):
            conn.execute("DELETE FROM imported_clicks WHERE link_id NOT IN (SELECT id FROM links)")
        staged = conn.execute("SELECT count(*) FROM imported_clicks").fetchone()[0]
        try:
            if staged:
                conn.execute("INSERT INTO imported_click_batches (batch) VALUES (NULL)")
        except sqlite3.IntegrityError as error:
            if str(error) != _DELETED_LINKS:
                raise
            continue  # a link deleted by another process since the DELETE above
        with transaction(conn):
            conn.execute("DELETE FROM imported_clicks")
        return staged


def _sqlite_import_writer() -> tuple[str, ...]:
    """The writer connection's temporary objects for imported clicks: the staging table, and
    the trigger that stores it in one statement (see `_sqlite_batch_writer`)."""
    body = [
        f"SELECT RAISE(ABORT, {_literal(_DELETED_LINKS)})"
        " WHERE EXISTS (SELECT 1 FROM imported_clicks WHERE link_id NOT IN (SELECT id FROM links))",
        *_counting("imported_clicks AS b"),
    ]
    return (
        "SELECT 1 FROM sqlite_schema LIMIT 0",
        f"CREATE TEMP TABLE IF NOT EXISTS imported_clicks ({', '.join(StoredClick._fields)}, position)",
        "CREATE TEMP VIEW IF NOT EXISTS imported_click_batches (batch) AS SELECT NULL",
        "CREATE TEMP TRIGGER IF NOT EXISTS write_imported_click_batch INSTEAD OF INSERT ON imported_click_batches"
        " BEGIN " + "; ".join(body) + "; END",
    )


_SQLITE_IMPORT_WRITER = _sqlite_import_writer()
