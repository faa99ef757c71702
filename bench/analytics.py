"""Analytics over a million clicks: both analytics endpoints vs GET /api/v1/me.

Run: .venv/bin/python -m bench.analytics [--clicks 1000000]. Seeds a fresh
database with `shortlink demo seed` (the real click recorder, so this also
prints the recorder's write throughput), starts a real server process and
prints the median latency of each analytics query next to /me on the same
server.
"""
from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import sys
import tempfile
import time
from pathlib import Path

from bench.links import median_ms
from shortlink import accounts
from shortlink.config import load_config
from shortlink.demo import seed
from shortlink.storage import connect
from tests.live_server import LiveServer

EMAIL = "bench@example.com"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clicks", type=int, default=1_000_000)
    parser.add_argument("--links", type=int, default=50)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="shortlink-bench-analytics-"))
    server = LiveServer(work, limits_requests_per_minute="10000000", server_access_log="false")
    config = load_config(server.config, environ={}, storage_path=str(server.db))
    started = time.perf_counter()
    result = asyncio.run(seed(config, EMAIL, args.links, args.clicks, args.days))
    took = time.perf_counter() - started
    print(f"seeded {result.clicks} clicks on {result.links} links over {args.days} days in {took:.1f} s "
          f"({result.clicks / took:,.0f} clicks/s through the recorder, enrichment included)")
    conn = connect(server.db)
    key = accounts.create_key(conn, EMAIL).key
    conn.close()
    server.start()
    try:
        baseline = median_ms(server.port, "/api/v1/me", key, args.repeat)
        top = json.loads(_get(server.port, "/api/v1/links?limit=1", key))["data"][0]["id"]
        print(f"{'GET /api/v1/me (baseline)':<58} {baseline:7.2f} ms")
        for path in [f"/api/v1/links/{top}/analytics", f"/api/v1/links/{top}/analytics?days=366",
                     f"/api/v1/links/{top}/analytics?from=2026-01-01T13:30:00Z&days=7",
                     "/api/v1/analytics", "/api/v1/analytics?days=366"]:
            took = median_ms(server.port, path, key, args.repeat)
            print(f"{path:<58} {took:7.2f} ms  ({took / baseline:5.1f}x /me)")
    finally:
        server.stop()
    return 0


def _get(port: int, path: str, key: str) -> bytes:
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.request("GET", path, headers={"Authorization": f"Bearer {key}"})
    data = conn.getresponse().read()
    conn.close()
    return data


if __name__ == "__main__":
    sys.exit(main())
