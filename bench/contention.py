"""Does one heavy report or full redirect load stall the API? GET /me latency, alone and under load.

Run: .venv/bin/python -m bench.contention [--links 1000] [--clicks 1000000] [--seconds 10]
[--keep DIR]. Needs wrk (Debian: apt-get install wrk).

Seeds an account with demo clicks over a year (through the real recorder, cached in
--keep DIR; each run works on a fresh copy), starts a real server process, then measures /me at a steady 50 requests
per second: first alone, then while (a) account analytics over 366 days are requested
back to back and (b) redirects run at full load at 32 connections. Reports p50/p99 of
/me in both phases, how many reports completed, and the redirect rate under contention.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.redirects import DESKTOP_UA, free_port, fresh_copy, paced_script, serving, wrk
from shortlink.accounts import service as accounts
from shortlink.cli.demo_data import seed
from shortlink.config import load_config
from shortlink.storage import connect

ME_RATE = 50


def prepare(work: Path, links: int, clicks: int) -> tuple[Path, str, str]:
    db = work / f"contention-{links}-{clicks}.db"
    config_file = work / "seed.toml"
    config_file.write_text(f'[storage]\npath = "{db}"\n')
    if not db.exists():
        print(f"seeding {clicks:,} clicks over {links:,} links and 366 days…", flush=True)
        asyncio.run(seed(load_config(config_file, environ={}), "bench@example.com", links, clicks, 366))
    conn = connect(db)
    key = accounts.create_key(conn, "bench@example.com").key
    code = conn.execute("SELECT short_code FROM links ORDER BY id LIMIT 1").fetchone()[0]
    conn.close()
    return db, key, code


def reports_back_to_back(port: int, key: str, stop: threading.Event, done: list[float]) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    while not stop.is_set():
        started = time.perf_counter()
        conn.request("GET", "/api/v1/analytics?days=366", headers={"Authorization": f"Bearer {key}"})
        response = conn.getresponse()
        response.read()
        assert response.status == 200, response.status
        done.append((time.perf_counter() - started) * 1000)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--links", type=int, default=1000)
    parser.add_argument("--clicks", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--keep", help="directory to keep the seeded database in, for re-runs")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        print("wrk is needed: apt-get install wrk", file=sys.stderr)
        return 2
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="shortlink-contention-"))
    work.mkdir(parents=True, exist_ok=True)
    seeded, key, code = prepare(work, args.links, args.clicks)
    db = fresh_copy(seeded, work)
    port = free_port()
    (work / "shortlink.toml").write_text(
        f'[server]\nport = {port}\n[storage]\npath = "{db}"\n[fetcher]\nenabled = false\n'
        "[limits]\nrequests_per_minute = 1000000\n"
    )
    base = f"http://127.0.0.1:{port}"
    me_script = work / "me.lua"
    me_script.write_text(
        f'wrk.headers["Authorization"] = "Bearer {key}"\n' + paced_script(work, ME_RATE, 4).read_text()
    )
    with serving(work / "shortlink.toml", port, work / "server.log"):
        wrk(base + "/api/v1/me", 2, 4, me_script)  # warm-up
        alone = wrk(base + "/api/v1/me", args.seconds, 4, me_script)
        stop, report_ms = threading.Event(), []
        reporter = threading.Thread(target=reports_back_to_back, args=(port, key, stop, report_ms))
        reporter.start()
        with tempfile.TemporaryFile("w+") as redirect_out:
            redirects = subprocess.Popen(
                ["wrk", "-t1", "-c32", f"-d{args.seconds + 2}s", "-H", f"User-Agent: {DESKTOP_UA}", f"{base}/l/{code}"],
                stdout=redirect_out,
                text=True,
            )
            time.sleep(1)
            loaded = wrk(base + "/api/v1/me", args.seconds, 4, me_script)
            redirects.wait()
            redirect_out.seek(0)
            redirect_rps = float(redirect_out.read().split("Requests/sec:")[1].split()[0])
        stop.set()
        reporter.join()
    print(f"{args.clicks:,} clicks over {args.links:,} links and 366 days; /me at {ME_RATE} req/s")
    print(f"/me alone:        p50 {alone['p50']:.2f} ms  p99 {alone['p99']:.2f} ms")
    print(
        f"/me under load:   p50 {loaded['p50']:.2f} ms  p99 {loaded['p99']:.2f} ms  (target p99 < 20 ms) while "
        f"{len(report_ms)} account reports of 366 days ran back to back (median "
        f"{sorted(report_ms)[len(report_ms) // 2]:.0f} ms) and redirects ran at {redirect_rps:.0f} req/s"
    )
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
