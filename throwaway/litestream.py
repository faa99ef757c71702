"""Litestream for tests and benchmarks: the binary the npm package `@flydotio/litestream` ships,
installed when missing into a cache outside the repository, and a `litestream replicate` process
streaming a database to an S3-compatible server (throwaway.s3_server)."""

from __future__ import annotations

import fcntl
import os
import platform
import signal
import subprocess
import time
from pathlib import Path

from throwaway.debian import cannot_run, find_or_install
from throwaway.s3_server import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY, S3Server

# The npm package pins the Litestream it ships (1.0.1: Litestream v0.3.13, whose `generations`
# command `shortlink doctor` reads); a newer one is taken on purpose, not by a fresh cache.
PACKAGE = "@flydotio/litestream@1.0.1"
# The package's own platform packages, named after Node's os and cpu.
NODE_CPU = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}
DOCUMENTED = Path(__file__).resolve().parents[1] / "docs" / "deploy" / "litestream.yml"


def cache_directory() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "shortlink-tests" / "litestream"


def litestream_binary() -> Path:
    """The Litestream executable, `npm install`ed into the cache first when it is not there
    (Debian's npm installed first when that is missing)."""
    prefix = cache_directory()
    cpu = NODE_CPU.get(platform.machine().lower())
    if cpu is None:
        cannot_run("Litestream tests", f"the npm package ships no Litestream for {platform.machine()}")
    binary = prefix / "node_modules" / "@flydotio" / f"litestream-linux-{cpu}" / "litestream"
    if binary.is_file():
        return binary
    prefix.mkdir(parents=True, exist_ok=True)
    # Parallel test workers may miss it at once: one installs, the others then find it.
    with (prefix.parent / "litestream.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not binary.is_file():
            npm = find_or_install("npm", "npm", "Litestream tests")
            result = subprocess.run(
                [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--no-save", PACKAGE],
                capture_output=True,
                text=True,
                timeout=600,
            )
            if not binary.is_file():
                cannot_run("Litestream tests", f"npm install {PACKAGE} failed: {result.stderr.strip()[-300:]}")
    return binary


def environment() -> dict[str, str]:
    """Litestream's environment: the S3 server's credentials as Litestream's own variables."""
    return {
        **os.environ,
        "LITESTREAM_ACCESS_KEY_ID": ACCESS_KEY_ID,
        "LITESTREAM_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY,
    }


def configuration(database: Path, s3: S3Server, bucket: str, sync_interval: str = "100ms") -> str:
    """The documented docs/deploy/litestream.yml, replicating `database` to `bucket` on the S3
    server; each line replaced must be there, so the example and its tests never drift apart."""
    text = DOCUMENTED.read_text(encoding="utf-8")
    for old, new in {
        "path: /var/lib/shortlink/shortlink.db": f"path: {database}",
        "bucket: shortlink-backups": f"bucket: {bucket}",
        "endpoint: https://s3.example.com": f"endpoint: {s3.endpoint}",
        "region: us-east-1": f"region: {REGION}",
        "sync-interval: 1s": f"sync-interval: {sync_interval}",
    }.items():
        if old not in text:
            raise AssertionError(f"{DOCUMENTED.name} no longer contains {old!r}")
        text = text.replace(old, new)
    return text


class Litestream:
    """`litestream replicate -config FILE`, started and stopped by the test; `run` runs its
    other commands with the same configuration and credentials."""

    def __init__(self, config: Path):
        self.config = config
        self.binary = litestream_binary()
        self.log = config.with_suffix(".log")
        self.process: subprocess.Popen | None = None

    def run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        command, *rest = args
        return subprocess.run(
            [str(self.binary), command, "-config", str(self.config), *rest],
            capture_output=True,
            text=True,
            env=environment(),
            timeout=timeout,
        )

    def start(self) -> Litestream:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [str(self.binary), "replicate", "-config", str(self.config)],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=environment(),
            )
        return self

    def logged(self, text: str) -> bool:
        """Whether the replicating process has logged `text` (and is still running)."""
        assert self.process is not None
        if self.process.poll() is not None:
            raise RuntimeError(f"litestream replicate ended: {self.log.read_text(errors='replace')[-1000:]}")
        return text in self.log.read_text(errors="replace")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60) -> int:
        """On SIGTERM Litestream syncs what the WAL holds to the replica, then ends; v0.3.13 may
        exit 1 after that sync, its closing checkpoint cut short, so the status tells little."""
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(sig)
        started = time.monotonic()
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise RuntimeError(f"litestream did not stop in {time.monotonic() - started:.0f} s") from None
