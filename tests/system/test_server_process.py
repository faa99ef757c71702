"""What only a server process does at start-up (shortlink.server), seen from a real process."""

from __future__ import annotations

import subprocess
import sys

import pytest

from shortlink.server import YOUNG_COLLECTION_THRESHOLD

pytestmark = pytest.mark.slow

START_AND_REPORT = """
import gc, sys
from litestar.testing import TestClient
from shortlink.config import load_config
from shortlink.server import build_server
from shortlink.web.asgi import create_app

config = load_config(storage_path=sys.argv[1], fetcher_enabled=False)
app = build_server(config, create_app(config)).config.app
before = gc.get_freeze_count(), gc.get_threshold()[0]
with TestClient(app) as client:
    assert client.get("/healthz").status_code == 200
    print(*before, gc.get_freeze_count(), gc.get_threshold()[0])
"""


SERVE_AND_REPORT_SQLITE_MEMORY = """
import _sqlite3, ctypes, os, sys, threading, time, urllib.error, urllib.request
from shortlink.config import load_config
from shortlink.server import serve
from throwaway.live_server import free_port

port = free_port()
config = load_config(storage_path=sys.argv[1], fetcher_enabled=False, server_port=port)
threading.Thread(target=serve, args=(config,), daemon=True).start()  # uvicorn: no signals off the main thread
deadline = time.monotonic() + 60
while True:
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz")
        break
    except OSError:
        if time.monotonic() > deadline:  # this script runs without the suite's helpers: not a wait
            raise
        time.sleep(0.05)  # a pause, not a wait: this script runs without the suite's helpers
try:
    urllib.request.urlopen(f"http://127.0.0.1:{port}/l/nothing")
except urllib.error.HTTPError as missing:  # read through the loop's point reader
    print(missing.code, ctypes.CDLL(_sqlite3.__file__).sqlite3_memory_used(), flush=True)
# Leave without finalizing the interpreter under the server thread, which can still be inside
# SQLite or the event loop: that finalization crashed the process now and then (SIGSEGV).
os._exit(0)
"""


def run_server(script: str, tmp_path) -> list[str]:
    """What `script` prints, run in a process of its own on a new database: the words of it."""
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "s.db")], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout.split()


def test_start_up_freezes_its_tables_and_spaces_out_young_collections(tmp_path):
    # A full collection used to walk them on every run, stalling all requests in flight.
    frozen_before, threshold_before, frozen_after, threshold_after = map(int, run_server(START_AND_REPORT, tmp_path))
    assert frozen_before == 0
    assert frozen_after > 50_000  # the rule tables and the app: some 90,000 objects
    # Young collections no longer run on every turn of the loop that holds waiting visits
    # (the interpreter's default is 700 on 3.11, 2,000 from 3.12).
    assert threshold_before < YOUNG_COLLECTION_THRESHOLD
    assert threshold_after == YOUNG_COLLECTION_THRESHOLD


SERVE_AND_LIST_MODULES = """
import sys

import pytest
from litestar.testing import TestClient
from shortlink.config import load_config
from shortlink.server import build_server
from shortlink.web.asgi import create_app

config = load_config(storage_path=sys.argv[1], fetcher_enabled=False)
with TestClient(build_server(config, create_app(config)).config.app) as client:
    assert client.get("/healthz").status_code == 200
    assert client.get("/l/nothing", follow_redirects=False).status_code == 404
    print(*sorted(name for name in sys.modules if name.split(".")[0] in ("redis", "psycopg", "mcp")))
"""


def test_a_server_without_redis_or_postgresql_never_loads_their_clients(tmp_path):
    # Each weighs megabytes of the server's memory (docs/benchmarks.md, memory); nor does a
    # server load the MCP SDK before a request to /mcp (tests/mcp: it loads on the first).
    assert run_server(SERVE_AND_LIST_MODULES, tmp_path) == []


def test_a_served_process_keeps_no_sqlite_memory_statistics(tmp_path):
    # With them on, every SQLite allocation takes one mutex shared by all connections, which
    # the click writer and the event loop's point reads fought over (docs/performance.md).
    # The server has migrated the file and read a link: with statistics on, SQLite counts
    # hundreds of kilobytes in use by then.
    status, memory_counted = map(int, run_server(SERVE_AND_REPORT_SQLITE_MEMORY, tmp_path))
    assert status == 404
    assert memory_counted == 0
