"""Bulk delete of 1,000 links on two server processes over PostgreSQL and Redis: one
request removes the links with their clicks and rollups as single deletes do, and the other
process stops redirecting them at once (its link cache is told through Redis)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from shortlink.storage import connect
from tests.support.helpers import wait_for
from tests.support.load import assert_rollups_match_raw_clicks
from tests.system.test_many_processes import INVALIDATION_SECONDS, api, start_together, visit_status
from throwaway.live_server import LiveServer
from throwaway.redis_server import RedisServer

pytestmark = [pytest.mark.system, pytest.mark.slow]  # two servers and a thousand links

LINKS = 1000
VISITED = 40  # links visited (so cached, and with clicks) on both processes
WAIT_SECONDS = 60  # for click batches to be written on a loaded machine


@pytest.fixture
def pair(postgres_server, tmp_path) -> Iterator[tuple[LiveServer, LiveServer]]:
    redis = RedisServer(tmp_path / "redis").start()
    storage = postgres_server.new_database()
    servers = [
        LiveServer(
            tmp_path, storage=storage, redis_url=redis.url, limits_links_per_day="100000",
            limits_requests_per_minute="100000", clicks_flush_interval_ms="100",
        )
        for _ in range(2)
    ]  # fmt: skip
    try:
        start_together(servers)
        yield servers[0], servers[1]
    finally:
        for server in servers:
            if server.process is not None:
                server.stop()
        redis.stop()


def count(storage: str, sql: str, *parameters) -> int:
    conn = connect(storage)
    try:
        return conn.execute(sql, parameters).fetchone()[0]
    finally:
        conn.close()


def wait_for_clicks(storage: str, expected: int) -> None:
    wait_for(lambda: count(storage, "SELECT count(*) FROM clicks") >= expected, WAIT_SECONDS, f"{expected} clicks")


def test_a_bulk_delete_of_a_thousand_links_takes_their_history_and_stops_them_everywhere_at_once(pair):
    a, b = pair
    key = a.create_key("bulk@example.com")
    ids, codes = [], []
    for start in range(0, LINKS + 1, 100):  # a thousand to delete, and one to keep
        bodies = [{"originalUrl": f"https://example.com/{n}"} for n in range(start, min(start + 100, LINKS + 1))]
        status, answer = api(a, key, "POST", "/links/bulk", {"links": bodies})
        assert status == 200 and all(item["status"] == 201 for item in answer["data"]), answer
        ids += [item["data"]["id"] for item in answer["data"]]
        codes += [item["data"]["shortCode"] for item in answer["data"]]
    kept_id, kept_code = ids.pop(), codes.pop()
    visited = [*codes[:VISITED], kept_code]
    for code in visited:  # cached by both processes, and clicks for both to write
        assert visit_status(a, code) == 302 and visit_status(b, code) == 302
    storage = str(a.db)
    wait_for_clicks(storage, 2 * len(visited))
    assert count(storage, "SELECT count(*) FROM link_days") == len(visited)

    started = time.monotonic()
    status, answer = api(a, key, "POST", "/links/bulk/actions", {"action": "delete", "ids": ids})
    took = time.monotonic() - started
    assert status == 200 and [item["status"] for item in answer["data"]] == [200] * LINKS
    # The other process stops them at once (within the second Redis takes to tell it), every
    # cached one: once the first is gone there, so are the rest.
    wait_for(lambda: visit_status(b, visited[0]) == 404, INVALIDATION_SECONDS, f"{visited[0]} gone elsewhere")
    assert [visit_status(b, code) for code in visited[:-1]] == [404] * VISITED
    assert [visit_status(a, code) for code in visited[:-1]] == [404] * VISITED
    assert visit_status(b, kept_code) == 302 and visit_status(a, kept_code) == 302
    # Those two clicks are written while the checks below read: wait for them, or rollups and raw
    # clicks are read on either side of their batch.
    wait_for_clicks(storage, 4)
    print(f"\nbulk delete of {LINKS} links: {took:.2f} s for the request")

    # Their clicks and every rollup row went with them, as a single delete's do; the kept link's stay.
    kept = count(storage, "SELECT id FROM links WHERE short_code = ?", kept_code)
    assert count(storage, "SELECT count(*) FROM links") == 1
    assert count(storage, "SELECT count(*) FROM clicks WHERE link_id <> ?", kept) == 0
    for table in ("link_days", "link_dimensions", "link_visitors"):
        assert count(storage, f"SELECT count(*) FROM {table} WHERE link_id <> ?", kept) == 0, table
    conn = connect(storage)
    try:
        assert_rollups_match_raw_clicks(conn)  # the account's rollups hold only what is left
    finally:
        conn.close()
    status, analytics = api(a, key, "GET", "/analytics?days=1")
    assert status == 200 and analytics["data"]["totalUrls"] == 1
    assert analytics["data"]["clicksInPeriod"] == count(storage, "SELECT count(*) FROM clicks WHERE is_bot = 0")
    assert api(b, key, "GET", f"/links/{ids[0]}")[0] == 404
    assert api(b, key, "GET", f"/links/{kept_id}")[1]["data"]["shortCode"] == kept_code
