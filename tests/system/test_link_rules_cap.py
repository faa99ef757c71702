"""Link rules' cap on human clicks across two real server processes on PostgreSQL and Redis:
exactly maxClicks people reach the destination, everyone after them the fallback, and bots sent
meanwhile never use the cap up (at 32 concurrent connections)."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from shortlink.storage import connect
from tests.conftest import bearer
from tests.support.helpers import wait_for
from throwaway.live_server import LiveServer
from throwaway.redis_server import RedisServer

pytestmark = [pytest.mark.system, pytest.mark.slow]

CAP = 1000
HUMANS = 1300
BOTS = 200
CONNECTIONS = 32
PEOPLE = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/18.1 Safari/605.1.15",
)
BOT_AGENTS = ("facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", "Slackbot-LinkExpanding 1.0")


@pytest.fixture
def pair(postgres_server, tmp_path) -> Iterator[tuple[LiveServer, LiveServer]]:
    storage = postgres_server.new_database()
    redis = RedisServer(tmp_path / "redis").start()
    servers = [LiveServer(tmp_path, storage=storage, redis_url=redis.url) for _ in range(2)]
    try:
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda server: server.start(timeout=180), servers))
        yield servers[0], servers[1]
    finally:
        for server in servers:
            if server.process is not None:
                server.stop()
        redis.stop()


def test_a_cap_of_1000_human_clicks_holds_exactly_across_two_processes(pair):
    a, b = pair
    key = a.create_key("cap@example.com")
    headers = {**bearer(key), "Content-Type": "application/json"}
    status, raw = a.request("POST", "/api/v1/links", json.dumps({"originalUrl": "https://example.com/drop"}), headers)
    assert status == 201, raw
    link = json.loads(raw)["data"]
    rules = {"rules": [], "maxClicks": CAP, "fallbackUrl": "https://example.com/sold-out"}
    assert b.request("PUT", f"/api/v1/links/{link['id']}/rules", json.dumps(rules), headers)[0] == 200
    # Bots interleaved with people, spread over both processes and 32 connections.
    agents = [PEOPLE[n % 2] for n in range(HUMANS)]
    for n in range(BOTS):
        agents.insert(n * (HUMANS // BOTS), BOT_AGENTS[n % 2])
    shares = [agents[n::CONNECTIONS] for n in range(CONNECTIONS)]

    def visitor(number: int) -> list[tuple[str, str]]:
        server = (a, b)[number % 2]
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        seen = []
        for agent in shares[number]:
            conn.request("GET", f"/l/{link['shortCode']}", headers={"User-Agent": agent})
            response = conn.getresponse()
            response.read()
            assert response.status == 302, response.status
            seen.append((agent, response.getheader("Location")))
        conn.close()
        return seen

    with ThreadPoolExecutor(CONNECTIONS) as pool:
        answers = [answer for share in pool.map(visitor, range(CONNECTIONS)) for answer in share]
    people = [location for agent, location in answers if agent in PEOPLE]
    assert people.count("https://example.com/drop") == CAP
    assert people.count("https://example.com/sold-out") == HUMANS - CAP
    assert len([agent for agent, _ in answers if agent in BOT_AGENTS]) == BOTS
    # The click writers of both processes store exactly the human clicks that reached the link.
    conn = connect(a.db)
    try:
        query = "SELECT human_clicks FROM link_rules WHERE link_id = (SELECT id FROM links WHERE public_id = ?)"
        wait_for(lambda: conn.execute(query, (link["id"],)).fetchone()[0] >= CAP, 60, "the capped clicks to be stored")
        assert conn.execute(query, (link["id"],)).fetchone()[0] == CAP
    finally:
        conn.close()
