"""Requests sent straight to the ASGI app, as a server hands them over: header values as
raw bytes (the test client re-encodes them as UTF-8), on the loop the app's lifespan
runs on."""

from __future__ import annotations

from typing import Any


def http_scope(
    method: str,
    path: str,
    headers: list[tuple[bytes, bytes]],
    *,
    client: tuple[str, int] = ("127.0.0.1", 50000),
    server: tuple[str, int] = ("testserver.local", 443),
    scheme: str = "https",
) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": scheme,
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "client": client,
        "server": server,
        "state": {},
    }


async def call_app(app, scope: dict[str, Any], body: bytes = b"") -> tuple[int, dict[bytes, bytes], bytes]:
    """(status, headers, body) of the app's answer to one request."""
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start = next(message for message in sent if message["type"] == "http.response.start")
    content = b"".join(message.get("body", b"") for message in sent if message["type"] == "http.response.body")
    return start["status"], dict(start["headers"]), content
