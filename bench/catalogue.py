"""Redirects over a big catalogue: 1,000,000 links visited uniformly at random vs one hot link.

Run: .venv/bin/python -m bench.catalogue [--links 1000000] [--seconds 10] [--rounds 3]
[--keep DIR] [--workers N]. Needs wrk (Debian: apt-get install wrk), and for --workers N > 1
redis-server, started here.

Seeds N links through the same rule function every door uses (cached in --keep DIR
for re-runs; each run works on a fresh copy), starts a real server process, then in alternating rounds at 32
connections measures (a) one hot link and (b) a uniformly random link of the N per
request (a wrk Lua script), so most requests miss the link cache; before each uniform round
it reads the database file into the page cache (see read_into_page_cache). Then it visits
every link once, in order, and reports the server's resident memory; then once more, to
show whether memory keeps growing. Last, it checks that every redirect answered was
recorded as one click.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.redirects import (
    clicks,
    free_port,
    fresh_copy,
    serving,
    start_redis,
    wrk,
    wrk_command,
    wrk_results,
)
from shortlink.accounts import service as accounts
from shortlink.application.hosts import Hosts
from shortlink.links import service
from shortlink.links.schema import CreateLink
from shortlink.storage import connect

CONNECTIONS = 32
# Long enough for the click writer (a batch every 100 ms) to write what is queued.
FLUSH_WAIT_SECONDS = 1.0
# A bound on one walk over the catalogue, which ends as soon as every link is answered.
WALK_LIMIT_SECONDS = 3600
PAGE_CACHE_READ_BYTES = 2**20


def code(number: int) -> str:
    return f"c{number:07d}"


def seed(db: Path, count: int) -> None:
    conn = connect(db)
    conn.execute("PRAGMA synchronous = OFF")  # seeding speed only; the server runs as configured
    accounts.create_key(conn, "bench@example.com")
    account_id = accounts.account_for(conn, "bench@example.com")["id"]
    hosts = Hosts("https://sho.rt")
    now = datetime.now(UTC)
    started = time.perf_counter()
    for number in range(count):
        if number % 10_000 == 0:
            conn.execute("BEGIN IMMEDIATE")  # one commit per 10,000 links: seeding speed only
        service.create_link(
            conn,
            account_id,
            CreateLink(
                original_url=f"https://example.com/catalogue/{number}?ref=bench",
                custom_code=code(number),
                title=f"Catalogue item {number}",
            ),
            is_ours=hosts.is_ours,
            base=hosts.short_host,
            daily_limit=count + 1,
            now=now,
            fetch_title=False,
        )
        if number % 10_000 == 9_999:
            conn.execute("COMMIT")
        if number and number % 100_000 == 0:
            print(f"  seeded {number:,} links ({number / (time.perf_counter() - started):,.0f}/s)", flush=True)
    if conn.in_transaction:
        conn.execute("COMMIT")
    conn.close()


def random_links_script(directory: Path, count: int) -> Path:
    path = directory / "random.lua"
    path.write_text(
        f"math.randomseed(os.time())\n"
        f"request = function()\n"
        f'  return wrk.format("GET", string.format("/l/c%07d", math.random(0, {count - 1})))\n'
        f"end\n"
    )
    return path


def read_into_page_cache(db: Path) -> None:
    """Read the whole database file once, so that the kernel's page cache holds it, as it does
    on any machine with memory to spare. The development VM's host reclaims file pages left
    unused for about a minute (a DAMON pageout scheme); a cache miss's read then waits for the
    disk on the event loop, and the p99 measured is the VM's (docs/performance.md, "The p99")."""
    with db.open("rb") as file:
        while file.read(PAGE_CACHE_READ_BYTES):
            pass


def walk_every_link(base: str, work: Path, count: int) -> dict:
    """Visit every link once, in order (wrk -t1 runs one Lua state for all its connections:
    one counter walks every link). wrk has no request-count mode: its script marks a file
    when the last answer is in, and an interrupt makes it stop and report."""
    walked = work / "walked"
    walked.unlink(missing_ok=True)
    script = work / "every.lua"
    script.write_text(
        "local n, answered = -1, 0\n"
        "request = function()\n"
        "  n = n + 1\n"
        f'  return wrk.format("GET", string.format("/l/c%07d", n % {count}))\n'
        "end\n"
        "response = function()\n"
        "  answered = answered + 1\n"
        f"  if answered == {count} then io.open('{walked}', 'w'):close() end\n"
        "end\n"
    )
    process = subprocess.Popen(
        wrk_command(base, WALK_LIMIT_SECONDS, CONNECTIONS, script), stdout=subprocess.PIPE, text=True
    )
    while not walked.exists() and process.poll() is None:
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate()
    if not walked.exists():
        raise RuntimeError(f"wrk stopped before answering {count:,} requests:\n{out}")
    return wrk_results(out)


def proc_number(pid: int, file: str, name: str) -> int:
    """The number after `name:` in /proc/<pid>/<file> (0 when the line is missing)."""
    for line in Path(f"/proc/{pid}/{file}").read_text().splitlines():
        if line.startswith(f"{name}:"):
            return int(line.split()[1])
    return 0


def rss_kib(pid: int) -> int:
    return proc_number(pid, "status", "VmRSS")


def disk_read_bytes(pid: int) -> int:
    """Bytes the process has had read from the disk itself (not from the page cache)."""
    return proc_number(pid, "io", "read_bytes")


def largest_worker_rss_kib(pid: int) -> int:
    """The server's resident memory; with workers, that of the largest worker process."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return max([rss_kib(pid), *(rss_kib(int(child)) for child in children)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--links", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", help="directory to keep the seeded database in, for re-runs")
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes, sharing a Redis")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        print("wrk is needed: apt-get install wrk", file=sys.stderr)
        return 2
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="shortlink-catalogue-"))
    work.mkdir(parents=True, exist_ok=True)
    seeded, port = work / f"catalogue-{args.links}.db", free_port()
    if not seeded.exists():
        print(f"seeding {args.links:,} links…", flush=True)
        seed(seeded, args.links)
    db = fresh_copy(seeded, work)
    redis, redis_url = start_redis(work) if args.workers > 1 else (None, "")
    (work / "shortlink.toml").write_text(
        f'[server]\nport = {port}\n[storage]\npath = "{db}"\n[fetcher]\nenabled = false\n'
        f"[links]\nshort_host = 'https://sho.rt'\n[redis]\nurl = '{redis_url}'\n"
    )
    base = f"http://127.0.0.1:{port}"
    try:
        with serving(
            work / "shortlink.toml", port, work / "server.log", "--workers", str(args.workers), workers=args.workers
        ) as server:
            random_script = random_links_script(work, args.links)
            hot_path = f"/l/{code(0)}"
            wrk(base + hot_path, 2, CONNECTIONS)  # warm-up
            time.sleep(FLUSH_WAIT_SECONDS)  # its clicks are written before the count starts
            before = clicks(db)
            answered = 0
            rounds = []
            for _ in range(args.rounds):
                hot = wrk(base + hot_path, args.seconds, CONNECTIONS)
                read_into_page_cache(db)
                read_before = disk_read_bytes(server.pid)
                spread = wrk(base + "/", args.seconds, CONNECTIONS, random_script)
                spread["disk_read"] = disk_read_bytes(server.pid) - read_before
                answered += hot["requests"] + spread["requests"]
                rounds.append((hot, spread))
            walks = []
            for _ in range(2):  # the second shows whether memory keeps growing
                walks.append(walk_every_link(base + "/", work, args.links))
                answered += walks[-1]["requests"]
                walks[-1]["rss"] = largest_worker_rss_kib(server.pid)
            time.sleep(FLUSH_WAIT_SECONDS)
            recorded = clicks(db) - before
    finally:
        if redis is not None:
            redis.terminate()
    print(
        f"uvicorn, {args.workers} worker(s), {CONNECTIONS} connections, {args.rounds} rounds of {args.seconds} s, "
        f"{args.links:,} links"
    )
    for number, (hot, spread) in enumerate(rounds, start=1):
        print(
            f"round {number}: one hot link {hot['rps']:>7.0f} req/s (p99 {hot['p99']:.2f} ms)   "
            f"uniform over all {spread['rps']:>7.0f} req/s (p99 {spread['p99']:.2f} ms)   "
            f"ratio {spread['rps'] / hot['rps']:.1%}   server read {spread['disk_read'] / 2**20:.1f} MiB from disk"
        )
    hot_rps = statistics.median(hot["rps"] for hot, _ in rounds)
    spread_rps = statistics.median(spread["rps"] for _, spread in rounds)
    spread_p99 = statistics.median(spread["p99"] for _, spread in rounds)
    # Each round's ratio pairs two runs next to each other in time, on the same host load.
    paired = statistics.median(spread["rps"] / hot["rps"] for hot, spread in rounds)
    print(
        f"median: hot {hot_rps:.0f} req/s, uniform {spread_rps:.0f} req/s, ratio {spread_rps / hot_rps:.1%} "
        f"(target >= 60%; median of the rounds' ratios {paired:.1%}), uniform p99 {spread_p99:.2f} ms (target < 15 ms)"
    )
    for number, walk in enumerate(walks, start=1):
        print(
            f"after walk {number} over every link ({walk['requests']:,} requests, {walk['rps']:.0f} req/s): "
            f"server RSS {walk['rss'] / 1024:.0f} MiB (target < 300 MB = {300e6 / 2**20:.0f} MiB)"
        )
    in_flight = (2 * args.rounds + 3) * CONNECTIONS
    print(f"{answered:,} redirects answered, {recorded:,} clicks recorded (wrk drops up to {in_flight} in flight)")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if answered <= recorded <= answered + in_flight else 1


if __name__ == "__main__":
    sys.exit(main())
