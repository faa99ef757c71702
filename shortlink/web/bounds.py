"""Refuse oversized query strings and header blocks before any work is done.

The ASGI server's own limits are loose (httptools takes hundreds of KiB of
headers); these bounds keep memory per request small and answer in the API's
error envelope. Bodies are bounded separately (`request_max_body_size`).
"""
from __future__ import annotations

from litestar.types import ASGIApp, Receive, Scope, Send

from shortlink.web.errors import envelope_bytes

MAX_QUERY_BYTES = 8 * 1024
MAX_HEADER_BYTES = 32 * 1024


def oversize_problem(scope: Scope) -> str | None:
    if len(scope["query_string"]) > MAX_QUERY_BYTES:
        return f"query string: must be at most {MAX_QUERY_BYTES} bytes"
    if sum(len(name) + len(value) for name, value in scope["headers"]) > MAX_HEADER_BYTES:
        return f"request headers: must be at most {MAX_HEADER_BYTES} bytes in all"
    return None


def request_bounds_middleware(app: ASGIApp) -> ASGIApp:
    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        problem = oversize_problem(scope) if scope["type"] == "http" else None
        if problem is None:
            await app(scope, receive, send)
            return
        body = envelope_bytes("VALIDATION_ERROR", problem)
        await send({"type": "http.response.start", "status": 400, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            (b"cache-control", b"no-store")]})
        await send({"type": "http.response.body", "body": body})

    return middleware
