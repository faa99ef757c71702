"""The deliverer in a process of its own: `shortlink serve` starts one (whatever its --workers),
at a lower CPU priority, and the serving processes only write events.

Why: a deliverer that keeps up with clicks arriving at full speed uses all the CPU it gets, and
on the serving process's event loop it took that CPU (and the GIL) from the redirects. In its
own process, niced, the kernel gives it a small share while the cores are contended and all it
needs while they are not (docs/webhooks.md, "The delivering process").

The parent side (`DeliveryProcess`) runs `python -m shortlink.delivering` from a thread
of its own that waits for it and starts it again after a crash, with a backoff. It starts it
once the installation has a webhook endpoint (looked for every second until then): most
installations have none, and need no process, nor its start-up's CPU. The child's
stdin is a pipe from the parent: the configuration as one JSON line, then a byte for each
wake-up (new events to send now rather than at the next poll). The child stops on SIGTERM, on
the end of that pipe (the parent is gone, SIGKILL included) and, on Linux, on the signal the
kernel sends when the thread that started it ends (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import msgspec

from shortlink.config import Config
from shortlink.storage import Connection, connect
from shortlink.storage import webhooks as store

if TYPE_CHECKING:  # the child imports the deliverer once niced (main)
    from shortlink.webhooks.deliverer import Deliverer

log = logging.getLogger("shortlink.webhooks")

# The child's entry: outside this package, as it builds the deliverer with the wiring
# (wiring.Delivering), which the webhooks package never imports.
MODULE = "shortlink.delivering"
# The child's niceness above the server's: with the cores contended, CFS gives a nice-10
# process about a tenth of a nice-0 one's share; with idle cores it runs as fast as ever.
NICENESS = 10
READY = "delivering (niceness"  # in its log line once its deliverer runs
# A crashed child is started again after this, doubled after each crash in a row up to the
# most; a child that ran STABLE_SECONDS starts the count over.
RESTART_SECONDS = 1.0
MOST_RESTART_SECONDS = 30.0
STABLE_SECONDS = 60.0
# How long a stopping child may finish its round (it abandons sends in flight: their claims
# expire and they go out again, at-least-once) before it is killed.
STOP_SECONDS = 10.0
# Until it starts: how often the installation is looked at for a first endpoint.
ENDPOINT_POLL_SECONDS = 1.0
PR_SET_PDEATHSIG = 1  # linux/prctl.h
WAKE = b"w"


class DeliveryProcess:
    """The delivering child of `shortlink serve`, kept running from `start()` to `stop()`."""

    def __init__(self, config: Config, command: list[str] | None = None):
        self.config = config
        self.command = command or [sys.executable, "-m", MODULE]
        self.started = 0  # children started so far (1 + restarts)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._child: subprocess.Popen | None = None
        self._thread: threading.Thread | None = None

    @property
    def pid(self) -> int | None:
        child = self._child
        return None if child is None else child.pid

    def start(self) -> None:
        self._thread = threading.Thread(target=self._keep_running, name="webhook-delivery-process", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        """New events: one byte down the pipe, never blocking (a full pipe has wake-ups enough)."""
        with self._lock:
            child = self._child
            if child is None or child.stdin is None or child.stdin.closed:
                return
            with contextlib.suppress(OSError):  # full (BlockingIOError), or the child just ended
                os.write(child.stdin.fileno(), WAKE)

    def stop(self) -> None:
        with self._lock:
            self._stopping.set()
            child = self._child
        if child is not None and child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                log.error("webhook delivery process [%d] did not stop in %.0f s: killed", child.pid, STOP_SECONDS)
                child.kill()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    async def aclose(self) -> None:
        """`stop()` off the event loop (an app's shutdown hook)."""
        await asyncio.to_thread(self.stop)

    def _spawn(self) -> subprocess.Popen | None:
        with self._lock:
            if self._stopping.is_set():
                return None
            child = subprocess.Popen([*self.command, str(os.getpid())], stdin=subprocess.PIPE)
            self._child = child
            self.started += 1
            assert child.stdin is not None
            with contextlib.suppress(OSError):  # it ended already: waited for, started again
                # One short line, far below a pipe's buffer: written before the child reads it.
                child.stdin.write(msgspec.json.encode(self.config) + b"\n")
                child.stdin.flush()
                os.set_blocking(child.stdin.fileno(), False)
            log.info("webhook delivery process [%d] started", child.pid)
            return child

    def _until_wanted(self) -> bool:
        """Wait until the installation has a webhook endpoint; False: stopped before that."""
        conn: Connection | None = None
        try:
            while True:
                try:
                    conn = conn or connect(self.config.storage.location)
                    if store.any_endpoint(conn):
                        return True
                except Exception:  # a locked or unreachable database: look again
                    log.exception("could not look for webhook endpoints")
                    with contextlib.suppress(Exception):
                        if conn is not None:
                            conn.close()
                    conn = None
                if self._stopping.wait(ENDPOINT_POLL_SECONDS):
                    return False
        finally:
            if conn is not None:
                conn.close()

    def _keep_running(self) -> None:
        if not self._until_wanted():
            return
        backoff = RESTART_SECONDS
        while True:
            began = time.monotonic()
            try:
                child = self._spawn()
            except OSError:
                log.exception("could not start the webhook delivery process")
                child = None
            if child is not None:
                self._wait(child)
                if self._stopping.is_set():
                    return
                code = child.returncode
                log.error(
                    "webhook delivery process [%d] ended (%s); starting it again in %.0f s",
                    child.pid,
                    f"signal {-code}" if code < 0 else f"exit status {code}",
                    backoff,
                )
            if self._stopping.is_set() or self._stopping.wait(backoff):
                return
            backoff = (
                RESTART_SECONDS if time.monotonic() - began > STABLE_SECONDS else min(backoff * 2, MOST_RESTART_SECONDS)
            )

    def _wait(self, child: subprocess.Popen) -> None:
        child.wait()  # blocks in waitpid, without the GIL; reaps it
        with self._lock:
            self._child = None
            if child.stdin is not None:
                with contextlib.suppress(OSError):
                    child.stdin.close()


def die_with_parent(parent: int) -> None:
    """SIGTERM when the thread that started this process ends (Linux); and if that parent is
    already gone, stop now."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:
        raise SystemExit(0)


def read_config(fd: int) -> tuple[Config, bytes]:
    """The configuration line from the parent, and whatever followed it (wake-ups)."""
    data = b""
    while b"\n" not in data:
        chunk = os.read(fd, 65536)
        if not chunk:
            raise SystemExit(0)  # the parent went away before sending it
        data += chunk
    line, rest = data.split(b"\n", 1)
    return msgspec.json.decode(line, type=Config), rest


class Delivering(Protocol):
    """The child's deliverer with its own connections and hosts (wiring.Delivering)."""

    deliverer: Deliverer

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


async def deliver(build: Callable[[Config], Delivering], config: Config, fd: int) -> None:
    """The deliverer's rounds until SIGTERM or the end of the parent's pipe."""
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stopping.set)
    delivering = build(config)
    await delivering.start()
    log.info("webhook delivery process [%d] %s +%d)", os.getpid(), READY, NICENESS)
    os.set_blocking(fd, False)

    def readable() -> None:
        try:
            data = os.read(fd, 4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            delivering.deliverer.notify()
        else:  # the parent is gone
            loop.remove_reader(fd)
            stopping.set()

    loop.add_reader(fd, readable)
    try:
        await stopping.wait()
    finally:
        loop.remove_reader(fd)
        await delivering.stop()


def main(build: Callable[[Config], Delivering]) -> None:
    """The child: `build(config)` once niced, as the modules it imports are most of the
    process's start-up CPU."""
    parent = int(sys.argv[1])
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the group: the parent stops us
    os.nice(NICENESS)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s:     %(name)s: %(message)s")
    config, _wakes = read_config(sys.stdin.fileno())
    asyncio.run(deliver(build, config, sys.stdin.fileno()))
