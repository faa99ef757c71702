"""Analytics at scale on SQLite and PostgreSQL side by side: answer times, bytes per click, seeding.

Run: .venv/bin/python -m bench.analytics [--clicks 1000000] [--links 1000] [--days 366]
     [--few-links 10] [--repeat 15] [--backends sqlite,postgresql] [--before REV] [--no-check]

For each backend (PostgreSQL: a throwaway server started here, Debian's postgresql;
throwaway/postgres_server.py) it seeds a fresh database with `shortlink demo seed` (the real
click recorder, in a process of its own, timed), then:

- answer times: the account's and its busiest link's analytics for days=1, 7, 30, 366 and a
  `from`/`to` pair starting and ending mid-hour, the median of --repeat requests through the
  API (the real ASGI app in this process, Litestar's TestClient), beside `GET /api/v1/me`, the
  machine's bare figure for an authenticated API answer. Each range's answer from rollups is
  checked once against the same answer computed from raw clicks alone (`--no-check` skips that:
  the raw computation takes seconds per range at a million clicks);
- bytes per click of the click and rollup tables: on SQLite the file after VACUUM, and per table
  from the dbstat virtual table; on PostgreSQL pg_total_relation_size, as written and after
  VACUUM FULL; at --links and at --few-links links (a second database, same clicks);
- the recorder's batch cost: the median time of writing a 1,000-click batch into the seeded
  database (storage.clicks.write_batch, as the recorder's writer does).

--before REV seeds the same --links database with the code of REV too (a temporary `git worktree`,
removed at the end), and times its batches, so seeding speed and batch cost are compared before
and after a change in one run on one machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from shortlink.accounts import service as accounts
from shortlink.cli.demo_data import seed
from shortlink.config import load_config
from shortlink.storage import connect

DAY_MS = 86_400_000
HOUR_MS = 3_600_000
EMAIL = "bench@example.com"
ROOT = Path(__file__).resolve().parent.parent
# The click and rollup tables whose bytes are counted on PostgreSQL (those a version has).
CLICK_TABLES = (
    "click_rows",
    "user_agents",
    "link_days",
    "link_dimensions",
    "link_visitors",
    "account_days",
    "account_dimensions",
    "account_visitors",
    "account_hours",
    "account_hour_dimensions",
    "link_hours",
    "link_day_dimensions",
    "click_labels",
)
# Run by another tree's interpreter: writes `batches` batches of 1,000 human clicks over the
# database's links at the present hour, and prints the median milliseconds of one. Only names
# every version since migration 0012 has (StoredClick, encode_batch, write_batch).
BATCH_TIMING = """
import random, statistics, sys, time
from shortlink.storage import connect
from shortlink.storage.clicks import StoredClick, encode_batch, write_batch
location, batches = sys.argv[1], int(sys.argv[2])
conn = connect(location)
links = conn.execute("SELECT id, account_id FROM links").fetchall()
rng = random.Random(5)
times = []
for _ in range(batches):
    now = int(time.time() * 1000)
    clicks = []
    for _ in range(1000):
        link, agent = rng.choice(links), rng.randrange(50)
        # An agent's labels are its own, as the classifier gives them: raw clicks read them from
        # user_agents, so a click must not disagree with its agent's first one.
        clicks.append(StoredClick(
            link[0], link[1], now - rng.randrange(60_000), time.strftime("%Y-%m-%d", time.gmtime(now / 1000)),
            ["mobile", "desktop"][agent % 2], ["Chrome", "Safari", "Firefox"][agent % 3], ["iOS", "Windows"][agent % 2],
            rng.choice(["DE", "US", "FR"]), rng.choice(["Direct", "t.co"]), "None",
            "Mozilla/5.0 bench " + str(agent), rng.getrandbits(62), 0,
        ))
    started = time.perf_counter()
    write_batch(conn, encode_batch(clicks))
    times.append((time.perf_counter() - started) * 1000)
print(statistics.median(times))
"""


def timed(repeat: int, compute: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        compute()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def seed_account(config, email: str, links: int, clicks: int, days: int) -> int:
    """Seed in this process (bench.dashboard's way); returns the account's id."""
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


def seed_with(tree: Path, location: str, links: int, clicks: int, days: int) -> float:
    """`shortlink demo seed` with the code of `tree`, in a process of its own; returns clicks/s
    (the process's start and the links' creation included, alike for every tree)."""
    environ = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, "-m", "shortlink", "demo", "seed", "--db", location, "--email", EMAIL]
    command += ["--links", str(links), "--clicks", str(clicks), "--days", str(days)]
    started = time.perf_counter()
    subprocess.run(command, cwd=tree, env=environ, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return clicks / (time.perf_counter() - started)


def batch_cost(tree: Path, location: str, batches: int = 15) -> float:
    environ = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-c", BATCH_TIMING, location, str(batches)],
        cwd=tree,
        env=environ,
        check=True,
        capture_output=True,
        text=True,
    )
    return float(done.stdout.strip())


def cases(now_ms: int) -> dict[str, dict[str, str]]:
    """The ranges asked for, as query parameters: days=N, and a pair starting and ending mid-hour."""
    start = (now_ms - 20 * DAY_MS) // HOUR_MS * HOUR_MS + 17 * 60_000 + 23_456
    end = (now_ms - 2 * DAY_MS) // HOUR_MS * HOUR_MS + 41 * 60_000 + 7_000
    iso = lambda ms: datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")  # noqa: E731
    ranges = {f"days={days}": {"days": str(days)} for days in (1, 7, 30, 366)}
    ranges["from/to mid-hour"] = {"from": iso(start), "to": iso(end)}
    return ranges


def answer_times(config, account_id: int, repeat: int, check: bool) -> dict[str, tuple[float, str]]:
    """{row label: (median ms, "equal" / "DIFFERENT" / "")} through the API."""
    from litestar.testing import TestClient

    from shortlink.analytics import report
    from shortlink.analytics.ranges import parse_range
    from shortlink.web.asgi import create_app

    conn = connect(config.storage.location)
    key = accounts.create_key(conn, EMAIL).key
    link = conn.execute(
        "SELECT public_id FROM links WHERE account_id = ? ORDER BY click_count DESC, id LIMIT 1", (account_id,)
    ).fetchone()[0]
    for logger in ("httpx", "shortlink.access"):  # a line per request otherwise
        logging.getLogger(logger).setLevel(logging.WARNING)
    headers = {"Authorization": f"Bearer {key}"}
    rows: dict[str, tuple[float, str]] = {}
    with TestClient(app=create_app(config)) as client:

        def get(path: str, params: dict[str, str] | None = None) -> None:
            response = client.get(path, params=params, headers=headers)
            assert response.status_code == 200, response.text

        rows["GET /api/v1/me (the bare figure)"] = (timed(repeat, lambda: get("/api/v1/me")), "")
        now = datetime.now(UTC)
        for label, params in cases(int(now.timestamp() * 1000)).items():
            span = parse_range(params.get("days"), params.get("from"), params.get("to"), now)
            for scope, path, compute in (
                (
                    "account",
                    "/api/v1/analytics",
                    lambda r, span=span: report.account_analytics(conn, account_id, span, now, r),
                ),
                (
                    "link",
                    f"/api/v1/links/{link}/analytics",
                    lambda r, span=span: report.link_analytics(conn, account_id, link, span, now, r),
                ),
            ):
                same = ""
                if check:
                    same = "equal" if compute(True) == compute(False) else "DIFFERENT"
                rows[f"{scope}, {label}"] = (timed(repeat, lambda path=path, params=params: get(path, params)), same)
    conn.close()
    return rows


def sqlite_bytes(path: str) -> tuple[int, dict[str, int]]:
    """The file's size after VACUUM, and the bytes of each table with its indexes (dbstat)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("VACUUM")
    tables: dict[str, int] = {}
    for table, size in conn.execute(
        "SELECT coalesce(m.tbl_name, s.name), sum(s.pgsize) FROM dbstat AS s"
        " LEFT JOIN sqlite_schema AS m ON m.name = s.name GROUP BY s.name"
    ):
        tables[table] = tables.get(table, 0) + size
    conn.close()
    return os.path.getsize(path), tables


def postgres_bytes(url: str, full: bool) -> tuple[int, dict[str, int]]:
    """pg_total_relation_size of the click and rollup tables, after VACUUM FULL when `full`."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        present = [name for name in CLICK_TABLES if conn.execute("SELECT to_regclass(%s)", (name,)).fetchone()[0]]
        if full:
            conn.execute("VACUUM FULL " + ", ".join(present))
        tables = {name: conn.execute("SELECT pg_total_relation_size(%s)", (name,)).fetchone()[0] for name in present}
    return sum(tables.values()), tables


class Backend:
    """One backend's databases: each `database()` a fresh one."""

    def __init__(self, name: str, work: Path):
        self.name, self.work, self.server, self.made = name, work, None, 0
        if name == "postgresql":
            from throwaway.postgres_server import PostgresServer  # the tests' throwaway PostgreSQL

            self.server = PostgresServer().start()

    def database(self) -> str:
        self.made += 1
        if self.server is not None:
            return self.server.empty_database()
        return str(self.work / f"{self.name}-{self.made}.db")

    def config(self, location: str):
        storage = {"storage_url": location} if self.server else {"storage_path": location}
        return load_config(
            self.work / "shortlink.toml",
            environ={},
            limits_requests_per_minute=1_000_000,
            server_access_log=False,
            **storage,
        )

    def bytes(self, location: str) -> dict[str, tuple[int, dict[str, int]]]:
        if self.server is None:
            return {"after VACUUM": sqlite_bytes(location)}
        return {"as written": postgres_bytes(location, False), "after VACUUM FULL": postgres_bytes(location, True)}

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clicks", type=int, default=1_000_000)
    parser.add_argument("--links", type=int, default=1_000)
    parser.add_argument("--days", type=int, default=366)
    parser.add_argument("--few-links", type=int, default=10, help="the second database's links (0: none)")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--before", metavar="REV", help="also seed with this revision's code, to compare")
    parser.add_argument("--no-check", action="store_true", help="skip comparing each answer with raw clicks")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="shortlink-bench-analytics-"))
    (work / "shortlink.toml").touch()
    before = None
    if args.before:
        before = work / "before"
        subprocess.run(["git", "worktree", "add", "--detach", str(before), args.before], cwd=ROOT, check=True)
    names = args.backends.split(",")
    results: dict[str, dict] = {}
    try:
        for name in names:
            backend = Backend(name, work)
            try:
                results[name] = run(args, backend, before)
            finally:
                backend.stop()
    finally:
        if before is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(before)], cwd=ROOT, check=False)
        shutil.rmtree(work, ignore_errors=True)
    report_all(args, names, results)
    return 0


def run(args, backend: Backend, before: Path | None) -> dict:
    out: dict = {}
    location = backend.database()
    out["seed"] = seed_with(ROOT, location, args.links, args.clicks, args.days)
    print(f"{backend.name}: seeded {args.clicks:,} clicks, {out['seed']:,.0f} clicks/s", file=sys.stderr)
    config = backend.config(location)
    conn = connect(location)
    account_id = accounts.account_for(conn, EMAIL)["id"]
    conn.close()
    out["times"] = answer_times(config, account_id, args.repeat, not args.no_check)
    out["bytes"] = {args.links: backend.bytes(location)}
    out["batch"] = batch_cost(ROOT, location)
    if args.few_links:
        few = backend.database()
        seed_with(ROOT, few, args.few_links, args.clicks, args.days)
        out["bytes"][args.few_links] = backend.bytes(few)
    if before is not None:
        old = backend.database()
        out["seed before"] = seed_with(before, old, args.links, args.clicks, args.days)
        out["bytes before"] = backend.bytes(old)
        out["batch before"] = batch_cost(before, old)
    print(f"{backend.name}: {json.dumps(out, default=str)}", file=sys.stderr)
    return out


def report_all(args, names: list[str], results: dict[str, dict]) -> None:
    print(f"{args.clicks:,} clicks over {args.links:,} links and {args.days} days; medians of {args.repeat}, in ms")
    print(f"{'':<40}" + "".join(f"{name:>22}" for name in names))
    for row in results[names[0]]["times"]:
        cells = []
        for name in names:
            ms, same = results[name]["times"][row]
            cells.append(f"{ms:9.1f} {same:>12}")
        print(f"{row:<40}" + "".join(f"{cell:>22}" for cell in cells))
    print(f"\n{'recorder':<40}" + "".join(f"{name:>22}" for name in names))
    lines = [("seeding, clicks/s", "seed", "{:,.0f}"), ("1,000-click batch, ms", "batch", "{:.1f}")]
    for label, key, form in lines:
        for suffix in ("", " before"):
            if key + suffix in results[names[0]]:
                values = [form.format(results[name][key + suffix]) for name in names]
                row = f"{label}{' (' + args.before + ')' if suffix else ''}"
                print(f"{row:<40}" + "".join(f"{value:>22}" for value in values))
    print("\nbytes per click")
    for name in names:
        measured = dict(results[name]["bytes"])
        if "bytes before" in results[name]:
            measured[f"{args.links} ({args.before})"] = results[name]["bytes before"]
        for links, ways in measured.items():
            for way, (total, tables) in ways.items():
                print(f"{name}, {links} links, {way}: {total / args.clicks:.1f} bytes per click")
                for table, size in sorted(tables.items(), key=lambda item: -item[1]):
                    if size / args.clicks >= 0.5:
                        print(f"    {table:<32} {size / args.clicks:7.1f}")


if __name__ == "__main__":
    sys.exit(main())
