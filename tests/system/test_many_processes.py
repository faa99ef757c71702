"""Several server processes on one database and one Redis, as behind a load balancer: one
SQLite file, or one PostgreSQL database.

Real `shortlink serve` processes, a real redis-server (throwaway/redis_server.py) and real
HTTP: what one process changes, the others see; limits hold across all of them; a killed
process loses at most its own unflushed batch while the others keep serving.
"""

from __future__ import annotations

import http.client
import json
import signal
import sqlite3
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from shortlink.accounts import service as accounts
from shortlink.links.schema import CreateLink
from shortlink.sharedstate import DAY_KEY_GRACE_MS, DAY_MS, SharedDayKeys
from shortlink.storage import connect
from tests.applinks.test_apps_api import FINGERPRINT
from tests.conftest import BACKENDS, bearer, run_cli
from tests.support.helpers import outside_changes_watched, store_link, wait_for
from tests.support.load import VISITS, Load, assert_rollups_match_raw_clicks, day_of_ts
from tests.support.visitors import ANDROID_CHROME
from throwaway.live_server import LiveServer
from throwaway.redis_server import RedisServer

# Every test here starts server processes: seconds each.
pytestmark = [pytest.mark.system, pytest.mark.slow]

DAILY_LIMIT = 5
INVALIDATION_SECONDS = 1.0  # docs/deployment.md's bound: a paused link stops redirecting everywhere within it


def start_together(servers: list[LiveServer]) -> list[LiveServer]:
    # Starting several at once on a loaded machine takes a while: a generous bound.
    with ThreadPoolExecutor(len(servers)) as pool:
        return list(pool.map(lambda server: server.start(timeout=180), servers))


@pytest.fixture(scope="module", params=BACKENDS)
def pair(request, tmp_path_factory) -> Iterator[tuple[LiveServer, LiveServer]]:
    """Two server processes on one database (an SQLite file, or PostgreSQL) and one Redis."""
    directory = tmp_path_factory.mktemp("pair")
    storage = request.getfixturevalue("postgres_server").new_database() if request.param == "postgresql" else None
    redis = RedisServer(directory / "redis").start()
    servers = [
        LiveServer(directory, storage=storage, redis_url=redis.url, limits_links_per_day=str(DAILY_LIMIT))
        for _ in range(2)
    ]
    try:
        start_together(servers)
        yield servers[0], servers[1]
    finally:
        for server in servers:
            if server.process is not None:
                server.stop()
        redis.stop()


def api(server: LiveServer, key: str, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    headers = {**bearer(key), "Content-Type": "application/json"}
    status, raw = server.request(method, f"/api/v1{path}", json.dumps(body) if body is not None else None, headers)
    return status, json.loads(raw) if raw else {}


def visit_status(server: LiveServer, code: str) -> int:
    return server.request("GET", f"/l/{code}", headers={"User-Agent": VISITS[0][0]})[0]


def seconds_until(server: LiveServer, code: str, status: int) -> float:
    """How long the server took to answer `status` for the code, polled; fails past the bound."""
    return seconds_until_seen(lambda: visit_status(server, code), lambda answered: answered == status)


def seconds_until_seen(observe: Callable[[], object], wanted: Callable[[Any], bool]) -> float:
    started = time.monotonic()
    wait_for(lambda: wanted(observe()), INVALIDATION_SECONDS, "the change to be seen")
    return time.monotonic() - started


def test_a_link_changed_through_one_process_changes_on_the_other_within_a_second(pair):
    a, b = pair
    key = a.create_key("changes@example.com")
    status, created = api(a, key, "POST", "/links", {"originalUrl": "https://example.com/shared"})
    assert status == 201, created
    link_id, code = created["data"]["id"], created["data"]["shortCode"]
    for _ in range(3):  # now cached by B (and A), found and open
        assert visit_status(b, code) == 302
        assert visit_status(a, code) == 302

    assert api(a, key, "PATCH", f"/links/{link_id}", {"isActive": False})[0] == 200
    paused_after = seconds_until(b, code, 404)
    assert api(a, key, "PATCH", f"/links/{link_id}", {"isActive": True})[0] == 200
    resumed_after = seconds_until(b, code, 302)
    assert api(b, key, "DELETE", f"/links/{link_id}")[0] == 200  # the other way round
    deleted_after = seconds_until(a, code, 404)
    print(
        f"\nseen by the other process after: pause {paused_after:.3f} s, resume {resumed_after:.3f} s, "
        f"delete {deleted_after:.3f} s"
    )


def android_location(server: LiveServer, code: str) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("GET", f"/l/{code}", headers={"User-Agent": ANDROID_CHROME})
        response = conn.getresponse()
        response.read()
        return response.getheader("Location") or ""
    finally:
        conn.close()


def test_an_app_removed_through_one_process_stops_opening_on_the_other_at_once(pair):
    # The app rides in the link cache entry of each link that opens it: the other process must
    # forget those links too, not only the one that removed the app.
    a, b = pair
    key = a.create_key("apps@example.com")
    link = api(a, key, "POST", "/links", {"originalUrl": "https://shop.example/p/1"})[1]["data"]
    android = {"package": "com.example.shop", "sha256Fingerprints": [FINGERPRINT]}
    status, app = api(a, key, "POST", "/apps", {"name": "Shop", "android": android})
    assert status == 201, app
    assert android_location(b, link["shortCode"]) == "https://shop.example/p/1"  # cached by B
    body = {"appId": app["data"]["id"], "deepPath": "/p/1"}
    assert api(a, key, "PUT", f"/links/{link['id']}/app", body)[0] == 200
    seconds_until_seen(lambda: android_location(b, link["shortCode"]), lambda to: to.startswith("intent://"))
    assert api(a, key, "DELETE", f"/apps/{app['data']['id']}")[0] == 200
    seconds_until_seen(lambda: android_location(b, link["shortCode"]), lambda to: to == "https://shop.example/p/1")


def test_sixty_requests_a_minute_per_key_hold_across_both_processes(pair):
    a, b = pair
    key = a.create_key("busy@example.com")

    def client(number: int) -> list[int]:
        server = (a, b)[number % 2]
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        statuses = []
        for _ in range(25):
            conn.request("GET", "/api/v1/me", headers=bearer(key))
            response = conn.getresponse()
            response.read()
            statuses.append(response.status)
        conn.close()
        return statuses

    with ThreadPoolExecutor(8) as pool:  # 200 requests, half through each process, concurrently
        statuses = [status for batch in pool.map(client, range(8)) for status in batch]
    assert len(statuses) == 200 and set(statuses) <= {200, 429}
    accepted = statuses.count(200)
    print(f"\n{accepted} of 200 requests over two processes accepted at 60 a minute")
    # 60 tokens, plus one a second refilled while the requests ran.
    assert 60 <= accepted <= 61


def test_the_daily_link_limit_holds_across_both_processes(pair):
    a, b = pair
    key = a.create_key("daily@example.com")

    def create(number: int) -> int:
        body = {"originalUrl": f"https://example.com/{number}", "title": "t"}
        return api((a, b)[number % 2], key, "POST", "/links", body)[0]

    with ThreadPoolExecutor(6) as pool:
        statuses = list(pool.map(create, range(3 * DAILY_LIMIT)))
    assert sorted(statuses) == [201] * DAILY_LIMIT + [429] * (2 * DAILY_LIMIT)
    conn = connect(a.db)
    try:
        owned = conn.execute(
            "SELECT count(*) FROM links JOIN accounts ON accounts.id = links.account_id WHERE email = ?",
            ("daily@example.com",),
        ).fetchone()[0]
    finally:
        conn.close()
    assert owned == DAILY_LIMIT


def test_password_attempts_per_visitor_and_link_hold_across_both_processes(pair):
    a, b = pair
    key = a.create_key("locked@example.com")
    body = {"originalUrl": "https://example.com/locked", "password": "right one"}
    status, created = api(a, key, "POST", "/links", body)
    assert status == 201, created
    code = created["data"]["shortCode"]
    form = {"Content-Type": "application/x-www-form-urlencoded", "User-Agent": VISITS[0][0]}
    statuses = [(a, b)[attempt % 2].request("POST", f"/l/{code}", "password=wrong", form)[0] for attempt in range(10)]
    # 5 attempts a minute for this visitor and link, wherever they land.
    assert statuses == [403] * 5 + [429] * 5


def prepare_two_links(database: str | Path, base_url: str) -> tuple[str, str]:
    conn = connect(database)
    try:
        accounts.create_key(conn, "load@example.com")
        account_id = conn.execute("SELECT id FROM accounts").fetchone()[0]
        codes = [
            store_link(conn, account_id, base_url, CreateLink(original_url=f"https://example.com/{n}", title="t"))
            for n in range(2)
        ]
    finally:
        conn.close()
    return codes[0].short_code, codes[1].short_code


def clicks_of(conn: sqlite3.Connection, code: str) -> int:
    return conn.execute(
        "SELECT count(*) FROM clicks JOIN links ON links.id = clicks.link_id WHERE short_code = ?", (code,)
    ).fetchone()[0]


@pytest.mark.both_backends
def test_sigkill_of_one_process_under_load_loses_at_most_its_unflushed_batch_and_the_other_serves_on(tmp_path, storage):
    redis = RedisServer(tmp_path / "redis").start()
    a, b = (
        LiveServer(tmp_path, storage=storage, redis_url=redis.url, clicks_flush_interval_ms="100") for _ in range(2)
    )
    code_a, code_b = prepare_two_links(a.db, a.base_url)
    try:
        start_together([a, b])
        # Each process gets its own link, so that what each stored can be told apart.
        load_a, load_b = Load(a.port, code_a), Load(b.port, code_b)
        health: dict = {}

        def a_has_written_clicks() -> bool:
            # Until A's writer has committed some (under load its health check may time out first).
            status, body = a.request("GET", "/healthz")
            health.update(json.loads(body) if status == 200 else {})
            return health.get("clicksWritten", 0) > 0

        wait_for(a_has_written_clicks, what="A to report clicks written")
        written_by_a = health["clicksWritten"]  # committed: a kill cannot take them back
        a.stop(signal.SIGKILL)
        served_by_b_at_kill = load_b.acknowledged
        wait_for(lambda: load_b.acknowledged > served_by_b_at_kill + 50, what="B to keep serving")
        assert all(thread.is_alive() for thread in load_b.threads), "B stopped serving"
        acknowledged_a, acknowledged_b = load_a.stop(), load_b.stop()
        assert b.stop(signal.SIGTERM) in (0, -signal.SIGTERM)  # B drains its queue
    finally:
        for server in (a, b):
            if server.process is not None and server.process.poll() is None:
                server.stop(signal.SIGKILL)
        redis.stop()

    conn = connect(a.db)
    try:
        if isinstance(conn, sqlite3.Connection):
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored_a, stored_b = clicks_of(conn, code_a), clicks_of(conn, code_b)
        print(
            f"\nA (killed): {acknowledged_a} acknowledged, {written_by_a} reported written, {stored_a} stored; "
            f"B (stopped): {acknowledged_b} acknowledged, {stored_b} stored"
        )
        # At most one click per client may be stored although its response was cut off.
        assert 0 < written_by_a <= stored_a <= acknowledged_a + len(load_a.threads)
        assert acknowledged_b <= stored_b <= acknowledged_b + len(load_b.threads)
        # Both processes added into the same rollup rows; every one equals the raw clicks.
        assert_rollups_match_raw_clicks(conn)
        # One visitor key per day, shared through Redis: the same four visitors
        # (one address, four user agents) hash alike whichever process wrote them.
        visitors = conn.execute(f"SELECT {day_of_ts(conn)}, count(DISTINCT visitor) FROM clicks GROUP BY 1").fetchall()
        assert {count for _, count in visitors} == {len(VISITS)}, visitors
    finally:
        conn.close()


def process_ids(server: LiveServer, wanted: int, timeout: float = 120) -> set[int]:
    """The processes seen answering /healthz, until `wanted` have (workers start one by one)."""
    seen: set[int] = set()

    def all_seen() -> bool:
        seen.add(json.loads(server.request("GET", "/healthz")[1])["process"])
        return len(seen) >= wanted

    wait_for(all_seen, timeout, f"{wanted} processes to answer")
    return seen


@pytest.mark.both_backends
def test_workers_share_one_port_and_sigterm_drains_every_one(tmp_path, storage):
    redis = RedisServer(tmp_path / "redis").start()
    server = LiveServer(tmp_path, workers=2, storage=storage, redis_url=redis.url, clicks_flush_interval_ms="1000")
    code, _ = prepare_two_links(server.db, server.base_url)
    try:
        server.start(timeout=180)
        assert len(process_ids(server, 2)) == 2  # two processes answer on the one port
        load = Load(server.port, code)
        wait_for(lambda: load.acknowledged > 100, what="the load to run")
        assert server.stop(signal.SIGTERM) == 0  # the supervisor stops its workers, each draining
        acknowledged = load.stop()
    finally:
        if server.process is not None and server.process.poll() is None:
            server.stop(signal.SIGKILL)
        redis.stop()
    conn = connect(server.db)
    try:
        stored = clicks_of(conn, code)
        assert acknowledged > 100, "the load did not run"
        assert acknowledged <= stored <= acknowledged + len(load.threads)
        assert_rollups_match_raw_clicks(conn)
    finally:
        conn.close()


def test_more_than_one_worker_without_redis_is_refused_in_one_line(tmp_path):
    result = run_cli("serve", "--workers", "2", "--db", str(tmp_path / "x.db"), check=False)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("shortlink: --workers 2 needs [redis] url") and result.stderr.count("\n") == 1


def test_with_redis_a_process_keeps_its_cache_when_others_commit_and_forgets_what_they_change(
    redis_server, make_client, auth, conn
):
    """Other processes commit all the time (click batches, keys, webhook bookkeeping): with
    Redis, their link changes reach the cache one by one; without it, the counter of changes to
    what is cached (storage.accounts.data_version) empties it. Other commits leave it alone."""
    first, second = make_client(redis_url=redis_server.url), make_client(redis_url=redis_server.url)
    alone = make_client()
    created = first.post("/api/v1/links", headers=auth, json={"originalUrl": "https://example.com/c"}).json()["data"]
    code = created["shortCode"]
    caches = {client: client.app.state.services.link_cache for client in (second, alone)}
    for client in (second, alone):
        # Once the creation is noticed, cache the link. HEAD: no click, so no commit of ours.
        outside_changes_watched(client)
        assert client.head(f"/l/{code}", follow_redirects=False).status_code == 302
        assert caches[client].get(code) is not ...

    accounts.create_key(conn, "elsewhere@example.com")  # a commit by another process, changing no link
    for client in (second, alone):
        outside_changes_watched(client)
        assert caches[client].get(code) is not ..., "a commit that changed no link cleared the cache"

    assert first.patch(f"/api/v1/links/{created['id']}", headers=auth, json={"isActive": False}).status_code == 200
    wait_for(lambda: caches[second].get(code) is ..., INVALIDATION_SECONDS, "the change to reach the other process")
    outside_changes_watched(alone)
    for client in (second, alone):
        assert client.get(f"/l/{code}", follow_redirects=False).status_code == 404


def test_with_redis_a_cli_change_reaches_a_subscribed_process(redis_server, make_client, auth, storage, tmp_path):
    """A process subscribed to link changes does not clear on the counter of changes: a CLI
    command that changed what servers cache tells them through Redis (docs/behaviour.md)."""
    client = make_client(redis_url=redis_server.url)
    # Created by a process outside Redis: the subscribed one would hear its own creation back
    # at an unknown moment, and forget the link it is about to cache.
    elsewhere = make_client()
    created = elsewhere.post("/api/v1/links", headers=auth, json={"originalUrl": "https://example.com/d"}).json()[
        "data"
    ]
    code, cache = created["shortCode"], client.app.state.services.link_cache
    assert client.head(f"/l/{code}", follow_redirects=False).status_code == 302
    assert cache.get(code) is not ...
    config = tmp_path / "cli.toml"
    config.write_text(f'[redis]\nurl = "{redis_server.url}"\n')
    run_cli("links", "delete", created["id"], "--yes", "--config", str(config), "--db", storage)
    wait_for(lambda: cache.get(code) is ..., timeout=10, what="the CLI's deletion to reach the subscribed process")
    assert client.get(f"/l/{code}", follow_redirects=False).status_code == 404


async def test_the_first_process_to_need_a_day_key_gives_it_to_every_other_until_shortly_after_the_day(redis_server):
    now_ms = int(time.time() * 1000)
    day_start = now_ms // DAY_MS * DAY_MS
    first, second = (SharedDayKeys(Redis.from_url(redis_server.url)) for _ in range(2))
    assert await first.key("today", day_start, b"a" * 32) == b"a" * 32
    assert await second.key("today", day_start, b"b" * 32) == b"a" * 32
    expires_in = await Redis.from_url(redis_server.url).pttl("shortlink:visitor-key:today")
    assert abs(expires_in - (day_start + DAY_MS + DAY_KEY_GRACE_MS - now_ms)) < 5_000
    # A day long over (demo data) shares nothing: the key stays in the process that made it.
    assert await second.key("old", day_start - 10 * DAY_MS, b"c" * 32) == b"c" * 32
    assert await Redis.from_url(redis_server.url).exists("shortlink:visitor-key:old") == 0
