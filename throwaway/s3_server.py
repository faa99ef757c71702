"""A throwaway S3-compatible server for tests: moto's server (`moto[server]`, a test extra) on a
free local port, keeping its buckets in memory; Litestream replicates to it through
`endpoint:` with `force-path-style: true`."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from throwaway.debian import cannot_run
from throwaway.live_server import free_port

# moto accepts any credentials; Litestream and boto insist on having some.
ACCESS_KEY_ID = "shortlink-test"
SECRET_ACCESS_KEY = "shortlink-test-secret"
REGION = "us-east-1"


def moto_server() -> str:
    """The `moto_server` of this interpreter's environment (installed with the test extras)."""
    beside = Path(sys.executable).parent / "moto_server"
    found = str(beside) if beside.exists() else shutil.which("moto_server")
    if found is None:
        cannot_run("S3 tests", "moto_server is missing: `make install` installs moto[server] with the test extras")
    return found


class S3Server:
    """`moto_server -H 127.0.0.1 -p N`, started and stopped by the test; `bucket(name)` makes one."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.log = directory / f"s3-{self.port}.log"
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 60) -> S3Server:
        self.directory.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [moto_server(), "-H", "127.0.0.1", "-p", str(self.port)], stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.time() + timeout
        while time.time() < deadline and self.process.poll() is None:
            try:
                with urllib.request.urlopen(f"{self.endpoint}/", timeout=1):
                    return self
            except OSError:
                time.sleep(0.05)
        cannot_run("S3 tests", f"moto_server did not start: {self.log.read_text(errors='replace')[-500:]}")

    def bucket(self, name: str) -> str:
        """A new empty bucket (path-style: PUT /name); its name."""
        request = urllib.request.Request(f"{self.endpoint}/{name}", method="PUT")
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 200, response.status
        return name

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
