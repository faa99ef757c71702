"""Structured access log lines without personal data.

One JSON object per line and request: time, method, path (no query string: it
can carry anything), status and duration. No IP, no user agent, no cookies, no keys.
"""

from __future__ import annotations

import logging
import sys
import time
from logging.handlers import QueueHandler
from queue import SimpleQueue

import msgspec
from litestar.logging.standard import LoggingQueueListener
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from shortlink.times import to_iso, utcnow

access_log = logging.getLogger("shortlink.access")


class AccessRecord(msgspec.Struct):
    time: str  # when the response was complete, ISO 8601 UTC
    method: str
    path: str
    status: int
    ms: float


_encode = msgspec.json.Encoder().encode


def configure_access_log(enabled: bool) -> None:
    """Send access lines, as they are, to stderr: on when `enabled`, else off.

    The logger has its own handler and does not propagate: the root handler that
    Litestar's logging config installs would prefix each line ("INFO - <time> -
    shortlink.access - accesslog - {...}"), and a line would no longer be JSON.
    Call it after the app and the ASGI server are created, since both configure
    logging. Writing happens on a thread of its own, as for Litestar's handler,
    so a slow terminal or pipe never stalls the event loop.
    """
    access_log.setLevel(logging.INFO if enabled else logging.WARNING)
    access_log.propagate = False
    if enabled and not access_log.handlers:
        queue: SimpleQueue[logging.LogRecord] = SimpleQueue()
        LoggingQueueListener(queue, logging.StreamHandler(sys.stderr))  # type: ignore[arg-type]  # starts now, stops at exit
        access_log.addHandler(QueueHandler(queue))


def access_log_middleware(app: ASGIApp) -> ASGIApp:
    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not access_log.isEnabledFor(logging.INFO):
            await app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_and_note(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await app(scope, receive, send_and_note)
        finally:
            record = AccessRecord(
                to_iso(utcnow()),
                str(scope.get("method", "")),
                scope["path"][:256],
                status,
                round((time.perf_counter() - started) * 1000, 2),
            )
            access_log.info(_encode(record).decode())

    return middleware
