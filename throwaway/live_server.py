"""A real `shortlink serve` process on 127.0.0.1, for end-to-end tests."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from shortlink.accounts import service as accounts
from shortlink.storage import connect
from throwaway.prewarmed import ForkedProcess, start_forked


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LiveServer:
    """Servers made in the same directory share its database file (and configuration file),
    as several processes of one deployment do; `storage` names another database (a
    postgresql:// URL) that they share instead. `prewarmed`: the process is a fork of one that
    has imported shortlink already (throwaway.prewarmed), which saves seconds of CPU a start;
    with several workers, or without it, a new interpreter runs `python -m shortlink serve`."""

    def __init__(
        self, directory: Path, workers: int = 1, storage: str | None = None, prewarmed: bool = True, **settings: str
    ):
        self.workers = workers
        self.prewarmed = prewarmed and workers == 1
        self.port = free_port()
        self.db: str | Path = storage if storage is not None and "://" in storage else directory / "live.db"
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "SHORTLINK_SERVER_PORT": str(self.port),
            ("SHORTLINK_STORAGE_URL" if isinstance(self.db, str) else "SHORTLINK_STORAGE_PATH"): str(self.db),
            "SHORTLINK_LINKS_SHORT_HOST": self.base_url,
            "SHORTLINK_FETCHER_ENABLED": "false",
            **{f"SHORTLINK_{key.upper()}": value for key, value in settings.items()},
        }
        self.config = directory / "shortlink.toml"
        self.config.touch()
        # The server's log goes to a file: a pipe nobody reads fills up and blocks it.
        self.log = directory / f"server-{self.port}.log"
        self.process: subprocess.Popen | ForkedProcess | None = None

    def start(self, timeout: float = 180) -> LiveServer:
        command = ["serve", "--config", str(self.config), "--workers", str(self.workers)]
        if self.prewarmed:
            self.process = start_forked(command, env=self.env, stderr=self.log)
        else:
            with self.log.open("ab") as log:
                self.process = subprocess.Popen(
                    [sys.executable, "-m", "shortlink", *command], env=self.env, stdout=subprocess.DEVNULL, stderr=log
                )
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"{self.base_url}/healthz", timeout=1) as response:
                    if response.status == 200:
                        return self
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError(self.log.read_text(errors="replace")) from None
                time.sleep(0.1)
        raise RuntimeError("server did not start")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(timeout=timeout)

    def create_key(self, email: str) -> str:
        """A new API key (and Pro account) in the server's database, as the CLI makes it."""
        conn = connect(self.db)
        try:
            return accounts.create_key(conn, email).key
        finally:
            conn.close()

    def request(
        self, method: str, path: str, body: str | bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        """One request on a fresh connection: (status, body)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()
