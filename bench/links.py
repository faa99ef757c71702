"""Listing links at 100k links per account: GET /api/v1/links vs GET /api/v1/me.

Run: .venv/bin/python -m bench.links [--links 100000]. Fills a fresh database
through the real link service, starts a real server process, and prints the
median latency of each listing query next to /me (one indexed key lookup) on
the same server, so the ratio shows what the listing itself costs.
"""

from __future__ import annotations

import argparse
import http.client
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from shortlink.accounts import service as accounts
from shortlink.application.hosts import Hosts
from shortlink.links import service
from shortlink.links.schema import CreateLink
from shortlink.storage import connect
from throwaway.live_server import LiveServer

QUERIES = [
    "/api/v1/links",
    "/api/v1/links?page=2&limit=100",
    "/api/v1/links?page=900&limit=100",
    "/api/v1/links?platform=YOUTUBE",
    "/api/v1/links?isActive=false",
    "/api/v1/links?shortCode=b00042",
    "/api/v1/links?search=watch%3Fv%3D00042",
    "/api/v1/links?search=no-such-text",
]


def fill(db: Path, count: int) -> str:
    conn = connect(db)
    key = accounts.create_key(conn, "bench@example.com").key
    account_id = accounts.account_for(conn, "bench@example.com")["id"]
    hosts = Hosts("https://sho.rt")
    now = datetime.now(UTC)
    for number in range(count):
        url = (
            f"https://www.youtube.com/watch?v={number:05d}" if number % 4 == 0 else f"https://example.com/page/{number}"
        )
        service.create_link(
            conn,
            account_id,
            CreateLink(original_url=url, custom_code=f"b{number:05d}", title=f"Bench link {number}"),
            is_ours=hosts.is_ours,
            base=hosts.short_host,
            daily_limit=count + 1,
            now=now,
            fetch_title=False,
        )
    conn.execute("UPDATE links SET is_active = 0 WHERE id % 10 = 0")
    conn.close()
    return key


def median_ms(port: int, path: str, key: str, repeat: int) -> float:
    conn = http.client.HTTPConnection("127.0.0.1", port)
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        conn.request("GET", path, headers={"Authorization": f"Bearer {key}"})
        response = conn.getresponse()
        response.read()
        assert response.status == 200, (path, response.status)
        times.append((time.perf_counter() - started) * 1000)
    conn.close()
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--links", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="shortlink-bench-links-"))
    # A new interpreter, as an operator starts it (not a fork of a warmed-up one).
    server = LiveServer(work, prewarmed=False, limits_requests_per_minute="10000000", server_access_log="false")
    started = time.perf_counter()
    key = fill(server.db, args.links)
    print(f"filled {args.links} links in {time.perf_counter() - started:.1f} s")
    server.start()
    try:
        baseline = median_ms(server.port, "/api/v1/me", key, args.repeat)
        print(f"{'GET /api/v1/me (baseline)':<48} {baseline:7.2f} ms")
        for path in QUERIES:
            took = median_ms(server.port, path, key, args.repeat)
            print(f"{path:<48} {took:7.2f} ms  ({took / baseline:4.1f}x /me)")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
