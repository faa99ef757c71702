"""/mcp: the tools over Streamable HTTP, in the server process, behind the API's keys.

Every HTTP request is authenticated before the SDK sees it (401 with
`WWW-Authenticate: Bearer`, or 403 without an active subscription) and is not
charged: the per-minute budget is charged per tool call (`tools.call`).

The session manager is stateless: each request carries its own key and is served
on its own, so nothing ties a client to one process, and a revoked key fails on its
next request. Clients of the current protocol revision (per-request envelope) and of
the older initialize handshake are both served; the SDK tells them apart.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import cast

from litestar.types import HTTPScope, Receive, Scope, Send
from mcp.server import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from shortlink.accounts import Principal
from shortlink.errors import ErrorCode, SubscriptionRequiredError, UnauthorizedError
from shortlink.mcp.tools import build_server
from shortlink.services import Services
from shortlink.web.bounds import MAX_BODY_BYTES
from shortlink.web.errors import envelope_bytes

PATH = "/mcp"
PRINCIPAL = "shortlink.mcp.principal"  # the scope state key of the request's principal


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
        await self.manager.handle_request(scope, receive, send)  # type: ignore[arg-type]


async def _answer(send: Send, status: int, code: ErrorCode, message: str, headers: list[tuple[bytes, bytes]]) -> None:
    """An HTTP error in the API's envelope, before the SDK sees the request."""
    body = envelope_bytes(code, message)
    start = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers]
    await send({"type": "http.response.start", "status": status, "headers": start})
    await send({"type": "http.response.body", "body": body, "more_body": False})
