"""What only a server process does at start-up (shortlink.server), seen from a real process."""

from __future__ import annotations

import subprocess
import sys

START_AND_REPORT = """
import gc, sys
from litestar.testing import TestClient
from shortlink.config import load_config
from shortlink.server import build_server
from shortlink.web.app import create_app

config = load_config(storage_path=sys.argv[1], fetcher_enabled=False)
app = build_server(config, create_app(config)).config.app
before = gc.get_freeze_count()
with TestClient(app) as client:
    assert client.get("/healthz").status_code == 200
    print(before, gc.get_freeze_count())
"""


def test_start_up_puts_the_rule_and_geolocation_tables_out_of_the_collectors_reach(tmp_path):
    # A full collection used to walk them on every run, stalling all requests in flight.
    done = subprocess.run(
        [sys.executable, "-c", START_AND_REPORT, str(tmp_path / "s.db")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    before, after = map(int, done.stdout.split())
    assert before == 0
    assert after > 100_000  # the rule tables and the app: some 150,000 objects
