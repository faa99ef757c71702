"""Analytics from rollups vs the same answer from raw clicks, on millions of clicks.

Run: .venv/bin/python -m bench.analytics [--one-link-clicks 1000000]
     [--many-links 10000] [--many-links-clicks 10000000] [--backend postgresql]

--backend postgresql seeds and measures on a throwaway PostgreSQL server started here
(Debian's postgresql; throwaway/postgres_server.py).

Seeds a fresh database with `shortlink demo seed`'s code (the real click
recorder, so it also prints the recorder's write rate): one account with one
link, one account with many links. Then, for both analytics endpoints at 30-
and 366-day ranges, it prints the median time of the answer from rollups (what
the API serves), the median time of the same answer computed from raw clicks
alone, their ratio, and whether the two answers are equal. Both are timed
in-process on one connection, without HTTP, so the ratio is the storage's own.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from shortlink.accounts import service as accounts
from shortlink.analytics import report
from shortlink.analytics.ranges import Range
from shortlink.config import load_config
from shortlink.demo import seed
from shortlink.storage import connect

DAY_MS = 86_400_000


def timed(repeat: int, compute) -> tuple[float, object]:
    times, answer = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        answer = compute()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), answer


def seed_account(config, email: str, links: int, clicks: int, days: int) -> int:
    started = time.perf_counter()
    result = asyncio.run(seed(config, email, links, clicks, days))
    took = time.perf_counter() - started
    print(
        f"seeded {result.clicks:,} clicks on {result.links:,} links in {took:.0f} s "
        f"({result.clicks / took:,.0f} clicks/s through the recorder, links created included)"
    )
    conn = connect(config.storage.location)
    account_id = accounts.account_for(conn, email)["id"]
    conn.close()
    return account_id


def compare(conn, label: str, repeat: int, raw_repeat: int, compute) -> None:
    fast, from_rollups = timed(repeat, lambda: compute(True))
    slow, from_raw = timed(raw_repeat, lambda: compute(False))
    print(
        f"{label:<44} rollups {fast:8.1f} ms   raw {slow:9.1f} ms   {slow / fast:6.1f}x   "
        f"{'equal' if from_rollups == from_raw else 'DIFFERENT'}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one-link-clicks", type=int, default=1_000_000)
    parser.add_argument("--many-links", type=int, default=10_000)
    parser.add_argument("--many-links-clicks", type=int, default=10_000_000)
    parser.add_argument("--days", type=int, default=366)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--raw-repeat", type=int, default=3)
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="shortlink-bench-analytics-"))
    (work / "shortlink.toml").touch()
    postgres = None
    if args.backend == "postgresql":
        from throwaway.postgres_server import PostgresServer  # the tests' throwaway PostgreSQL

        postgres = PostgresServer().start()
        storage = {"storage_url": postgres.empty_database()}
    else:
        storage = {"storage_path": str(work / "bench.db")}
    try:
        run(args, load_config(work / "shortlink.toml", environ={}, **storage))
    finally:
        if postgres is not None:
            postgres.stop()
    return 0


def run(args, config) -> None:
    one = seed_account(config, "one@example.com", 1, args.one_link_clicks, args.days)
    many = seed_account(config, "many@example.com", args.many_links, args.many_links_clicks, args.days)

    conn = connect(config.storage.location)
    now = datetime.now(UTC)
    end = int(now.timestamp() * 1000)
    for account_id, name in ((one, "1 link"), (many, f"{args.many_links:,} links")):
        top = conn.execute(
            "SELECT public_id FROM links WHERE account_id = ? ORDER BY click_count DESC LIMIT 1", (account_id,)
        ).fetchone()[0]
        for days in (30, 366):
            span = Range(end - days * DAY_MS + 1, end)
            compare(
                conn,
                f"{name}: link analytics, {days} days",
                args.repeat,
                args.raw_repeat,
                lambda rollups, account_id=account_id, top=top, span=span: report.link_analytics(
                    conn, account_id, top, span, now, rollups
                ),
            )
            compare(
                conn,
                f"{name}: account analytics, {days} days",
                args.repeat,
                args.raw_repeat,
                lambda rollups, account_id=account_id, span=span: report.account_analytics(
                    conn, account_id, span, now, rollups
                ),
            )
    conn.close()


if __name__ == "__main__":
    sys.exit(main())
