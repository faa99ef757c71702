"""Progress of long commands (demo seed, backup, migrate), and stopping them cleanly.

On a terminal: a tqdm bar with the rate and the time left. Elsewhere (a CI log, cron,
a pipe): a plain line every few seconds. Always on stderr, so stdout keeps only the
command's result (one JSON document with --json).

Ctrl-C: `stop_on_interrupt()` turns the first SIGINT into a request the work checks
between its steps (a batch, a backup step; `shortlink.stopping`), so it ends with what it
finished committed and nothing half-written; a second Ctrl-C interrupts at once.
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from tqdm import tqdm

from shortlink.stopping import StopRequest

PLAIN_INTERVAL_SECONDS = 5.0
INTERRUPTED_EXIT_CODE = 130  # 128 + SIGINT, as shells report a command stopped by Ctrl-C


class Progress:
    """Counts done out of a total; reports on a terminal as a bar, elsewhere as lines."""

    def __init__(self, what: str, total: int, unit: str, stream: TextIO | None = None, tty_only: bool = False):
        """`tty_only`: a bar on a terminal from the first advance (none when nothing is done),
        and nothing elsewhere."""
        self.what, self.total, self.unit = what, total, unit
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self._bar: tqdm | None = None
        self._tty_only = tty_only
        self._started = self._last_line = time.monotonic()
        if self.stream.isatty() and not tty_only:
            self._open_bar()

    def _open_bar(self) -> None:
        total = self.total
        self._bar = tqdm(
            # A count without a total, when the total is not known (tqdm would read 0 as done).
            total=total or (None if self._tty_only else 0),
            unit=f" {self.unit}",
            unit_scale=total >= 10_000,
            desc=self.what,
            file=self.stream,
            leave=False,
            smoothing=0.1,
        )

    def set_total(self, total: int) -> None:
        """For work whose size is known only once it has begun (a backup's pages)."""
        self.total = total
        if self._bar is not None:
            self._bar.total = total
            self._bar.unit_scale = total >= 10_000
            self._bar.refresh()

    def advance(self, count: int = 1) -> None:
        self.done += count
        if self._bar is not None:
            self._bar.update(count)
            return
        if self._tty_only:
            if self.stream.isatty():
                self._open_bar()
                assert self._bar is not None, "just opened"
                self._bar.update(self.done)
            return
        now_mono = time.monotonic()
        if now_mono - self._last_line >= PLAIN_INTERVAL_SECONDS:
            self._last_line = now_mono
            print(self.line(now_mono), file=self.stream, flush=True)

    def line(self, now_mono: float) -> str:
        """ "demo seed: 1,200,000/10,000,000 clicks (12%), 95,310 clicks/s, about 1m32s left"."""
        elapsed = max(now_mono - self._started, 1e-9)
        rate = self.done / elapsed
        share = f" ({100 * self.done // self.total}%)" if self.total else ""
        left = f", about {_duration((self.total - self.done) / rate)} left" if rate > 0 else ""
        return f"{self.what}: {self.done:,}/{self.total:,} {self.unit}{share}, {rate:,.0f} {self.unit}/s{left}"

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


@contextmanager
def progress(
    what: str, total: int, unit: str, stream: TextIO | None = None, tty_only: bool = False
) -> Iterator[Progress]:
    reporter = Progress(what, total, unit, stream, tty_only)
    try:
        yield reporter
    finally:
        reporter.close()


@contextmanager
def stop_on_interrupt() -> Iterator[StopRequest]:
    """While inside: the first SIGINT asks the work to stop, a second one interrupts."""
    stop = StopRequest()

    def on_interrupt(signum, frame):
        if stop.requested:
            raise KeyboardInterrupt
        stop.set()

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous)
