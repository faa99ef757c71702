"""What a request must be before any work is done on it.

Oversized query strings and header blocks, and a Host header with a bad port, are refused first: the ASGI server's
own limits are loose (httptools takes hundreds of KiB of headers); these bounds
keep memory per request small and answer in the API's error envelope. Bodies
are bounded in size by `request_max_body_size`, and must be JSON objects of the
exact types the API documents (`check_json_body`).
"""

from __future__ import annotations

import functools
import json

import msgspec
from litestar import Request
from litestar.types import ASGIApp, HTTPResponseStartEvent, Receive, Scope, Send

from shortlink.errors import ValidationError, field_error
from shortlink.http.envelope import envelope_bytes

MAX_QUERY_BYTES = 8 * 1024
MAX_HEADER_BYTES = 32 * 1024
MAX_BODY_BYTES = 64 * 1024


MAX_PORT = 65535


def request_problem(scope: Scope) -> str | None:
    if len(scope["query_string"]) > MAX_QUERY_BYTES:
        return f"query string: must be at most {MAX_QUERY_BYTES} bytes"
    if sum(len(name) + len(value) for name, value in scope["headers"]) > MAX_HEADER_BYTES:
        return f"request headers: must be at most {MAX_HEADER_BYTES} bytes in all"
    return host_problem(scope)


def host_problem(scope: Scope) -> str | None:
    """A Host header whose port is no port (RFC 9112 asks for a 400): every later reading
    of the request URL (Litestar's request.url, short URLs built for the visitor) would fail.
    Only the port is judged here: a host in stray brackets is served (the visitor's pages
    then offer the configured short URL)."""
    host = next((value for name, value in scope["headers"] if name == b"host"), b"").decode("latin-1")
    if host.startswith("["):
        end = host.find("]")
        after = host[end + 1 :] if end != -1 else ""
    else:
        after = host[host.find(":") :] if host.count(":") == 1 else ""
    port = after[1:] if after.startswith(":") else ""
    # Length first: int() refuses more than 4,300 digits with a ValueError. Five digits at most,
    # as host_name reads a port: a longer one (leading zeros too) is no host of ours either.
    if port and not (port.isascii() and port.isdigit() and len(port) <= 5 and int(port) <= MAX_PORT):
        return "Host header: is not a host name with an optional port from 0 to 65535"
    return None


def request_bounds_middleware(app: ASGIApp) -> ASGIApp:
    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        problem = request_problem(scope) if scope["type"] == "http" else None
        if problem is None:
            await app(scope, receive, send)
            return
        body = envelope_bytes("VALIDATION_ERROR", problem)
        start: HTTPResponseStartEvent = {
            "type": "http.response.start",
            "status": 400,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
                (b"x-content-type-options", b"nosniff"),
            ],
        }
        await send(start)
        await send({"type": "http.response.body", "body": body, "more_body": False})

    return middleware


async def check_json_body(request: Request) -> None:
    """A before-request hook: the body of a handler taking `data` must be a JSON object
    sent as application/json (or without a Content-Type) whose fields have exactly the
    documented JSON types.

    Litestar alone would read any body as JSON whatever its Content-Type, and convert
    it leniently ("false", "1" and 1 all become booleans). After this check its own
    reading of the same body cannot fail.
    """
    data = request.route_handler.parsed_fn_signature.parameters.get("data")
    if data is None:
        return
    body = await request.body()
    if not body.strip():
        raise ValidationError("body", "is empty; send a JSON object")
    # No Content-Type at all is read as JSON (clients that post bare bytes); a declared
    # other type (a form, text/plain) means the client sent something else.
    media_type = request.content_type[0].lower()
    if media_type and media_type != "application/json":
        raise ValidationError("Content-Type", f"must be application/json, not {media_type}")
    try:
        _decoder(data.annotation).decode(body)
    except msgspec.ValidationError as exc:
        raise field_error(str(exc)) from None
    except (msgspec.DecodeError, UnicodeDecodeError):  # msgspec raises the latter for bad UTF-8 in a string
        raise ValidationError("body", f"is not valid JSON: {_json_problem(body)}") from None


@functools.cache
def _decoder(type_: type) -> msgspec.json.Decoder:
    return msgspec.json.Decoder(type_, strict=True)


def _json_problem(body: bytes) -> str:
    """Where the JSON goes wrong, for a body msgspec could not parse (its own message
    says "Input data was truncated" for a lone \\ud800 escape too)."""
    try:
        json.loads(body.decode("utf-8"), parse_constant=_not_json)
    except UnicodeDecodeError as exc:
        return f"it is not UTF-8 ({exc.reason} at byte {exc.start})"
    except (ValueError, RecursionError) as exc:
        return str(exc)
    return "a \\u escape is half of a UTF-16 surrogate pair (e.g. \\ud800); text must be valid Unicode"


def _not_json(name: str) -> None:
    raise ValueError(f"{name} is not a JSON value")
