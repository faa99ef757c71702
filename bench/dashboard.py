"""How long each dashboard page takes to render for a big account.

Run: .venv/bin/python -m bench.dashboard [--links 10000] [--clicks 1000000] [--days 366] [--db PATH]

With --db naming an existing file (a previous run's, printed at the start), seeding is skipped.

Seeds a fresh database with `shortlink demo seed`'s code (the real click recorder) for
one account, gives it a password, signs in, and then requests every page through the
real app in this process (Litestar's TestClient: the whole request, from the ASGI call
to the last byte of HTML, with no network in between). Prints the median and the
slowest of --repeat requests per page. Not a test: nothing here is asserted.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from litestar.testing import TestClient

from bench.analytics import seed_account
from shortlink.accounts import passwords, sessions
from shortlink.config import load_config
from shortlink.storage import connect
from shortlink.web.asgi import create_app

EMAIL, PASSWORD = "big@example.com", "a benchmark password"


def pages(client: TestClient) -> dict[str, str]:
    """Every page, with the ids of the account's busiest link and one of its keys."""
    busiest = re.search(r'href="/links/(lnk_\w+)/analytics"', client.get("/analytics?days=366").text)
    assert busiest, "the account has clicks"
    link = busiest.group(1)
    key = re.search(r'href="/keys/(key_\w+)/revoke"', client.get("/keys").text)
    assert key, "the account has a key"
    return {
        "/ (links, page 1)": "/",
        "/links?page=250 (the last page)": "/links?page=250",
        "/links?search=youtube": "/links?search=youtube",
        "/links?platform=SPOTIFY&state=active": "/links?platform=SPOTIFY&state=active",
        "/links/new": "/links/new",
        "/links/{id} (with the QR preview form)": f"/links/{link}",
        "/links/{id}/qr (PNG, 1024 px)": f"/links/{link}/qr?format=png&size=1024",
        "/links/{id}/analytics (30 days)": f"/links/{link}/analytics",
        "/links/{id}/analytics (365 days)": f"/links/{link}/analytics?days=365",
        "/analytics (7 days)": "/analytics?days=7",
        "/analytics (30 days)": "/analytics",
        "/analytics (365 days)": "/analytics?days=365",
        "/keys": "/keys",
        "/keys/{id}/revoke (confirm)": f"/keys/{key.group(1)}/revoke",
        "/account": "/account",
        "/login (signed out)": "/login",
    }


def time_page(client: TestClient, path: str, repeat: int) -> tuple[float, float, int]:
    times = []
    status = 0
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.get(path, follow_redirects=False)
        times.append((time.perf_counter() - started) * 1000)
        status = response.status_code
    return statistics.median(times), max(times), status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--links", type=int, default=10_000)
    parser.add_argument("--clicks", type=int, default=1_000_000)
    parser.add_argument("--days", type=int, default=366)
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--db", type=Path, help="an already seeded database to reuse")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="shortlink-bench-dashboard-"))
    (work / "shortlink.toml").touch()
    db = args.db or work / "bench.db"
    print(f"database: {db}")
    config = load_config(work / "shortlink.toml", environ={}, storage_path=str(db), fetcher_enabled=False)
    if args.db is None:
        seed_account(config, EMAIL, args.links, args.clicks, args.days)
        conn = connect(config.storage.path)
        sessions.set_password(conn, EMAIL, passwords.hash_password(PASSWORD))
        conn.close()
    with TestClient(app=create_app(config)) as client:
        form = client.get("/login").text
        csrf = re.search(r'name="csrf" value="([^"]+)"', form).group(1)  # type: ignore[union-attr]
        client.post("/login", data={"email": EMAIL, "password": PASSWORD, "csrf": csrf})
        print(f"{'page':<44} {'median':>9} {'slowest':>9}")
        for label, path in pages(client).items():
            if label.startswith("/login"):
                client.cookies.clear()
            median, slowest, status = time_page(client, path, args.repeat)
            print(f"{label:<44} {median:7.1f} ms {slowest:7.1f} ms{'' if status == 200 else f'  (status {status})'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
