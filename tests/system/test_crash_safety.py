"""Real server processes under load: SIGKILL, SIGTERM, the CLI writing meanwhile, and online backups."""

from __future__ import annotations

import http.client
import json
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from shortlink.accounts import service as accounts
from shortlink.links.schema import CreateLink
from shortlink.storage import connect
from tests.conftest import run_cli
from tests.support.helpers import store_link, wait_for
from tests.support.load import Load, assert_rollups_match_raw_clicks
from throwaway.live_server import LiveServer

pytestmark = pytest.mark.slow

FLUSH_INTERVAL_MS = 100


def prepare(server: LiveServer) -> tuple[str, str]:
    conn = connect(server.db)
    key = accounts.create_key(conn, "load@example.com").key
    account_id = conn.execute("SELECT id FROM accounts").fetchone()[0]
    link = store_link(conn, account_id, server.base_url, CreateLink(original_url="https://example.com/x", title="t"))
    conn.close()
    return key, link.short_code


def recorded(server: LiveServer) -> int:
    conn = connect(server.db)
    try:
        return conn.execute("SELECT count(*) FROM clicks").fetchone()[0]
    finally:
        conn.close()


def assert_sound(conn) -> None:
    """SQLite's own check of the file (PostgreSQL's crash safety is the server's, not ours)."""
    if isinstance(conn, sqlite3.Connection):
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


@pytest.mark.both_backends
def test_sigkill_loses_only_the_unflushed_queue_and_keeps_the_file_sound(tmp_path, storage):
    server = LiveServer(tmp_path, storage=storage, clicks_flush_interval_ms=str(FLUSH_INTERVAL_MS))
    _, code = prepare(server)
    server.start()
    load = Load(server.port, code)
    # What a SIGKILL may lose is the writer's queue, never a batch it reported written.
    # Read from the server itself, not from the clock: a loaded machine may delay a
    # flush, but a written batch is committed.
    health: dict = {}

    def written_under_load() -> bool:
        status, body = server.request("GET", "/healthz")
        health.update(json.loads(body) if status == 200 else {})  # a loaded writer may time it out
        # Twenty written hold every kind of visitor of the load (a bot every fourth request).
        return load.acknowledged > 200 and health.get("clicksWritten", 0) >= 20

    wait_for(written_under_load, what="clicks acknowledged and twenty written")
    written_before_kill = health["clicksWritten"]
    killed_at = time.monotonic()
    server.stop(signal.SIGKILL)
    load.stop()
    assert load.acknowledged > 200, "the load did not run"

    server.start()  # restart on the same file
    conn = connect(server.db)
    try:
        assert_sound(conn)
        stored = conn.execute("SELECT count(*) FROM clicks").fetchone()[0]
        # The counter and every rollup moved in the same transactions as the raw rows:
        # per link, account, day, dimension and value, visitors included.
        assert_rollups_match_raw_clicks(conn)
        kinds = conn.execute(
            "SELECT count(DISTINCT device), count(DISTINCT campaign), sum(is_bot) FROM clicks"
        ).fetchone()
        assert kinds[0] >= 2 and kinds[1] >= 2 and 0 < kinds[2] < stored  # a real mix was checked
    finally:
        conn.close()
        server.stop()
    acknowledged = sorted(load.acknowledged_at)
    lost = len(acknowledged) - stored  # at most one per client is stored but never acknowledged
    # Clicks are stored in the order they were acknowledged: the lost ones are the last.
    oldest_lost_ms = (killed_at - acknowledged[stored]) * 1000 if lost > 0 else 0.0
    print(
        f"\nSIGKILL under load: {len(acknowledged)} clicks acknowledged, {stored} stored, "
        f"{max(lost, 0)} lost; the oldest lost was acknowledged {oldest_lost_ms:.0f} ms before the kill "
        f"(flush interval {FLUSH_INTERVAL_MS} ms)"
    )
    assert 0 < written_before_kill <= stored <= len(acknowledged) + len(load.threads), (
        written_before_kill,
        stored,
        len(acknowledged),
    )


@pytest.mark.both_backends
def test_sigterm_under_load_loses_nothing(tmp_path, storage):
    server = LiveServer(tmp_path, storage=storage, clicks_flush_interval_ms="1000")
    _, code = prepare(server)
    server.start()
    load = Load(server.port, code)
    wait_for(lambda: load.acknowledged > 100, what="the load to run")
    # uvicorn re-raises the signal once its graceful shutdown is complete.
    assert server.stop(signal.SIGTERM) in (0, -signal.SIGTERM)
    acknowledged = load.stop()
    total = recorded(server)
    # Every acknowledged click is stored; at most one per client may have been
    # stored although its response was cut off by the stop.
    assert acknowledged <= total <= acknowledged + len(load.threads)
    conn = connect(server.db)
    try:
        assert_rollups_match_raw_clicks(conn)
    finally:
        conn.close()


@pytest.mark.both_backends
def test_cli_writes_while_the_server_runs_never_lock_out_api_clients(tmp_path, storage):
    server = LiveServer(tmp_path, storage=storage, limits_requests_per_minute="1000000", limits_links_per_day="1000000")
    key, _ = prepare(server)
    server.start()
    statuses: list[int] = []
    done = threading.Event()

    def api_client():
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        while not done.is_set():
            body = json.dumps({"originalUrl": "https://example.com/y", "title": "x"})
            conn.request(
                "POST",
                "/api/v1/links",
                body=body,
                headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
            )
            response = conn.getresponse()
            statuses.append(response.status)
            response.read()

    thread = threading.Thread(target=api_client)
    thread.start()
    try:
        for i in range(8):
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "shortlink",
                    "key",
                    "create",
                    "--email",
                    f"cli{i}@example.com",
                    "--db",
                    str(server.db),
                ],
                check=True,
                capture_output=True,
                timeout=300,
            )
    finally:
        done.set()
        thread.join()
        server.stop()
    assert statuses and set(statuses) == {201}, sorted(set(statuses))


def test_backup_of_a_live_database_holds_what_was_committed_and_restores(tmp_path):
    server = LiveServer(tmp_path)
    key, code = prepare(server)
    server.start()
    copy = tmp_path / "backups" / "copy.db"
    copy.parent.mkdir()
    load = Load(server.port, code, clients=1)
    try:
        wait_for(lambda: recorded(server) >= 50, 10, "50 clicks to be written")
        committed_before = recorded(server)
        result = run_cli("backup", str(copy), "--db", str(server.db))
        committed_after = recorded(server)
        # The server goes on committing: the backup leaves the writer free (whether a batch
        # lands while a small file is copied is a matter of timing, not asserted).
        wait_for(lambda: recorded(server) > committed_after, what="a commit after the backup")
    finally:
        load.stop()
        server.stop()
    assert result.stdout == f"backed up to {copy}\n"
    assert not Path(f"{copy}-wal").exists()  # one self-contained file
    conn = sqlite3.connect(copy)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        copied = conn.execute("SELECT count(*) FROM clicks").fetchone()[0]
        assert committed_before <= copied <= committed_after
        assert_rollups_match_raw_clicks(conn)  # one snapshot: no half-copied batch
    finally:
        conn.close()
    # The README's restore: the copy becomes the database of a server, which serves it.
    (tmp_path / "restored").mkdir()
    restored = LiveServer(tmp_path / "restored")
    restored.db.write_bytes(copy.read_bytes())
    restored.start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", restored.port, timeout=10)
        conn.request("GET", "/api/v1/links", headers={"Authorization": f"Bearer {key}"})
        links = json.loads(conn.getresponse().read())["data"]
        assert [(link["shortCode"], link["clickCount"]) for link in links] == [(code, copied)]
    finally:
        restored.stop()


def test_backup_errors_are_one_line_and_leave_no_file(tmp_path):
    database = tmp_path / "live.db"
    connect(database).close()
    taken = tmp_path / "taken.db"
    taken.write_bytes(b"keep me")
    for destination, arguments, message in [
        (tmp_path / "missing-directory" / "copy.db", ["--db", str(database)], "failed: unable to open database file"),
        (taken, ["--db", str(database)], "exists; choose a new file"),
        (tmp_path / "copy.db", ["--db", str(tmp_path / "nothing-here.db")], "no database at"),
    ]:
        result = run_cli("backup", str(destination), *arguments, check=False)
        assert result.returncode == 1 and result.stdout == ""
        assert result.stderr.startswith("shortlink: ") and result.stderr.count("\n") == 1, result.stderr
        assert message in result.stderr
    assert taken.read_bytes() == b"keep me"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["live.db", "taken.db"]
