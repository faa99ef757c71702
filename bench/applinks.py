"""Links into an account's own app beside ordinary links, on the redirect path, in one run.

Run: .venv/bin/python -m bench.applinks [--rounds 3] [--seconds 5]. Needs wrk. Starts the bench
server (the real app plus a bare 302, bench/server.py) over a database holding an ordinary link
and a link into an app (iOS and Android), then in alternating rounds measures: the bare 302; the
ordinary link (desktop); the app link from a desktop (302 to the website); and the app link from
Android Chrome (302 to the intent, a deferred-link token signed per request). Throughput with
64 connections and latency with one; every link is in the link cache after the warm-up, its app
riding in the same entry.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from bench.redirects import (
    DESKTOP_UA,
    Case,
    cases_in_turn,
    free_port,
    have_wrk,
    print_cases,
    serving,
    wrk_arguments,
    wrk_results,
)
from shortlink.accounts import service as accounts
from shortlink.application.hosts import Hosts
from shortlink.applinks import service as apps
from shortlink.applinks.schema import AndroidApp, CreateApp, IosApp, SetLinkApp
from shortlink.links import service
from shortlink.links.schema import CreateLink
from shortlink.storage import connect

ANDROID_CHROME_UA = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.6778.81 Mobile Safari/537.36"
)
FINGERPRINT = ":".join(["AB"] * 32)


def seed(db: Path, base: str) -> tuple[str, str]:
    """An ordinary link and a link into the account's app; returns their codes."""
    conn = connect(db)
    accounts.create_key(conn, "bench@example.com")
    account_id = accounts.account_for(conn, "bench@example.com")["id"]
    hosts, now = Hosts(base), datetime.now(UTC)

    def link(url: str) -> tuple[str, str]:
        made = service.create_link(
            conn, account_id, CreateLink(original_url=url), is_ours=hosts.is_ours, base=base, daily_limit=10,
            now=now, fetch_title=False,
        )  # fmt: skip
        return made.id, made.short_code

    _, plain = link("https://shop.example/product/41")
    app_link_id, app_code = link("https://shop.example/product/42")
    app = apps.create_app(
        conn,
        account_id,
        CreateApp(
            ios=IosApp(team_id="ABCDE12345", bundle_id="com.example.shop", app_store_id="123456789"),
            android=AndroidApp(package="com.example.shop", sha256_fingerprints=[FINGERPRINT]),
        ),
        now,
    )
    apps.set_link_app(conn, account_id, app_link_id, SetLinkApp(app_id=app.id, deep_path="/product/42"))
    conn.close()
    return plain, app_code


def measure(url: str, seconds: int, connections: int, agent: str) -> dict:
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", "-H", f"User-Agent: {agent}", url]
    return wrk_results(subprocess.run(command, capture_output=True, text=True, check=True).stdout)


def main() -> int:
    args = wrk_arguments(__doc__.splitlines()[0]).parse_args()
    if not have_wrk():
        return 2
    work = Path(tempfile.mkdtemp(prefix="shortlink-bench-applinks-"))
    db, port = work / "bench.db", free_port()
    base = f"http://127.0.0.1:{port}"
    (work / "shortlink.toml").write_text(
        f'[server]\nport = {port}\n[storage]\npath = "{db}"\n[fetcher]\nenabled = false\n'
    )
    plain, app_code = seed(db, base)
    cases = {
        "bare 302": ("/bench/bare", DESKTOP_UA),
        "ordinary link, desktop": (f"/l/{plain}", DESKTOP_UA),
        "app link, desktop": (f"/l/{app_code}", DESKTOP_UA),
        "app link, Android": (f"/l/{app_code}", ANDROID_CHROME_UA),
    }
    try:
        with serving(work / "shortlink.toml", port, work / "server.log"):
            runs: dict[str, Case] = {
                name: lambda seconds, connections, url=base + path, agent=agent: measure(
                    url, seconds, connections, agent
                )
                for name, (path, agent) in cases.items()
            }
            throughput, latency = cases_in_turn(runs, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{args.rounds} rounds of {args.seconds} s per case and mode")
    print_cases(throughput, latency, "ordinary link, desktop", "the ordinary link", args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
