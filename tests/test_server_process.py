"""What only a server process does at start-up (shortlink.server), seen from a real process."""

from __future__ import annotations

import subprocess
import sys

from shortlink.server import YOUNG_COLLECTION_THRESHOLD

START_AND_REPORT = """
import gc, sys
from litestar.testing import TestClient
from shortlink.config import load_config
from shortlink.server import build_server
from shortlink.web.app import create_app

config = load_config(storage_path=sys.argv[1], fetcher_enabled=False)
app = build_server(config, create_app(config)).config.app
before = gc.get_freeze_count(), gc.get_threshold()[0]
with TestClient(app) as client:
    assert client.get("/healthz").status_code == 200
    print(*before, gc.get_freeze_count(), gc.get_threshold()[0])
"""


def test_start_up_freezes_its_tables_and_spaces_out_young_collections(tmp_path):
    # A full collection used to walk them on every run, stalling all requests in flight.
    done = subprocess.run(
        [sys.executable, "-c", START_AND_REPORT, str(tmp_path / "s.db")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    frozen_before, threshold_before, frozen_after, threshold_after = map(int, done.stdout.split())
    assert frozen_before == 0
    assert frozen_after > 100_000  # the rule tables and the app: some 150,000 objects
    # Young collections no longer run on every turn of the loop that holds waiting visits
    # (the interpreter's default is 700 on 3.11, 2,000 from 3.12).
    assert threshold_before < YOUNG_COLLECTION_THRESHOLD
    assert threshold_after == YOUNG_COLLECTION_THRESHOLD
