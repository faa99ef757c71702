"""A bio page's server time and throughput beside the redirect's, in one run.

Run: .venv/bin/python -m bench.bio [--rounds 3] [--seconds 5] [--buttons 12]. Needs wrk.
Starts the bench server (the real app plus a bare 302, bench/server.py) over a database
holding one published bio page with N buttons, then in alternating rounds measures the bare
endpoint, `/l/<code>` (with click recording) and `/@<handle>` (from memory, view counted):
throughput with 64 connections, and latency with one connection, where a request's time is
the server's own plus a loopback round trip.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from bench.redirects import (
    Case,
    cases_in_turn,
    free_port,
    have_wrk,
    print_cases,
    serving,
    wrk,
    wrk_arguments,
)
from shortlink.accounts import service as accounts
from shortlink.application.hosts import Hosts
from shortlink.bio import service as bio_service
from shortlink.bio.schema import SavePage
from shortlink.links import service
from shortlink.links.schema import CreateLink
from shortlink.storage import connect

HANDLE = "bench"


def seed(db: Path, base: str, buttons: int) -> str:
    """One account with `buttons` links, all on its published bio page; returns one link's code."""
    conn = connect(db)
    accounts.create_key(conn, "bench@example.com")
    account_id = accounts.account_for(conn, "bench@example.com")["id"]
    hosts = Hosts(base)
    now = datetime.now(UTC)
    page = SavePage(handle=HANDLE, title="Bench's links", description="Everything, in one place", is_published=True)
    bio_service.save_page(conn, account_id, page, base, now)
    codes = []
    for n in range(buttons):
        link = service.create_link(
            conn,
            account_id,
            CreateLink(original_url=f"https://www.youtube.com/watch?v=bench{n}", title=f"Video number {n}"),
            is_ours=hosts.is_ours,
            base=base,
            daily_limit=buttons,
            now=now,
            fetch_title=False,
        )
        bio_service.add_button(conn, account_id, link.id, None, base, now)
        codes.append(link.short_code)
    conn.close()
    return codes[0]


def main() -> int:
    parser = wrk_arguments(__doc__.splitlines()[0])
    parser.add_argument("--buttons", type=int, default=12)
    args = parser.parse_args()
    if not have_wrk():
        return 2
    work = Path(tempfile.mkdtemp(prefix="shortlink-bench-bio-"))
    db, port = work / "bench.db", free_port()
    base = f"http://127.0.0.1:{port}"
    (work / "shortlink.toml").write_text(
        f'[server]\nport = {port}\n[storage]\npath = "{db}"\n[fetcher]\nenabled = false\n'
    )
    code = seed(db, base, args.buttons)
    paths = {"bare 302": "/bench/bare", "/l/<code> + click": f"/l/{code}", "/@<handle> + view": f"/@{HANDLE}"}
    try:
        with serving(work / "shortlink.toml", port, work / "server.log"):
            runs: dict[str, Case] = {
                name: lambda seconds, connections, url=base + path: wrk(url, seconds, connections)
                for name, path in paths.items()
            }
            throughput, latency = cases_in_turn(runs, args)  # the warm-up renders and caches the page
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{args.rounds} rounds of {args.seconds} s per endpoint and mode; a page of {args.buttons} buttons")
    print_cases(throughput, latency, "bare 302", "bare", args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
