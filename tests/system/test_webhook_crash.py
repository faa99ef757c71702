"""Webhooks across a `kill -9` of a real server process in the middle of delivering: no event
lost (each link's event arrives, deduplicated by `webhook-id`, after a restart)."""

from __future__ import annotations

import json
import signal

import pytest

from tests.support.helpers import wait_for
from tests.support.receiver import running_receiver
from throwaway.live_server import LiveServer

pytestmark = pytest.mark.slow

LINKS = 24


@pytest.mark.both_backends
def test_a_server_killed_mid_delivery_loses_no_event(tmp_path, storage):
    server = LiveServer(tmp_path, storage=storage, fetcher_allow_private_addresses="true")
    key = server.create_key("hooks@example.com")
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    server.start()
    with running_receiver() as receiver:
        receiver.mode, receiver.delay = "slow", 2.0  # deliveries in flight when the kill comes
        status, body = server.request(
            "POST", "/api/v1/webhooks", json.dumps({"url": receiver.url, "events": ["link.created"]}), headers
        )
        assert status == 201, body
        receiver.secrets = [json.loads(body)["data"]["secret"]]
        links = []
        for number in range(LINKS):
            status, body = server.request(
                "POST", "/api/v1/links", json.dumps({"originalUrl": f"https://example.com/{number}"}), headers
            )
            assert status == 201, body
            links.append(json.loads(body)["data"]["id"])
        wait_for(lambda: receiver.count() >= 1, what="a delivery in flight")
        assert server.stop(signal.SIGKILL) == -signal.SIGKILL
        in_flight = receiver.count()
        assert in_flight < LINKS  # killed in the middle, with deliveries left to make

        receiver.mode = "ok"
        server.start()
        try:
            # After the killed process's claims expire (timeout + margin), everything arrives.
            wait_for(
                lambda: len({item.headers["webhook-id"] for item in receiver.received}) == LINKS,
                timeout=120,
                what="every event after the restart",
            )
        finally:
            server.stop()
        events = {}
        for item in receiver.received:
            if item.verified_by:
                events[item.headers["webhook-id"]] = item.event
        assert sorted(event["data"]["id"] for event in events.values()) == sorted(links)
        assert {event["type"] for event in events.values()} == {"link.created"}
