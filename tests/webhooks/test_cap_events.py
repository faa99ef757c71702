"""`link.cap_reached`: one event when a link's counted human clicks reach its rules' maxClicks,
written by the click batch that reaches it; bots never reach it, a reached cap never sends
twice, and a cap raised later sends again when the clicks reach it."""

from __future__ import annotations

import pytest

from shortlink.storage import webhooks as store
from tests.support.helpers import wait_for
from tests.support.receiver import running_receiver
from tests.support.visitors import DESKTOP, FACEBOOK_BOT, IPHONE, flush, make_link, visit

GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"


def _cap_events(conn) -> int:
    return conn.execute("SELECT count(*) FROM webhook_events WHERE type = 'link.cap_reached'").fetchone()[0]


def _settled(conn) -> bool:
    return store.waiting_event_count(conn) == 0 and store.pending_delivery_count(conn) == 0


@pytest.mark.both_backends
@pytest.mark.slow
def test_the_cap_reached_by_human_clicks_sends_one_event_and_a_raised_cap_another(make_client, auth, conn):
    client = make_client(fetcher_allow_private_addresses=True)
    link = make_link(client, auth)
    code = link["shortCode"]
    rules_url = f"/api/v1/links/{link['id']}/rules"
    assert client.put(rules_url, json={"rules": [], "maxClicks": 3}, headers=auth).status_code == 200
    with running_receiver() as receiver:
        created = client.post(
            "/api/v1/webhooks", json={"url": receiver.url, "events": ["link.cap_reached"]}, headers=auth
        )
        assert created.status_code == 201, created.text
        receiver.secrets = [created.json()["data"]["secret"]]
        assert client.app.state.services.webhooks.clicks_wanted()
        # Bots and previewers, however many, never use the cap up nor reach it.
        for _ in range(4):
            for bot in (GOOGLEBOT, FACEBOOK_BOT):
                assert visit(client, code, ua=bot).status_code == 302
        assert visit(client, code, ua=IPHONE).status_code == 302
        flush(client)
        assert _cap_events(conn) == 0
        # The third human click reaches the cap (a batch of two, so the crossing is inside it);
        # the fourth finds the link capped.
        statuses = [visit(client, code, ua=ua).status_code for ua in (DESKTOP, IPHONE, DESKTOP)]
        assert statuses == [302, 302, 410]
        flush(client)
        assert _cap_events(conn) == 1
        wait_for(lambda: receiver.count() >= 1 and _settled(conn), what="the cap event delivered")
        events = receiver.verified_events()
        assert [event["type"] for event in events] == ["link.cap_reached"]
        # The data is the API's Link object, as GET answers it.
        shown = client.get(f"/api/v1/links/{link['id']}", headers=auth).json()["data"]
        assert events[0]["data"] == shown and shown["clickCount"] == 11
        # A capped link's further visits (people and bots) reach nothing again.
        for ua in (IPHONE, DESKTOP, GOOGLEBOT):
            assert visit(client, code, ua=ua).status_code == 410
        flush(client)
        assert _cap_events(conn) == 1
        # Raising the cap keeps the count (3): the clicks reach the new cap and send again.
        assert client.put(rules_url, json={"rules": [], "maxClicks": 5}, headers=auth).status_code == 200
        assert [visit(client, code, ua=IPHONE).status_code for _ in range(3)] == [302, 302, 410]
        flush(client)
        wait_for(lambda: receiver.count() >= 2 and _settled(conn), what="the second cap event delivered")
        assert receiver.types() == ["link.cap_reached", "link.cap_reached"]
        assert len({item.headers["webhook-id"] for item in receiver.received}) == 2
        assert all(item.verified_by for item in receiver.received)
        assert _cap_events(conn) == 2
        # Lowering the cap below the count caps the link at once, but no click reached it: no event.
        assert client.put(rules_url, json={"rules": [], "maxClicks": 2}, headers=auth).status_code == 200
        assert visit(client, code, ua=DESKTOP).status_code == 410
        flush(client)
        assert _cap_events(conn) == 2 and receiver.count() == 2
