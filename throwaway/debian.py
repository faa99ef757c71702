"""Real components from Debian's packages (chromium, redis-server), installed when missing.

Installed with apt-get as root, or through sudo without a password; where that cannot be
done the caller fails with the reason (`CannotRun`).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import NoReturn


class CannotRun(RuntimeError):
    """A component cannot be had here: the test or benchmark needing it fails with the reason
    (a skipped test would prove nothing)."""


def cannot_run(what: str, reason: str) -> NoReturn:
    raise CannotRun(f"{what} cannot run: {reason}")


def find_or_install(command: str, package: str, what: str) -> str:
    """The path of `command`, installing Debian's `package` first when it is missing."""
    found = shutil.which(command)
    if found:
        return found
    # Parallel test workers may miss the same command at once; apt-get takes one at a time.
    with (Path(tempfile.gettempdir()) / "shortlink-tests-apt.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return shutil.which(command) or _install(command, package, what)


def _install(command: str, package: str, what: str) -> str:
    if shutil.which("apt-get") is None:
        cannot_run(what, f"{command} is missing and there is no apt-get to install it")
    as_root = [] if os.geteuid() == 0 else ["sudo", "-n"]
    if as_root and shutil.which("sudo") is None:
        cannot_run(what, f"{command} is missing and installing it needs root (no sudo here)")
    for install in (
        ["apt-get", "install", "-y", "-q", package],
        ["sh", "-c", f"apt-get update -q && apt-get install -y -q {package}"],
    ):
        result = subprocess.run(
            [*as_root, *install],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
        )
        found = shutil.which(command)
        if result.returncode == 0 and found:
            return found
    cannot_run(what, f"{package} could not be installed: {result.stderr.strip()[-300:]}")
