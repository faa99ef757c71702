"""A throwaway Redis for tests: Debian's redis-server on a free local port in a temporary
directory, persisting nothing; installed with apt-get when missing (see tests/debian.py)."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

from throwaway.debian import cannot_run, find_or_install
from throwaway.live_server import free_port


class RedisServer:
    """`redis-server --port N --save '' --dir TMP`, started and stopped by the test; with a
    `password`, clients must give it (--requirepass)."""

    def __init__(self, directory: Path, password: str = ""):
        self.directory = directory
        self.port = free_port()
        self.password = password
        self.url = f"redis://{f':{password}@' if password else ''}127.0.0.1:{self.port}/0"
        self.log = directory / f"redis-{self.port}.log"
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 60) -> RedisServer:
        executable = find_or_install("redis-server", "redis-server", "Redis tests")
        # Nothing kept on disk: --save '' and no append-only file.
        self.directory.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    *(executable, "--port", str(self.port), "--bind", "127.0.0.1"),
                    *("--save", "", "--appendonly", "no", "--dir", str(self.directory)),
                    *(("--requirepass", self.password) if self.password else ()),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.time() + timeout
        while time.time() < deadline and self.process.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith((b"+PONG", b"-NOAUTH")):  # up, and asking for the password
                        return self
            except OSError:
                time.sleep(0.05)
        cannot_run("Redis tests", f"redis-server did not start: {self.log.read_text(errors='replace')[-500:]}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
