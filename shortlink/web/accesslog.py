"""Structured access log lines without personal data.

One JSON object per request: method, path (no query string: it can carry
anything), status and duration. No IP, no user agent, no cookies, no keys.
"""
from __future__ import annotations

import logging
import time

import msgspec
from litestar.types import ASGIApp, Message, Receive, Scope, Send

access_log = logging.getLogger("shortlink.access")


class AccessRecord(msgspec.Struct):
    method: str
    path: str
    status: int
    ms: float


_encode = msgspec.json.Encoder().encode


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
            record = AccessRecord(scope["method"], scope["path"][:256], status,
                                  round((time.perf_counter() - started) * 1000, 2))
            access_log.info(_encode(record).decode())

    return middleware
