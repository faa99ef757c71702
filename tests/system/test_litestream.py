"""Continuous backup with Litestream: a real server's database streamed to a real local
S3-compatible server (moto), the server killed with SIGKILL mid-write, the replica restored onto
an empty directory as the documented unit does, and `shortlink doctor` reading the replica's lag."""

from __future__ import annotations

import http.client
import json
import os
import signal
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shortlink.accounts import service as accounts
from shortlink.storage import connect
from tests.support import paths
from tests.support.helpers import cli_here, wait_for
from throwaway.debian import find_or_install
from throwaway.litestream import Litestream, configuration, environment, litestream_binary
from throwaway.live_server import LiveServer
from throwaway.s3_server import S3Server

# moto, Litestream and two server processes.
pytestmark = [pytest.mark.system, pytest.mark.slow(seconds=15)]

UNIT = paths.REPO / "docs" / "deploy" / "shortlink-litestream.service"
# What a kill may lose: writes acknowledged in the last second before it (docs/deployment.md).
LOSS_WINDOW_SECONDS = 1.0


@pytest.fixture(scope="module")
def s3(tmp_path_factory) -> Iterator[S3Server]:
    """One S3 server for the module; each test replicates to a bucket of its own."""
    server = S3Server(tmp_path_factory.mktemp("s3")).start()
    try:
        yield server
    finally:
        server.stop()


def replicating(directory: Path, database: Path, s3: S3Server, bucket: str) -> Litestream:
    """`litestream replicate` of `database` into `bucket` (made here), with the documented
    configuration syncing every 100 ms; started once it holds a first generation."""
    config = directory / "litestream.yml"
    config.write_text(configuration(database, s3, s3.bucket(bucket)), encoding="utf-8")
    litestream = Litestream(config).start()
    wait_for(lambda: litestream.logged("wal segment written"), 60, "Litestream's first WAL segment in the bucket")
    return litestream


class Writer(threading.Thread):
    """Creates links through the API one after another until the server goes away, keeping
    (when the answer arrived, the short code) of each creation the server acknowledged."""

    def __init__(self, server: LiveServer, key: str):
        super().__init__(daemon=True)
        self.server, self.key = server, key
        self.acknowledged: list[tuple[float, str]] = []

    def run(self) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=30)
        headers = {"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"}
        try:
            for number in range(100_000):
                body = json.dumps({"originalUrl": f"https://example.com/{number}"})
                connection.request("POST", "/api/v1/links", body, headers)
                response = connection.getresponse()
                answer = response.read()
                assert response.status == 201, answer
                self.acknowledged.append((time.monotonic(), json.loads(answer)["data"]["shortCode"]))
        except (OSError, http.client.HTTPException):
            return  # the server was killed
        finally:
            connection.close()


def test_a_restore_after_sigkill_has_every_link_acknowledged_a_second_before_it(tmp_path, s3):
    server = LiveServer(
        tmp_path,
        clicks_flush_interval_ms="20",
        limits_requests_per_minute="1000000",
        limits_links_per_day="1000000",
    )
    conn = connect(server.db)
    key = accounts.create_key(conn, "writer@example.com").key
    conn.close()
    server.start()
    assert isinstance(server.db, Path)
    litestream = replicating(tmp_path, server.db, s3, "crash")
    writer = Writer(server, key)
    writer.start()
    # Writes spanning more than the loss window, so that some fall before it and some inside.
    wait_for(
        lambda: len(writer.acknowledged) >= 100 and time.monotonic() - writer.acknowledged[0][0] > 2.5,
        60,
        "links written for more than two seconds",
    )
    killed_at = time.monotonic()
    server.stop(signal.SIGKILL)
    writer.join(timeout=60)
    # What SQLite wrote to the WAL before the kill is on disk; Litestream copies it, then stops
    # (its exit status may tell of the last checkpoint it tried after the copy, which is no loss).
    litestream.stop()
    assert "litestream shut down" in litestream.log.read_text(), litestream.log.read_text()

    # A new machine: an empty directory, restored as the unit's ExecStartPre does.
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    restored_db = fresh / "live.db"
    restorer = fresh / "litestream.yml"
    restorer.write_text(configuration(restored_db, s3, "crash"), encoding="utf-8")
    restore = ["restore", "-if-db-not-exists", "-if-replica-exists", str(restored_db)]
    done = Litestream(restorer).run(*restore)
    assert done.returncode == 0, done.stderr
    restored = sqlite3.connect(restored_db)
    try:
        assert restored.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        codes = {row[0] for row in restored.execute("SELECT short_code FROM links")}
    finally:
        restored.close()
    settled = [code for at, code in writer.acknowledged if at < killed_at - LOSS_WINDOW_SECONDS]
    assert settled and set(settled) <= codes, f"{len(set(settled) - codes)} of {len(settled)} links lost"
    # A database that is there is left alone.
    before = restored_db.stat().st_mtime_ns
    assert Litestream(restorer).run(*restore).returncode == 0
    assert restored_db.stat().st_mtime_ns == before

    # The service starts on the restored database and sends visitors on.
    again = LiveServer(fresh).start()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", again.port, timeout=30)
        connection.request("GET", f"/l/{settled[0]}")
        response = connection.getresponse()
        assert response.status in (301, 302, 307) and response.getheader("Location") == "https://example.com/0"
        connection.close()
    finally:
        again.stop()


@pytest.fixture
def replicated(tmp_path, s3, monkeypatch) -> Iterator[tuple[Path, Path, Litestream]]:
    """A database replicating to its own bucket, and a configuration naming its Litestream
    configuration, with `litestream` on PATH and the bucket's credentials in the environment."""
    for name in list(os.environ):
        if name.startswith("SHORTLINK_"):
            monkeypatch.delenv(name)
    database = tmp_path / "data" / "shortlink.db"
    database.parent.mkdir()
    connect(database).close()
    litestream = replicating(tmp_path, database, s3, f"doctor-{tmp_path.name}".lower().replace("_", "-")[:60])
    for name, value in environment().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PATH", f"{litestream.binary.parent}{os.pathsep}{os.environ['PATH']}")
    config = tmp_path / "shortlink.toml"
    config.write_text(
        f'[links]\nshort_host = "http://127.0.0.1:8000"\n[backup]\nlitestream_config = "{litestream.config}"\n'
    )
    try:
        yield config, database, litestream
    finally:
        litestream.stop()


def test_doctor_shows_the_replicas_newest_position_and_its_lag(replicated):
    config, database, litestream = replicated
    code, output = cli_here("doctor", "--config", str(config), "--db", str(database))
    assert code == 0, output
    line = next(line for line in output.splitlines() if line.startswith("backup: "))
    (replica,) = json.loads(line.removeprefix("backup: ")).values()
    assert set(replica) == {"generation", "newest", "lag_seconds"}
    assert 0 <= replica["lag_seconds"] < 60 and replica["newest"].startswith("20")

    # The database written two minutes after the replica's newest write: a problem, in one line.
    later = time.time() + 120
    litestream.stop()
    os.utime(database, (later, later))
    code, output = cli_here("doctor", "--config", str(config), "--db", str(database))
    assert code == 1
    (problem,) = [line for line in output.splitlines() if line.startswith("PROBLEM [backup]")]
    assert "s behind the database" in problem and "-> check that litestream replicate runs" in problem


def test_doctor_names_a_litestream_configuration_that_does_not_replicate_the_database(replicated, tmp_path):
    config, _database, _litestream = replicated
    other = tmp_path / "other.db"
    connect(other).close()
    code, output = cli_here("doctor", "--config", str(config), "--db", str(other))
    assert code == 1
    (problem,) = [line for line in output.splitlines() if line.startswith("PROBLEM [backup]")]
    assert str(other) in problem


def test_the_unit_passes_systemd_analyze_verify(tmp_path):
    analyze = find_or_install("systemd-analyze", "systemd", "the systemd unit check")
    # verify insists that ExecStart's program exists: the copy names the one the tests installed.
    unit = tmp_path / UNIT.name
    unit.write_text(UNIT.read_text().replace("/usr/bin/litestream", str(litestream_binary())))
    result = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout + result.stderr == "", result.stdout + result.stderr
