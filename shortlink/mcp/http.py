"""/mcp: the tools over Streamable HTTP, in the server process, behind the API's keys.

Every HTTP request is authenticated before the SDK sees it (401 with
`WWW-Authenticate: Bearer`, or 403 without an active subscription) and is not
charged: the per-minute budget is charged per tool call (`tools.call`).

Before the SDK sees a request, its Host and Origin must be the service's own (the SDK's
DNS-rebinding protection, given the configured hosts), and its body must be one JSON-RPC
message: anything else gets a JSON-RPC error of our own words, not the SDK's validation
text naming its classes.

The session manager is stateless: each request carries its own key and is served
on its own, so nothing ties a client to one process, and a revoked key fails on its
next request. Clients of the current protocol revision (per-request envelope) and of
the older initialize handshake are both served; the SDK tells them apart.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Iterable
from typing import cast
from urllib.parse import urlsplit

import msgspec
from litestar.types import HTTPScope, Receive, ReceiveMessage, Scope, Send
from mcp.server import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import INVALID_REQUEST, PARSE_ERROR, jsonrpc_message_adapter
from pydantic import ValidationError

from shortlink.accounts.schema import Principal
from shortlink.errors import ErrorCode, SubscriptionRequiredError, UnauthorizedError
from shortlink.http.bounds import MAX_BODY_BYTES
from shortlink.http.envelope import envelope_bytes
from shortlink.mcp import PATH
from shortlink.mcp import domains as domain_tools  # noqa: F401 - registers the domain tools
from shortlink.mcp import link_rules as link_rules_tools  # noqa: F401 - registers the link-rules tools
from shortlink.mcp.tools import build_server
from shortlink.wiring import Services

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
PRINCIPAL = "shortlink.mcp.principal"  # the scope state key of the request's principal


def transport_security(scheme: str, configured_hosts: Iterable[str]) -> TransportSecuritySettings:
    """The Host and Origin values MCP answers to: each configured host ("host[:port]", the short
    host and [links] domains), with any port or none, over the short host's scheme. A page
    of another site that rebinds its own name to this server is refused (421 or 403)."""
    allowed_hosts: list[str] = []
    allowed_origins: list[str] = []
    for netloc in sorted(host.lower() for host in configured_hosts):
        port = urlsplit("//" + netloc).port
        name = netloc.removesuffix(f":{port}") if port is not None else netloc
        for host in (netloc, name, name + ":*"):
            allowed_hosts.append(host)
            allowed_origins.append(f"{scheme}://{host}")
    # The machine's loopback names, which no other site can rebind: a client on the server
    # itself (a script, an MCP inspector page on another local port) uses them.
    for name in LOOPBACK_NAMES:
        for host in (name, name + ":*"):
            allowed_hosts.append(host)
            allowed_origins += [f"http://{host}", f"https://{host}"]
    return TransportSecuritySettings(allowed_hosts=allowed_hosts, allowed_origins=allowed_origins)


class _JsonRpcError(msgspec.Struct):
    code: int
    message: str


class _JsonRpcErrorReply(msgspec.Struct):
    error: _JsonRpcError
    jsonrpc: str = "2.0"
    id: None = None


def principal_of_request(ctx: ServerRequestContext) -> Principal:
    # The request that carried the call, authenticated by McpEndpoint before the SDK saw it.
    request = ctx.request
    if request is None or PRINCIPAL not in request.scope.get("state", {}):
        raise UnauthorizedError("This call did not come through an authenticated HTTP request")
    return request.scope["state"][PRINCIPAL]


class McpEndpoint:
    def __init__(self, services: Services):
        self.services = services
        self.manager = StreamableHTTPSessionManager(
            app=build_server(services, principal_of_request),
            json_response=True,
            stateless=True,
            max_request_body_size=MAX_BODY_BYTES,
            security_settings=transport_security(services.hosts.scheme, services.hosts.configured),
        )

    @contextlib.asynccontextmanager
    async def lifespan(self, _app) -> AsyncIterator[None]:
        # The SDK logs every stateless request ("Terminating session: None") at INFO.
        logging.getLogger("mcp").setLevel(logging.WARNING)
        async with self.manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # a WebSocket handshake: refused (403) before it is accepted
            await send({"type": "websocket.close", "code": 1008, "reason": ""})
            return
        method = cast("HTTPScope", scope)["method"]
        if method != "POST":
            # Stateless: no session to end (DELETE) and nothing to push on a standalone
            # stream (GET), which would only hold a connection open. The spec's answer is 405.
            message = f"{method} is not allowed on {PATH}; MCP messages are POSTed"
            await _answer(send, 405, "NOT_FOUND", message, [(b"allow", b"POST")])
            return
        authorization = next(
            (value.decode("latin-1") for name, value in scope["headers"] if name == b"authorization"), None
        )
        try:
            principal = self.services.accounts.identify(authorization)
        except (UnauthorizedError, SubscriptionRequiredError) as exc:
            challenge = [(b"www-authenticate", b"Bearer")] if isinstance(exc, UnauthorizedError) else []
            await _answer(send, exc.status, exc.code, exc.message, challenge)
            return
        scope.setdefault("state", {})[PRINCIPAL] = principal
        received = await _read_body(receive)
        body = b"".join(cast("bytes", message.get("body", b"")) for message in received)
        if len(body) <= MAX_BODY_BYTES:  # a longer one is the SDK's to refuse (413)
            problem = _json_rpc_problem(body)
            if problem is not None:
                await _json_rpc_error(send, *problem)
                return

        async def replay() -> ReceiveMessage:
            return received.pop(0) if received else await receive()

        await self.manager.handle_request(scope, replay, send)  # type: ignore[arg-type]


async def _read_body(receive: Receive) -> list[ReceiveMessage]:
    """The request's body messages, up to just past MAX_BODY_BYTES."""
    received: list[ReceiveMessage] = []
    size = 0
    while size <= MAX_BODY_BYTES:
        message = await receive()
        received.append(message)
        size += len(cast("bytes", message.get("body", b"")))
        if message["type"] != "http.request" or not message.get("more_body", False):
            break
    return received


def _json_rpc_problem(body: bytes) -> tuple[int, str] | None:
    """The JSON-RPC error (code, message) for a body that is not one JSON-RPC message."""
    try:
        jsonrpc_message_adapter.validate_json(body, by_name=False)
    except ValidationError as exc:
        if any(error["type"] == "json_invalid" for error in exc.errors()):
            return PARSE_ERROR, "Parse error: the body is not valid JSON"
        return INVALID_REQUEST, (
            'Invalid Request: send one JSON-RPC 2.0 message, an object with "jsonrpc": "2.0", '
            'a string "method", an "id" (a string or number) for a request and "params" as an object'
        )
    return None


async def _json_rpc_error(send: Send, code: int, message: str) -> None:
    body = msgspec.json.encode(_JsonRpcErrorReply(_JsonRpcError(code, message)))
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 400, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _answer(send: Send, status: int, code: ErrorCode, message: str, headers: list[tuple[bytes, bytes]]) -> None:
    """An HTTP error in the API's envelope, before the SDK sees the request."""
    body = envelope_bytes(code, message)
    start = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers]
    await send({"type": "http.response.start", "status": status, "headers": start})
    await send({"type": "http.response.body", "body": body, "more_body": False})
