"""SQL for webhooks: endpoints, the outbox of events, deliveries and their attempts.

Events are inserted by the transaction of the change that causes them (a link write, an
import's row, a click batch: see storage.clicks), so a rolled-back change leaves none. The
deliverer then fans each event out to a delivery per matching endpoint (`waiting_events`,
`add_deliveries`), claims due deliveries under a lease (`claim_due`: each link's in order; on
PostgreSQL the claims of several processes take turns, so that they never take the same one)
and records every attempt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shortlink.storage.base import Connection, Row, on_postgres, transaction

EXPIRY_MARK = "webhook_expiry_checked_until"


# Endpoints


def insert_endpoint(conn: Connection, row: dict[str, Any]) -> Row:
    columns = ", ".join(row)
    endpoint_id = conn.execute(
        f"INSERT INTO webhook_endpoints ({columns}) VALUES ({', '.join('?' * len(row))}) RETURNING id",
        tuple(row.values()),
    ).fetchone()[0]
    return conn.execute("SELECT * FROM webhook_endpoints WHERE id = ?", (endpoint_id,)).fetchone()


def endpoints_of_account(conn: Connection, account_id: int) -> list[Row]:
    return conn.execute(
        "SELECT * FROM webhook_endpoints WHERE account_id = ? ORDER BY created_at, id", (account_id,)
    ).fetchall()


def endpoint_of_account(conn: Connection, account_id: int, public_id: str) -> Row | None:
    return conn.execute(
        "SELECT * FROM webhook_endpoints WHERE account_id = ? AND public_id = ?", (account_id, public_id)
    ).fetchone()


def endpoint_by_public_id(conn: Connection, public_id: str) -> Row | None:
    return conn.execute("SELECT * FROM webhook_endpoints WHERE public_id = ?", (public_id,)).fetchone()


def update_endpoint(conn: Connection, endpoint_id: int, changes: dict[str, Any]) -> Row:
    assignments = ", ".join(f"{column} = ?" for column in changes)
    conn.execute(f"UPDATE webhook_endpoints SET {assignments} WHERE id = ?", (*changes.values(), endpoint_id))
    return conn.execute("SELECT * FROM webhook_endpoints WHERE id = ?", (endpoint_id,)).fetchone()


def delete_endpoint(conn: Connection, endpoint_id: int) -> None:
    """The endpoint goes with its deliveries and their attempts (ON DELETE CASCADE)."""
    with transaction(conn):
        conn.execute("DELETE FROM webhook_endpoints WHERE id = ?", (endpoint_id,))


def subscribed(conn: Connection, account_id: int, event_type: str) -> bool:
    """Whether an enabled endpoint of the account wants events of this type."""
    return (
        conn.execute(
            "SELECT 1 FROM webhook_endpoints WHERE account_id = ? AND is_enabled = 1 AND events LIKE ? LIMIT 1",
            (account_id, f"% {event_type} %"),
        ).fetchone()
        is not None
    )


def any_endpoint(conn: Connection) -> bool:
    """Whether the installation has a webhook endpoint at all (enabled or not)."""
    return conn.execute("SELECT 1 FROM webhook_endpoints LIMIT 1").fetchone() is not None


def subscribing_accounts(conn: Connection, event_type: str) -> list[int]:
    rows = conn.execute(
        "SELECT DISTINCT account_id FROM webhook_endpoints WHERE is_enabled = 1 AND events LIKE ?",
        (f"% {event_type} %",),
    )
    return [row[0] for row in rows]


def enabled_endpoints_of(conn: Connection, account_ids: Sequence[int]) -> list[Row]:
    if not account_ids:
        return []
    marks = ", ".join("?" * len(account_ids))
    return conn.execute(
        f"SELECT * FROM webhook_endpoints WHERE is_enabled = 1 AND account_id IN ({marks}) ORDER BY id",
        tuple(account_ids),
    ).fetchall()


# Events


def insert_event(conn: Connection, event: dict[str, Any]) -> int:
    columns = ", ".join(event)
    return conn.execute(
        f"INSERT INTO webhook_events ({columns}) VALUES ({', '.join('?' * len(event))}) RETURNING id",
        tuple(event.values()),
    ).fetchone()[0]


def event_public_id_sql(postgres: bool, ms: str, row: str) -> str:
    """An event id made by the database itself, for the events a click batch writes in SQL, in
    the format of webhooks.outbox.new_event_id (`ms`: the event's time in milliseconds; `row`: a
    column that tells the statement's rows apart, for PostgreSQL's random()). Time first: a
    random id lands anywhere in the unique index, a page read and written per event."""
    if postgres:
        random_part = f"substr(md5(random()::text || clock_timestamp()::text || {row}::text), 1, 20)"
        return f"'evt_' || lpad(to_hex({ms}), 12, '0') || {random_part}"
    return f"'evt_' || printf('%012x', {ms}) || lower(hex(randomblob(10)))"


def click_events_statement(b: str, postgres: bool) -> str:
    """The statement that adds a `link.clicked` event per human click of batch `b` (a FROM item
    with storage.clicks.StoredClick's columns and `position`) of an account with an enabled
    endpoint subscribed to it: the click's analytics labels, never its visitor hash or address.
    The link itself is added when the event is dispatched."""
    labels = ["device", "browser", "os", "country", "referrer", "campaign"]
    pairs = ", ".join(f"'{label}', b.{label}" for label in labels)
    build = f"json_build_object({pairs})::text" if postgres else f"json_object({pairs})"
    return (
        "INSERT INTO webhook_events (public_id, account_id, type, link_id, created_ms, data)"
        f" SELECT {event_public_id_sql(postgres, 'b.ts', 'b.position')}, b.account_id, 'link.clicked', b.link_id,"
        f" b.ts, {build}"
        f" FROM {b} WHERE b.is_bot = 0 AND b.account_id IN (SELECT account_id FROM webhook_endpoints"
        " WHERE is_enabled = 1 AND events LIKE '% link.clicked %') ORDER BY b.position"
    )


def cap_events_statement(b: str, postgres: bool) -> str:
    """The statement that adds a `link.cap_reached` event per link whose rules' maxClicks the
    human clicks of batch `b` reached, for an account with an enabled endpoint subscribed to it.
    It runs after the batch's `UPDATE link_rules SET human_clicks = ...` (storage.clicks), in its
    transaction: a link crossed its cap in this batch when its count is now at least maxClicks
    and was below it before the batch's clicks. The count only grows, so that happens once per
    cap; a cap raised later (a PUT of the rules keeps the count) is crossed, and sent, again.
    Its time is the batch's last human click of the link; the Link is added at dispatch."""
    if postgres:
        cap = "(r.document::json ->> 'maxClicks')::bigint"
    else:
        cap = "json_extract(r.document, '$.maxClicks')"
    return (
        "INSERT INTO webhook_events (public_id, account_id, type, link_id, created_ms, data)"
        f" SELECT {event_public_id_sql(postgres, 'n.ts', 'r.link_id')}, r.account_id, 'link.cap_reached', r.link_id,"
        " n.ts, 'null'"
        f" FROM (SELECT link_id, count(*) AS clicks, max(ts) AS ts FROM {b} WHERE is_bot = 0 GROUP BY link_id) AS n"
        " JOIN link_rules AS r ON r.link_id = n.link_id"
        " WHERE r.account_id IN (SELECT account_id FROM webhook_endpoints"
        " WHERE is_enabled = 1 AND events LIKE '% link.cap_reached %')"
        f" AND r.human_clicks >= {cap} AND r.human_clicks - n.clicks < {cap} ORDER BY r.link_id"
    )


def waiting_events(conn: Connection, limit: int) -> list[Row]:
    """The oldest events not yet fanned out to deliveries; on PostgreSQL locked for this
    transaction, skipping those another process holds."""
    lock = " FOR UPDATE SKIP LOCKED" if on_postgres(conn) else ""
    return conn.execute(
        f"SELECT * FROM webhook_events WHERE dispatched = 0 ORDER BY id LIMIT ?{lock}", (limit,)
    ).fetchall()


def waiting_event_count(conn: Connection) -> int:
    return conn.execute("SELECT count(*) FROM webhook_events WHERE dispatched = 0").fetchone()[0]


def event_count(conn: Connection) -> int:
    return conn.execute("SELECT count(*) FROM webhook_events").fetchone()[0]


def finish_dispatches(conn: Connection, plain: Sequence[int], completed: Sequence[tuple[str, str, int]]) -> None:
    """Mark events fanned out: `plain` as they are, `completed` as (data, link tags, id) with the
    data and tags dispatch gave them (a click's link)."""
    if plain:
        marks = ", ".join("?" * len(plain))
        conn.execute(f"UPDATE webhook_events SET dispatched = 1 WHERE id IN ({marks})", tuple(plain))
    if completed:
        conn.executemany("UPDATE webhook_events SET dispatched = 1, data = ?, link_tags = ? WHERE id = ?", completed)


def add_delivery(conn: Connection, event_id: int, endpoint_id: int, now_ms: int) -> None:
    add_deliveries(conn, [(event_id, endpoint_id, now_ms)])


def add_deliveries(conn: Connection, deliveries: Sequence[tuple[int, int, int]]) -> None:
    """(event id, endpoint id, first attempt at) each; one that exists already is left as it is."""
    if deliveries:
        conn.executemany(
            "INSERT INTO webhook_deliveries (event_id, endpoint_id, state, next_attempt_ms, queue)"
            " SELECT id, ?, 'pending', ?, coalesce(link_id, -id) FROM webhook_events WHERE id = ?"
            " ON CONFLICT (endpoint_id, event_id) DO NOTHING",
            [(endpoint_id, at, event_id) for event_id, endpoint_id, at in deliveries],
        )


def event_of_account(conn: Connection, account_id: int, public_id: str) -> Row | None:
    return conn.execute(
        "SELECT * FROM webhook_events WHERE account_id = ? AND public_id = ?", (account_id, public_id)
    ).fetchone()


# Deliveries


_DUE_COLUMNS = (
    "d.id AS delivery_id, d.attempts, d.first_failed_ms, e.public_id AS event_public_id, e.type, e.created_ms,"
    " e.link_id,"
    " e.data, p.id AS endpoint_id, p.public_id AS endpoint_public_id, p.url, p.secret_nonce, p.previous_nonce,"
    " p.previous_until_ms"
)


# pg_advisory_xact_lock key of the claims: any constant shared by every process.
CLAIM_LOCK = 38_0015


# A claim's statement. `queues`: every (endpoint, queue) with a pending delivery, found by
# skipping through webhook_deliveries_queue (a few index lookups a queue, never a scan of the
# pending rows); `heads`: the first pending delivery of each, kept when it is due and not leased,
# oldest first, no more queues than deliveries asked for (each gives at least its head, so the
# oldest `limit` rows all come from these); `bounds`: the event of each queue's `per_link`-th
# delivery; then each queue's rows up to it, taken while none before them is held.
_NEXT_QUEUE = (
    "(SELECT n.queue FROM webhook_deliveries AS n WHERE n.state = 'pending' AND n.endpoint_id = {endpoint}"
    " AND n.queue > {after} ORDER BY n.queue LIMIT 1)"
)
_NEXT_ENDPOINT = (
    "(SELECT m.endpoint_id FROM webhook_deliveries AS m WHERE m.state = 'pending' AND m.endpoint_id > q.endpoint_id"
    " ORDER BY m.endpoint_id LIMIT 1)"
)
_LOWEST = -(2**62)  # below every queue (a link's id, or minus an event's)
_CLAIM = f"""
WITH RECURSIVE queues(endpoint_id, queue) AS (
    SELECT endpoint_id, queue FROM (
           SELECT endpoint_id, queue FROM webhook_deliveries WHERE state = 'pending' ORDER BY endpoint_id, queue LIMIT 1
    ) AS first
  UNION ALL
    SELECT CASE WHEN {_NEXT_QUEUE.format(endpoint="q.endpoint_id", after="q.queue")} IS NULL
                THEN {_NEXT_ENDPOINT} ELSE q.endpoint_id END,
           coalesce({_NEXT_QUEUE.format(endpoint="q.endpoint_id", after="q.queue")},
                    {_NEXT_QUEUE.format(endpoint=_NEXT_ENDPOINT, after=_LOWEST)})
      FROM queues AS q WHERE q.endpoint_id IS NOT NULL
),
heads AS (
    SELECT h.endpoint_id, h.queue FROM queues AS q
      JOIN webhook_deliveries AS h ON h.id = (
           SELECT f.id FROM webhook_deliveries AS f WHERE f.state = 'pending' AND f.endpoint_id = q.endpoint_id
              AND f.queue = q.queue ORDER BY f.event_id, f.id LIMIT 1)
      JOIN webhook_endpoints AS p ON p.id = h.endpoint_id AND p.is_enabled = 1
     WHERE h.next_attempt_ms <= ? AND h.lease_until_ms <= ?
     ORDER BY h.event_id, h.id LIMIT ?
),
bounds AS (
    SELECT endpoint_id, queue, coalesce((
           SELECT l.event_id FROM webhook_deliveries AS l WHERE l.state = 'pending'
              AND l.endpoint_id = heads.endpoint_id AND l.queue = heads.queue
            ORDER BY l.event_id, l.id LIMIT 1 OFFSET ?), {2**62}) AS last_event
      FROM heads
)
SELECT id FROM (
    SELECT d.id, d.event_id, row_number() OVER queue AS n,
           sum(CASE WHEN d.next_attempt_ms > ? OR d.lease_until_ms > ? THEN 1 ELSE 0 END) OVER queue AS held
      FROM bounds AS b JOIN webhook_deliveries AS d ON d.state = 'pending' AND d.endpoint_id = b.endpoint_id
       AND d.queue = b.queue AND d.event_id <= b.last_event
    WINDOW queue AS (PARTITION BY d.endpoint_id, d.queue ORDER BY d.event_id, d.id ROWS UNBOUNDED PRECEDING)
) AS ranked WHERE held = 0 AND n <= ? ORDER BY event_id, id LIMIT ?
"""


def claim_due(conn: Connection, now_ms: int, lease_ms: int, limit: int, per_link: int) -> list[Row]:
    """Take up to `limit` due deliveries of enabled endpoints, leasing them until
    `now_ms + lease_ms`: no other deliverer takes them meanwhile, and a deliverer that dies
    holding them only delays them until the lease ends (at-least-once).

    Each endpoint's deliveries of one link form a queue in the order of their events (an event
    without a link is a queue of its own): only its head and the deliveries right after it are
    taken, up to `per_link`, and only while none before them waits for a retry or is leased by
    a deliverer. So a link's events go out one after another, in order, never side by side,
    and one that fails holds back the later ones until it succeeds or fails for good. Oldest
    event first. A claim reads each queue's head and at most `per_link` rows after it, however
    many deliveries wait (migration 0016). On PostgreSQL the claims of several processes take
    turns (a transaction advisory lock), so each sees the leases the one before it took."""
    postgres = on_postgres(conn)
    with transaction(conn):
        if postgres:
            conn.execute("SELECT pg_advisory_xact_lock(?)", (CLAIM_LOCK,))
        parameters = (now_ms, now_ms, limit, per_link - 1, now_ms, now_ms, per_link, limit)
        ids = [row[0] for row in conn.execute(_CLAIM, parameters).fetchall()]
        if not ids:
            return []
        marks = ", ".join("?" * len(ids))
        conn.execute(
            f"UPDATE webhook_deliveries SET lease_until_ms = ? WHERE id IN ({marks})", (now_ms + lease_ms, *ids)
        )
        return conn.execute(
            f"SELECT {_DUE_COLUMNS} FROM webhook_deliveries AS d JOIN webhook_events AS e ON e.id = d.event_id"
            f" JOIN webhook_endpoints AS p ON p.id = d.endpoint_id WHERE d.id IN ({marks}) ORDER BY d.event_id, d.id",
            tuple(ids),
        ).fetchall()


def renew(conn: Connection, delivery_ids: Sequence[int], until_ms: int) -> None:
    """Keep claimed deliveries leased until `until_ms` (their round is still sending)."""
    marks = ", ".join("?" * len(delivery_ids))
    conn.execute(
        f"UPDATE webhook_deliveries SET lease_until_ms = ? WHERE id IN ({marks}) AND state = 'pending'",
        (until_ms, *delivery_ids),
    )


def still_there(conn: Connection, endpoint_ids: Sequence[int], delivery_ids: Sequence[int]) -> set[int]:
    """Which of a round's deliveries still exist, their endpoint and themselves kept until the
    transaction ends: an endpoint deleted while the round sent (its deliveries went with it)
    has no attempt to record. On PostgreSQL the rows are locked FOR KEY SHARE, endpoints first
    as a delete's cascade takes them, so a delete that comes now waits for the settling rather
    than failing its foreign keys; one that came first is seen gone."""
    if not delivery_ids:
        return set()
    lock = " FOR KEY SHARE" if on_postgres(conn) else ""
    endpoints = sorted(set(endpoint_ids))
    marks = ", ".join("?" * len(endpoints))
    conn.execute(
        f"SELECT id FROM webhook_endpoints WHERE id IN ({marks}) ORDER BY id{lock}", tuple(endpoints)
    ).fetchall()
    ids = sorted(set(delivery_ids))
    marks = ", ".join("?" * len(ids))
    rows = conn.execute(f"SELECT id FROM webhook_deliveries WHERE id IN ({marks}) ORDER BY id{lock}", tuple(ids))
    return {row[0] for row in rows}


def release(conn: Connection, delivery_ids: Sequence[int]) -> None:
    """Give claimed deliveries back unsent (a round's time ran out, or one before them failed)."""
    if delivery_ids:
        marks = ", ".join("?" * len(delivery_ids))
        conn.execute(f"UPDATE webhook_deliveries SET lease_until_ms = 0 WHERE id IN ({marks})", tuple(delivery_ids))


def record_attempts(conn: Connection, attempts: Sequence[dict[str, Any]]) -> None:
    """Attempts with the same keys each."""
    if attempts:
        columns = ", ".join(attempts[0])
        conn.executemany(
            f"INSERT INTO webhook_attempts ({columns}) VALUES ({', '.join('?' * len(attempts[0]))})",
            [tuple(attempt.values()) for attempt in attempts],
        )


def settle_successes(conn: Connection, succeeded: Sequence[tuple[int, int, int]]) -> None:
    """(attempts, at, delivery id) each: delivered."""
    if succeeded:
        conn.executemany(
            "UPDATE webhook_deliveries SET state = 'succeeded', attempts = ?, next_attempt_ms = ?, lease_until_ms = 0"
            " WHERE id = ?",
            succeeded,
        )


def settle_delivery(
    conn: Connection, delivery_id: int, state: str, attempts: int, next_attempt_ms: int, first_failed_ms: int | None
) -> None:
    conn.execute(
        "UPDATE webhook_deliveries SET state = ?, attempts = ?, next_attempt_ms = ?, first_failed_ms = ?,"
        " lease_until_ms = 0 WHERE id = ?",
        (state, attempts, next_attempt_ms, first_failed_ms, delivery_id),
    )


def endpoint_succeeded(conn: Connection, endpoint_id: int) -> None:
    conn.execute(
        "UPDATE webhook_endpoints SET failing_since_ms = NULL WHERE id = ? AND failing_since_ms IS NOT NULL",
        (endpoint_id,),
    )


def endpoint_failed(conn: Connection, endpoint_id: int, now_ms: int) -> int:
    """Notes a failure; returns since when the endpoint has been failing."""
    conn.execute(
        "UPDATE webhook_endpoints SET failing_since_ms = ? WHERE id = ? AND failing_since_ms IS NULL",
        (now_ms, endpoint_id),
    )
    return conn.execute("SELECT failing_since_ms FROM webhook_endpoints WHERE id = ?", (endpoint_id,)).fetchone()[0]


def disable_endpoint(conn: Connection, endpoint_id: int, reason: str, updated_at: str) -> None:
    conn.execute(
        "UPDATE webhook_endpoints SET is_enabled = 0, disabled_reason = ?, updated_at = ? WHERE id = ?",
        (reason, updated_at, endpoint_id),
    )


def attempts_of_endpoint(conn: Connection, endpoint_id: int, limit: int, before_id: int | None) -> list[Row]:
    """The endpoint's delivery log, newest first, with each attempt's event and its delivery's state."""
    before = "" if before_id is None else " AND a.id < ?"
    params: tuple[Any, ...] = (endpoint_id,) if before_id is None else (endpoint_id, before_id)
    return conn.execute(
        "SELECT a.id, a.ts_ms, a.status, a.latency_ms, a.response_head, a.ok, d.state, d.attempts,"
        " e.public_id AS event_public_id, e.type FROM webhook_attempts AS a"
        " JOIN webhook_deliveries AS d ON d.id = a.delivery_id JOIN webhook_events AS e ON e.id = d.event_id"
        f" WHERE a.endpoint_id = ?{before} ORDER BY a.id DESC LIMIT ?",
        (*params, limit),
    ).fetchall()


def delivery_states(conn: Connection, endpoint_id: int) -> dict[str, int]:
    rows = conn.execute(
        "SELECT state, count(*) FROM webhook_deliveries WHERE endpoint_id = ? GROUP BY state", (endpoint_id,)
    )
    return {row[0]: row[1] for row in rows}


def replay_event(conn: Connection, endpoint_id: int, event_id: int, now_ms: int) -> None:
    """Deliver the event to the endpoint again, from a fresh start (a new delivery if it had none)."""
    with transaction(conn):
        add_delivery(conn, event_id, endpoint_id, now_ms)
        conn.execute(
            "UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_ms = ?,"
            " first_failed_ms = NULL, lease_until_ms = 0 WHERE endpoint_id = ? AND event_id = ?",
            (now_ms, endpoint_id, event_id),
        )


def replay_failed(conn: Connection, endpoint_id: int, now_ms: int) -> int:
    return conn.execute(
        "UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_ms = ?,"
        " first_failed_ms = NULL, lease_until_ms = 0 WHERE endpoint_id = ? AND state = 'failed'",
        (now_ms, endpoint_id),
    ).rowcount


def delete_before(conn: Connection, horizon_ms: int, limit: int) -> int:
    """Forget up to `limit` attempts and up to `limit` dispatched events older than
    `horizon_ms` (an event's deliveries and their attempts go with it); returns how many rows."""
    with transaction(conn):
        attempts = conn.execute(
            "DELETE FROM webhook_attempts WHERE id IN"
            " (SELECT id FROM webhook_attempts WHERE ts_ms < ? ORDER BY id LIMIT ?)",
            (horizon_ms, limit),
        ).rowcount
        events = conn.execute(
            "DELETE FROM webhook_events WHERE id IN (SELECT id FROM webhook_events"
            " WHERE created_ms < ? AND dispatched = 1 ORDER BY id LIMIT ?)",
            (horizon_ms, limit),
        ).rowcount
    return attempts + events


# Expiry


def expiry_mark(conn: Connection) -> str | None:
    """Up to when expired links have had their event; locked on PostgreSQL for this transaction."""
    lock = " FOR UPDATE" if on_postgres(conn) else ""
    row = conn.execute(f"SELECT value FROM settings WHERE name = ?{lock}", (EXPIRY_MARK,)).fetchone()
    return None if row is None else row[0]


def set_expiry_mark(conn: Connection, until: str) -> None:
    conn.execute(
        "INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        (EXPIRY_MARK, until),
    )


def links_expired_between(conn: Connection, after: str, until: str) -> list[Row]:
    """Links of accounts subscribed to `link.expired` whose expiry is in (after, until]."""
    return conn.execute(
        "SELECT * FROM links WHERE expires_at > ? AND expires_at <= ? AND account_id IN (SELECT account_id"
        " FROM webhook_endpoints WHERE is_enabled = 1 AND events LIKE '% link.expired %') ORDER BY expires_at, id",
        (after, until),
    ).fetchall()


def pending_delivery_count(conn: Connection) -> int:
    return conn.execute("SELECT count(*) FROM webhook_deliveries WHERE state = 'pending'").fetchone()[0]
