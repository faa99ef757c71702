"""`shortlink serve` sends webhook events from a delivering process of its own (webhooks.process):
niced, restarted when it crashes, gone when the server stops (SIGTERM) or is killed (SIGKILL),
and one for the whole server whatever its --workers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shortlink.webhooks.process import MODULE, NICENESS
from tests.support.helpers import wait_for
from tests.support.receiver import Receiver, running_receiver
from throwaway.live_server import LiveServer
from throwaway.redis_server import RedisServer

pytestmark = pytest.mark.slow(seconds=12)  # a server, a child, a restart; two workers and Redis

BROWSER = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"


def stat(pid: int) -> list[str] | None:
    """/proc/<pid>/stat's fields from the state on (field 3 is [0]); None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def running(pid: int) -> bool:
    fields = stat(pid)
    return fields is not None and fields[0] not in "ZX"  # a zombie has ended


def niceness(pid: int) -> int:
    fields = stat(pid)
    assert fields is not None
    return int(fields[16])  # field 19


def children(parent: int, marker: bytes) -> list[int]:
    """The running children of `parent` whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        fields = stat(int(entry.name))
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if fields is not None and int(fields[1]) == parent and marker in command and running(int(entry.name)):
            found.append(int(entry.name))
    return found


def delivering_children(parent: int) -> list[int]:
    return children(parent, MODULE.encode())


def the_child(server: LiveServer, not_this: int | None = None) -> int:
    assert server.process is not None
    parent = server.process.pid
    wait_for(lambda: [pid for pid in delivering_children(parent) if pid != not_this], what="the delivering process")
    (child,) = delivering_children(parent)
    return child


def add_endpoint(server: LiveServer, receiver: Receiver, email: str) -> None:
    """Made by the CLI, another process, while the server runs."""
    command = [sys.executable, "-m", "shortlink", "webhooks", "add", receiver.url, "--email", email]
    command += ["--event", "link.created", "--event", "link.clicked", "--json", "--config", str(server.config)]
    added = json.loads(subprocess.run(command, env=server.env, capture_output=True, check=True, text=True).stdout)
    receiver.secrets = [added["secret"]]


class Clicker:
    """Clicks `code` at most twice a second until the receiver holds `wanted` click events."""

    def __init__(self, server: LiveServer, receiver: Receiver, code: str):
        self.server, self.receiver, self.code, self.last = server, receiver, code, 0.0

    def until(self, wanted: int) -> None:
        def clicked() -> bool:
            if self.receiver.types().count("link.clicked") >= wanted:
                return True
            if time.monotonic() - self.last > 0.5:
                self.last = time.monotonic()
                self.server.request("GET", f"/l/{self.code}", headers={"User-Agent": BROWSER})
            return False

        wait_for(clicked, timeout=120, what=f"{wanted} link.clicked events")


def test_serve_delivers_from_a_niced_child_that_is_restarted_and_ends_with_the_server(tmp_path):
    server = LiveServer(tmp_path, fetcher_allow_private_addresses="true")
    key = server.create_key("hooks@example.com")
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    server.start()
    assert server.process is not None
    with running_receiver() as receiver:
        # No endpoint, no delivering process; the first one, made by the CLI (another process),
        # starts it, and the server notices it wants clicks (it writes click events then).
        assert delivering_children(server.process.pid) == []
        add_endpoint(server, receiver, "hooks@example.com")
        child = the_child(server)
        niced = min(19, niceness(server.process.pid) + NICENESS)
        wait_for(lambda: niceness(child) == niced, what="the delivering process to lower its priority")
        status, body = server.request(
            "POST", "/api/v1/links", json.dumps({"originalUrl": "https://example.com/"}), headers
        )
        assert status == 201, body
        clicks = Clicker(server, receiver, json.loads(body)["data"]["shortCode"])
        clicks.until(1)
        assert "link.created" in receiver.types()

        # A crashed delivering process is started again (logged), and delivers.
        os.kill(child, signal.SIGKILL)
        restarted = the_child(server, not_this=child)
        assert stat(child) is None  # reaped by the server before it started the new one: no zombie
        wait_for(lambda: niceness(restarted) == niced, what="the new one to lower its priority")
        clicks.until(2)
        assert f"webhook delivery process [{child}] ended" in server.log.read_text()
        assert all(item.verified_by for item in receiver.received)  # standardwebhooks, the endpoint's secret

        server.stop(signal.SIGTERM)
        assert stat(restarted) is None  # stopped and reaped by the server before it exited
    log = server.log.read_text()
    assert "could not write" not in log and "Traceback" not in log  # the click writer never failed

    # SIGKILL of the server: its delivering process ends too.
    server.start()
    orphan = the_child(server)
    assert server.stop(signal.SIGKILL) == -signal.SIGKILL
    wait_for(lambda: not running(orphan), what="the delivering process to end with its parent")


def test_many_workers_share_one_delivering_process(tmp_path):
    redis = RedisServer(tmp_path / "redis").start()
    server = LiveServer(tmp_path, workers=2, redis_url=redis.url, fetcher_allow_private_addresses="true")
    key = server.create_key("workers@example.com")
    try:
        server.start()
        assert server.process is not None
        with running_receiver() as receiver:
            add_endpoint(server, receiver, "workers@example.com")
            child = the_child(server)
            headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
            for number in range(4):  # through either worker
                body = json.dumps({"originalUrl": f"https://example.com/{number}"})
                assert server.request("POST", "/api/v1/links", body, headers)[0] == 201
            wait_for(lambda: receiver.types().count("link.created") >= 4, what="the workers' events")
            assert len({item.headers["webhook-id"] for item in receiver.received}) == receiver.count() == 4
        # uvicorn's two workers, and one delivering process beside them: none of theirs.
        workers = children(server.process.pid, b"spawn_main")
        assert len(workers) == 2
        assert len(delivering_children(server.process.pid)) == 1
        assert all(delivering_children(worker) == [] for worker in workers)
        server.stop(signal.SIGTERM)
        assert not running(child)
    finally:
        if server.process is not None and server.process.poll() is None:
            server.stop()
        redis.stop()
