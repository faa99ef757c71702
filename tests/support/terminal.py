"""The real `shortlink` command on a pseudo-terminal, as a person at a terminal runs it."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time


def on_terminal(
    *args: str, answer: bytes = b"", columns: int = 100, env: dict[str, str] | None = None
) -> tuple[int, str]:
    """Run `shortlink` on a pseudo-terminal (stdin, stdout and stderr), typing `answer`, with
    `env` added to this process's environment."""
    leader, follower = pty.openpty()
    # A terminal of real size: on a 0-column one progress bars have no room to draw.
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "shortlink", *args],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        close_fds=True,
        env={**os.environ, **(env or {})},
    )
    os.close(follower)
    if answer:
        os.write(leader, answer)
    output = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # reading what it prints as it comes: not a wait
        ready, _, _ = select.select([leader], [], [], 1)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the process ended and closed the terminal
                break
            if not chunk:
                break
            output += chunk
        elif process.poll() is not None:
            break
    os.close(leader)
    return process.wait(timeout=300), output.decode(errors="replace")
