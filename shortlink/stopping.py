"""Stopping long work cleanly between its steps: the CLI's Ctrl-C sets a `StopRequest`
(cli/progress.py), and the work — a command's, or the application layer's import — checks it.
Here rather than under cli/ so that the application layer never imports the command line."""

from __future__ import annotations

import threading


class Interrupted(Exception):
    """The operator pressed Ctrl-C; the work stopped at a clean point."""


class StopRequest:
    """Set by the first Ctrl-C; the work calls `check()` between its steps."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        self._event.set()

    @property
    def requested(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        if self._event.is_set():
            raise Interrupted
