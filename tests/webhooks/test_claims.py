"""A claim (storage.webhooks.claim_due) reads each queue's head and the rows right after it
(migration 0016) and takes exactly what ranking every pending delivery would: the definition
below, the claim before 0016, checked against it on random states on both backends."""

from __future__ import annotations

import random

import pytest

from shortlink.accounts import service as accounts
from shortlink.storage import webhooks as store

pytestmark = pytest.mark.both_backends

# Every pending delivery of an enabled endpoint ranked in its queue: taken when nothing before
# it (itself included) waits for a retry or is leased, and it is among the first `per_link`.
DEFINITION = (
    "SELECT id FROM (SELECT d.id, d.event_id, row_number() OVER queue AS n,"
    " sum(CASE WHEN d.next_attempt_ms > ? OR d.lease_until_ms > ? THEN 1 ELSE 0 END) OVER queue AS held"
    " FROM webhook_deliveries AS d JOIN webhook_endpoints AS p ON p.id = d.endpoint_id"
    " JOIN webhook_events AS e ON e.id = d.event_id WHERE d.state = 'pending' AND p.is_enabled = 1"
    " WINDOW queue AS (PARTITION BY d.endpoint_id, coalesce(e.link_id, -e.id) ORDER BY d.event_id, d.id"
    " ROWS UNBOUNDED PRECEDING)) AS ranked WHERE held = 0 AND n <= ? ORDER BY event_id, id LIMIT ?"
)
NOW = 1_800_000_000_000


def endpoint(conn, account_id: int, number: int, enabled: bool) -> int:
    row = {
        "public_id": f"wh_claims{number}",
        "account_id": account_id,
        "url": f"https://hooks.example/{number}",
        "events": " link.clicked",
        "secret_nonce": "n",
        "is_enabled": int(enabled),
        "created_at": "2026-11-27T00:00:00Z",
        "updated_at": "2026-11-27T00:00:00Z",
    }
    return store.insert_endpoint(conn, row)["id"]


def test_a_claim_takes_what_ranking_every_pending_delivery_would(conn):
    account_id = accounts.ensure_account(conn, "claims@example.com")["id"]
    endpoints = [endpoint(conn, account_id, number, enabled=number != 2) for number in range(4)]
    chance = random.Random(38)
    deliveries = []
    for number in range(200):
        link = chance.choice([None, 1, 2, 3, 4, 5, 6, 7])  # None: an event without a link, a queue of its own
        event_id = conn.execute(
            "INSERT INTO webhook_events (public_id, account_id, type, link_id, created_ms, data, dispatched)"
            " VALUES (?, ?, 'link.clicked', ?, ?, '{}', 1) RETURNING id",
            (f"evt_claims{number}", account_id, link, NOW),
        ).fetchone()[0]
        for endpoint_id in chance.sample(endpoints, chance.randint(1, len(endpoints))):
            deliveries.append((event_id, endpoint_id, NOW))
    chance.shuffle(deliveries)  # row ids in another order than events: ties are broken by event, then id
    store.add_deliveries(conn, deliveries)
    ids = [row[0] for row in conn.execute("SELECT id FROM webhook_deliveries")]
    claimed_some = 0
    for _round in range(30):
        states = []
        for delivery_id in ids:  # a random state for every delivery
            state = chance.choices(["pending", "succeeded", "failed"], [6, 3, 1])[0]
            held = chance.choices(["no", "retry", "leased", "lapsed"], [12, 1, 1, 1])[0]
            next_attempt = NOW + 5000 if held == "retry" else NOW - chance.randint(0, 5000)
            lease = {"leased": NOW + 10_000, "lapsed": NOW - 1}.get(held, 0)
            states.append((state, next_attempt, lease, delivery_id))
        conn.executemany(
            "UPDATE webhook_deliveries SET state = ?, next_attempt_ms = ?, lease_until_ms = ? WHERE id = ?", states
        )
        limit, per_link = chance.choice([1, 5, 40, 2000]), chance.choice([1, 2, 7, 500])
        expected = [row[0] for row in conn.execute(DEFINITION, (NOW, NOW, per_link, limit))]
        claimed = [row["delivery_id"] for row in store.claim_due(conn, NOW, 10_000, limit, per_link)]
        assert claimed == expected, (limit, per_link)
        claimed_some += bool(claimed)
        # What was claimed is leased: claimed again at once, none of it comes back.
        again = {row["delivery_id"] for row in store.claim_due(conn, NOW, 10_000, limit, per_link)}
        assert again.isdisjoint(claimed)
    assert claimed_some >= 25
