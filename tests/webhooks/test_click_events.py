"""`link.clicked`: one event per human click, written by the click recorder's batch transaction
with the analytics' labels and nothing that identifies the visitor; bots and previewers never."""

from __future__ import annotations

import json
import re
from datetime import datetime

import pytest

from shortlink.storage import webhooks as store
from tests.support.helpers import wait_for
from tests.support.receiver import running_receiver
from tests.support.visitors import DESKTOP, FACEBOOK_BOT, IPHONE, flush, make_link, visit

GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"


@pytest.mark.both_backends
@pytest.mark.slow
def test_human_clicks_become_events_with_labels_and_bots_never(make_client, auth, conn):
    client = make_client(fetcher_allow_private_addresses=True)
    link = make_link(client, auth)
    # Without a subscriber the batches write no event at all.
    visit(client, link["shortCode"], ua=IPHONE)
    flush(client)
    assert store.event_count(conn) == 0
    with running_receiver() as receiver:
        created = client.post(
            "/api/v1/webhooks", json={"url": receiver.url, "events": ["link.clicked"]}, headers=auth
        ).json()["data"]
        receiver.secrets = [created["secret"]]
        assert client.app.state.services.webhooks.clicks_wanted()
        visit(
            client,
            link["shortCode"],
            ua=IPHONE,
            query="utm_source=newsletter",
            Referer="https://news.example.com/story",
            **{"X-Forwarded-For": "81.2.69.160"},  # not a trusted proxy: neither used nor kept
        )
        for bot in (GOOGLEBOT, FACEBOOK_BOT):
            visit(client, link["shortCode"], ua=bot)
        visit(client, link["shortCode"], ua=DESKTOP)
        flush(client)
        wait_for(lambda: receiver.count() >= 2, what="two click events")
        events = receiver.verified_events()
        assert [event["type"] for event in events] == ["link.clicked", "link.clicked"]
        # A link's events arrive in the order of its clicks (docs/webhooks.md).
        first = events[0]["data"]
        assert first["link"]["id"] == link["id"] and first["link"]["clickCount"] >= 3
        assert first["click"] == {
            "device": "mobile",
            "browser": "Mobile Safari",
            "os": "iOS",
            "country": "Unknown",  # the test client's address is in no country table
            "referrer": "news.example.com",
            "campaign": "newsletter",
        }
        assert events[1]["data"]["click"]["device"] == "desktop"
        # Nothing that identifies the visitor, anywhere in what was sent or stored.
        raw = b"".join(item.body for item in receiver.received)
        assert b"81.2.69.160" not in raw and b"iPhone" not in raw
        stored = conn.execute("SELECT data FROM webhook_events").fetchall()
        assert all("81.2.69.160" not in row[0] for row in stored)
        # The bots' clicks are stored (as bots), but sent to no one.
        assert receiver.count() == 2
        # Ids made by the batch's statement: the click's time in milliseconds, then random bits.
        for item in receiver.received:
            event_id, created = item.headers["webhook-id"], json.loads(item.body)["timestamp"]
            assert re.fullmatch("evt_[0-9a-f]{32}", event_id), event_id
            assert int(event_id[4:16], 16) == int(datetime.fromisoformat(created).timestamp() * 1000)
        first_id, second_id = (item.headers["webhook-id"] for item in receiver.received)
        assert first_id[16:] != second_id[16:]
