"""Redirect throughput and latency: /l/<code> with click recording vs a bare 302.

Run: make bench (or .venv/bin/python -m bench.redirects [--rounds 3] [--seconds 5]
[--server granian] [--access-log] [--workers N or 1,2] [--backend postgresql]). Needs wrk
(Debian: apt-get install wrk), for --workers N > 1 redis-server (apt-get install
redis-server), and for --backend postgresql Debian's postgresql; both are started here.
Starts a real server process on 127.0.0.1, measures both endpoints in
alternating rounds, prints each round's ratio and the medians, the latency at
half the redirect throughput, then checks that every request sent was
recorded as exactly one click.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import resource
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from shortlink.accounts import service as accounts
from shortlink.application.hosts import Hosts
from shortlink.links import service
from shortlink.links.schema import CreateLink
from shortlink.storage import connect

DESKTOP_UA = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wrk_command(url: str, seconds: int, connections: int, script: Path | None = None) -> list[str]:
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", "-H", f"User-Agent: {DESKTOP_UA}", url]
    if script is not None:
        command[1:1] = ["-s", str(script)]
    return command


def wrk(url: str, seconds: int, connections: int, script: Path | None = None) -> dict:
    out = subprocess.run(wrk_command(url, seconds, connections, script), capture_output=True, text=True, check=True)
    return wrk_results(out.stdout)


def wrk_results(out: str) -> dict:
    """Throughput, requests answered and latency percentiles from wrk's --latency report."""

    def latency(label: str) -> float:
        match = re.search(rf"^\s*{label}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "requests": int(re.search(r"(\d+) requests in", out).group(1)),
        "p50": latency("50"),
        "p99": latency("99"),
        "raw": out,
    }


def paced_script(directory: Path, rate: float, connections: int, latency_ms: float = 0.0) -> Path:
    """wrk has no fixed-rate mode: each connection waits so that together they send `rate`/s.
    Each answer's latency comes on top of the wait; `latency_ms` (measured) is taken off it."""
    path = directory / "paced.lua"
    path.write_text(f"function delay() return {max(1000.0 * connections / rate - latency_ms, 0.0):.3f} end\n")
    return path


def clicks(location: str) -> int:
    conn = connect(location)
    try:
        return conn.execute("SELECT count(*) FROM clicks").fetchone()[0]
    finally:
        conn.close()


def fresh_copy(seeded: Path, work: Path) -> Path:
    """A copy of the seeded database for one run (`run.db` in `work`), taken with SQLite's
    backup API so that what is still in the seed's WAL comes along. Every run starts from
    the seed alone: the clicks of earlier runs would grow the file and slow each run.

    The copy is flushed to disk before the server starts: otherwise the kernel writes its
    pages back during the first rounds, and each page being written is locked against the
    server's reads of it (a stall no server meets outside a benchmark)."""
    db = work / "run.db"
    for stale in (db, work / "run.db-wal", work / "run.db-shm"):
        stale.unlink(missing_ok=True)
    source, target = sqlite3.connect(seeded), sqlite3.connect(db)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()
    with db.open("rb") as written:
        os.fsync(written.fileno())
    return db


def exact_requests(port: int, path: str, count: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port)
    for _ in range(count):
        conn.request("GET", path, headers={"User-Agent": DESKTOP_UA})
        response = conn.getresponse()
        response.read()
        assert response.status == 302, response.status
    conn.close()


def wait_until_serving(port: int, timeout: float = 30) -> None:
    """Until the bench server answers its bare endpoint."""
    deadline = time.time() + timeout
    while True:
        try:
            exact_requests(port, "/bench/bare", 1)
            return
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.2)


@contextmanager
def serving(config: Path, port: int, log: Path, *options: str, workers: int = 1) -> Iterator[subprocess.Popen]:
    """bench/server.py over `config` (with `options`), its output in `log`; yields once its
    `workers` processes all answer, and stops it with SIGTERM afterwards."""
    with log.open("w") as output:
        server = subprocess.Popen(
            [sys.executable, "-m", "bench.server", "--config", str(config), *options], stdout=output, stderr=output
        )
    try:
        wait_until_serving(port)
        wait_for_workers(port, workers)
        yield server
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)


def wait_for_workers(port: int, workers: int, timeout: float = 60) -> None:
    """Until `workers` different processes have answered /healthz (they start one by one)."""
    seen: set[int] = set()
    deadline = time.time() + timeout
    while len(seen) < workers:
        if time.time() > deadline:
            raise RuntimeError(f"only {len(seen)} of {workers} workers answered")
        conn = http.client.HTTPConnection("127.0.0.1", port)
        conn.request("GET", "/healthz")
        seen.add(json.loads(conn.getresponse().read())["process"])
        conn.close()
        time.sleep(0.01)


def start_redis(work: Path) -> tuple[subprocess.Popen, str]:
    redis_server = shutil.which("redis-server")
    if redis_server is None:
        raise SystemExit("--workers needs redis-server: apt-get install redis-server")
    port = free_port()
    process = subprocess.Popen(
        [redis_server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(work)],
        stdout=subprocess.DEVNULL,
    )
    time.sleep(0.5)
    return process, f"redis://127.0.0.1:{port}/0"


def cpu_seconds(roots: dict[str, int]) -> dict[str, float]:
    """CPU time (user + system) used so far by each process named in `roots` and its children
    (uvicorn's workers, PostgreSQL's backends), and by the load generator (wrk runs as a child
    of this process, and each run has ended when this is read)."""
    used = dict.fromkeys(roots, 0.0)
    tick = os.sysconf("SC_CLK_TCK")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        pid, parent = int(stat.parent.name), int(fields[1])
        for kind, root in roots.items():
            if root in (pid, parent):
                used[kind] += (int(fields[11]) + int(fields[12])) / tick
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    used["load generator (wrk)"] = children.ru_utime + children.ru_stime
    return used


def wrk_arguments(description: str) -> argparse.ArgumentParser:
    """The options of every bench that drives wrk."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=64)
    return parser


def have_wrk() -> bool:
    if shutil.which("wrk") is None:
        print("wrk is needed: apt-get install wrk", file=sys.stderr)
        return False
    return True


Case = Callable[[int, int], dict]  # (seconds, connections) -> wrk's figures


def cases_in_turn(cases: dict[str, Case], args) -> tuple[dict[str, list[float]], dict[str, list[tuple[float, float]]]]:
    """Each case's requests/s with `args.connections` and its p50/p99 on one connection, after a
    warm-up, the cases in turn within each round so that the machine's drift falls on all alike."""
    for run in cases.values():
        run(2, args.connections)
    throughput: dict[str, list[float]] = {name: [] for name in cases}
    latency: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for _ in range(args.rounds):
        for name, run in cases.items():
            throughput[name].append(run(args.seconds, args.connections)["rps"])
            alone = run(args.seconds, 1)
            latency[name].append((alone["p50"], alone["p99"]))
    return throughput, latency


def print_cases(
    throughput: dict[str, list[float]], latency: dict[str, list[tuple[float, float]]], reference: str, words: str, args
) -> None:
    """A line per case: median requests/s, as a share of `reference`'s, and median latencies."""
    width = max(map(len, throughput)) + 2
    against = statistics.median(throughput[reference])
    for name in throughput:
        rps = statistics.median(throughput[name])
        p50 = statistics.median(p50 for p50, _ in latency[name])
        p99 = statistics.median(p99 for _, p99 in latency[name])
        print(
            f"{name:<{width}} {rps:>8.0f} req/s ({rps / against:6.1%} of {words}) with {args.connections}"
            f" connections;  one connection: p50 {p50:.2f} ms, p99 {p99:.2f} ms"
        )


def measure(
    args,
    work: Path,
    location: str,
    link_code: str,
    workers: int,
    redis_url: str,
    others: dict[str, int],
    before_round: Callable[[], object] = lambda: None,
) -> tuple[list, dict, int]:
    """One server configuration: (rounds of (bare, redirect), paced run, clicks exactly recorded
    of 2000). `before_round()` runs before each round's bare 302 (bench.webhooks waits there for
    the delivering process to finish the previous round's events)."""
    port = free_port()
    storage = f'url = "{location}"' if "://" in location else f'path = "{location}"'
    config = work / f"shortlink-{workers}.toml"
    config.write_text(
        f"[server]\nport = {port}\naccess_log = {'true' if args.access_log else 'false'}\n"
        f"[storage]\n{storage}\n[fetcher]\nenabled = false\n[limits]\nrequests_per_minute = 1000000\n"
        f'[redis]\nurl = "{redis_url if workers > 1 else ""}"\n'
    )
    # The server's log (and access log, with --access-log) goes to a file, not the terminal.
    log = work / f"server-{workers}.log"
    options = ("--server", args.server, "--workers", str(workers))
    with serving(config, port, log, *options, workers=workers) as server:
        base = f"http://127.0.0.1:{port}"
        redirect_path = f"/l/{link_code}"
        wrk(base + "/bench/bare", 2, args.connections)  # warm-up
        answered = wrk(base + redirect_path, 2, args.connections)["requests"]
        # Alternating rounds: a slow spell of the machine hits both endpoints alike.
        rounds = []
        processes = {"app processes": server.pid, **others}
        cpu_before = cpu_seconds(processes)
        for _ in range(args.rounds):
            before_round()
            bare = wrk(base + "/bench/bare", args.seconds, args.connections)
            redirect = wrk(base + redirect_path, args.seconds, args.connections)
            answered += redirect["requests"]
            rounds.append((bare, redirect))
        cpu_after = cpu_seconds(processes)
        redirect_rps = statistics.median(redirect["rps"] for _, redirect in rounds)
        paced = wrk(
            base + redirect_path, args.seconds, args.connections, paced_script(work, redirect_rps / 2, args.connections)
        )
        answered += paced["requests"]

        time.sleep(0.5)  # let the writer flush
        start_count = clicks(location)
        exact_requests(port, redirect_path, 2000)
        time.sleep(0.5)
        exact_count = clicks(location) - start_count
    paced["answered"] = answered
    paced["cpu"] = {kind: cpu_after[kind] - cpu_before[kind] for kind in cpu_after}
    return rounds, paced, exact_count


def report(args, workers: int, rounds: list, paced: dict, exact_count: int, recorded: int) -> bool:
    print(
        f"server: {args.server}, {workers} worker(s), {args.backend}, {args.connections} connections, "
        f"{args.rounds} rounds of {args.seconds} s per endpoint, access log {'on' if args.access_log else 'off'}"
    )
    for number, (bare, redirect) in enumerate(rounds, start=1):
        print(
            f"round {number}: bare 302 {bare['rps']:>7.0f} req/s (p99 {bare['p99']:.2f} ms)   "
            f"/l/<code> + click {redirect['rps']:>7.0f} req/s (p99 {redirect['p99']:.2f} ms)   "
            f"ratio {redirect['rps'] / bare['rps']:.1%}"
        )
    bare_rps = statistics.median(bare["rps"] for bare, _ in rounds)
    redirect_rps = statistics.median(redirect["rps"] for _, redirect in rounds)
    print(
        f"median: bare 302 {bare_rps:.0f} req/s, /l/<code> + click {redirect_rps:.0f} req/s, "
        f"ratio {redirect_rps / bare_rps:.1%}  (target >= 85%)"
    )
    print(
        f"at half load ({paced['rps']:.0f} req/s): p50 {paced['p50']:.2f} ms  "
        f"p99 {paced['p99']:.2f} ms  (target p99 < 10 ms)"
    )
    cpu = paced["cpu"]
    print(
        "CPU seconds during the rounds: "
        + ", ".join(f"{kind} {seconds:.1f}" for kind, seconds in cpu.items())
        + f" (of {2 * args.rounds * args.seconds * (os.cpu_count() or 1)} on {os.cpu_count()} cores)"
    )
    in_flight = (args.rounds + 2) * args.connections  # per wrk run of the redirect
    print(
        f"wrk phases: {paced['answered']} redirects completed, {recorded} clicks recorded "
        f"(wrk drops up to {in_flight} requests still in flight when a run ends; the server may "
        f"have answered and recorded them)"
    )
    print(
        f"exact phase: 2000 requests sent, {exact_count} clicks recorded -> "
        f"{'OK, none lost' if exact_count == 2000 else 'MISMATCH'}"
    )
    return exact_count == 2000 and paced["answered"] <= recorded <= paced["answered"] + in_flight


def main() -> int:
    parser = wrk_arguments(__doc__.splitlines()[0])
    parser.add_argument("--server", choices=["uvicorn", "granian"], default="uvicorn")
    parser.add_argument("--access-log", action="store_true", help="run with [server] access_log = true")
    parser.add_argument(
        "--workers",
        default="1",
        help="uvicorn worker processes, sharing a Redis; a list (1,2) measures each in turn, in the same run",
    )
    parser.add_argument(
        "--backend",
        choices=["sqlite", "postgresql"],
        default="sqlite",
        help="postgresql: a throwaway server, started here",
    )
    args = parser.parse_args()
    if not have_wrk():
        return 2
    worker_counts = [int(count) for count in args.workers.split(",")]

    work = Path(tempfile.mkdtemp(prefix="shortlink-bench-"))
    redis, redis_url = start_redis(work) if max(worker_counts) > 1 else (None, "")
    postgres = None
    if args.backend == "postgresql":
        from throwaway.postgres_server import PostgresServer  # the tests' throwaway PostgreSQL

        postgres = PostgresServer().start()
        location = postgres.empty_database()
    else:
        location = str(work / "bench.db")
    conn = connect(location)
    accounts.create_key(conn, "bench@example.com")
    account_id = accounts.account_for(conn, "bench@example.com")["id"]
    hosts = Hosts("http://127.0.0.1:8000")
    link = service.create_link(
        conn,
        account_id,
        CreateLink(original_url="https://example.com/landing", title="Bench"),
        is_ours=hosts.is_ours,
        base=hosts.short_host,
        daily_limit=1,
        now=datetime.now(UTC),
        fetch_title=False,
    )
    conn.close()

    results = []
    try:
        for workers in worker_counts:
            before = clicks(location)
            others = {} if redis is None else {"Redis": redis.pid}
            if postgres is not None:
                others["PostgreSQL"] = postgres.pid()
            rounds, paced, exact_count = measure(args, work, location, link.short_code, workers, redis_url, others)
            results.append((workers, rounds, paced, exact_count, clicks(location) - before - exact_count))
    finally:
        if redis is not None:
            redis.terminate()
        if postgres is not None:
            postgres.stop()
    sound = [report(args, *result) for result in results]
    if len(results) > 1:
        first = statistics.median(redirect["rps"] for _, redirect in results[0][1])
        for workers, rounds, *_ in results[1:]:
            ratio = statistics.median(redirect["rps"] for _, redirect in rounds) / first
            print(f"{workers} workers / {results[0][0]}: {ratio:.2f}x the redirect throughput (same run)")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if all(sound) else 1


if __name__ == "__main__":
    sys.exit(main())
