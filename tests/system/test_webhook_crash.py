"""Webhooks with real server processes: a `kill -9` in the middle of delivering loses no event
(each link's event arrives, deduplicated by `webhook-id`, after a restart), and two processes
on PostgreSQL and Redis deliver each event once."""

from __future__ import annotations

import json
import signal
from concurrent.futures import ThreadPoolExecutor

import pytest

from shortlink.storage import connect
from tests.support.helpers import wait_for
from tests.support.receiver import running_receiver
from throwaway.live_server import LiveServer
from throwaway.redis_server import RedisServer

pytestmark = pytest.mark.slow

LINKS = 24
BROWSER = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"


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
            # Once the killed process's claims lapse (unrenewed for 10 s), everything arrives.
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


def attempts(location: str) -> int:
    conn = connect(location)
    try:
        return conn.execute("SELECT count(*) FROM webhook_attempts WHERE ok = 1").fetchone()[0]
    finally:
        conn.close()


def test_two_processes_on_postgresql_and_redis_deliver_each_event_once(tmp_path, postgres_server):
    storage = postgres_server.new_database()
    redis = RedisServer(tmp_path / "redis").start()
    servers = [
        LiveServer(tmp_path, storage=storage, redis_url=redis.url, fetcher_allow_private_addresses="true")
        for _ in range(2)
    ]
    key = servers[0].create_key("pair@example.com")
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    try:
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda server: server.start(), servers))
        with running_receiver() as receiver:
            status, body = servers[0].request(
                "POST",
                "/api/v1/webhooks",
                json.dumps({"url": receiver.url, "events": ["link.created", "link.clicked"]}),
                headers,
            )
            assert status == 201, body
            receiver.secrets = [json.loads(body)["data"]["secret"]]
            codes = []
            for number in range(LINKS):  # alternately through each process
                status, body = servers[number % 2].request(
                    "POST", "/api/v1/links", json.dumps({"originalUrl": f"https://example.com/{number}"}), headers
                )
                assert status == 201, body
                codes.append(json.loads(body)["data"]["shortCode"])
            # Both processes' deliverers (and click recorders) are at work on the same outbox.
            wait_for(lambda: all(server.request("GET", "/healthz")[0] == 200 for server in servers))
            for number, code in enumerate(codes):
                servers[(number + 1) % 2].request("GET", f"/l/{code}", headers={"User-Agent": BROWSER})
            wait_for(lambda: receiver.count() >= 2 * LINKS, timeout=120, what="every event")
            # Every attempt is recorded after its answer: one success per event, none made twice.
            wait_for(lambda: attempts(storage) >= 2 * LINKS, what="every attempt recorded")
            assert attempts(storage) == 2 * LINKS
            ids = [item.headers["webhook-id"] for item in receiver.received]
            assert len(ids) == len(set(ids)) == 2 * LINKS
            assert all(item.verified_by for item in receiver.received)
            kinds = [item.event["type"] for item in receiver.received]
            assert kinds.count("link.created") == kinds.count("link.clicked") == LINKS
    finally:
        for server in servers:
            if server.process is not None:
                server.stop()
        redis.stop()
