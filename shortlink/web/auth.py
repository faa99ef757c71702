"""Authentication, the Pro gate and the rate limit for every /api/v1 route, written once."""

from __future__ import annotations

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.di import NamedDependency
from litestar.handlers import BaseRouteHandler
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from shortlink.accounts.schema import Principal
from shortlink.wiring import Services

PRINCIPAL = "principal"
RATE_LIMIT = "rate_limit"


async def api_guard(connection: ASGIConnection, _: BaseRouteHandler) -> None:
    """401 for a missing/bad/revoked key, 429 over the key's rate, 403 without Pro:
    `Accounts.admit`, the same check MCP makes per tool call."""
    services: Services = connection.app.state.services
    admission = await services.accounts.admit(connection.headers.get("authorization"))
    connection.scope["state"][RATE_LIMIT] = admission.rate
    connection.scope["state"][PRINCIPAL] = admission.principal


def provide_principal(request: Request, services: NamedDependency[Services]) -> Principal:
    """The key api_guard admitted. It takes `services` only to be resolved after it (see web.asgi)."""
    return request.scope["state"][PRINCIPAL]


def rate_limit_headers_middleware(app: ASGIApp) -> ASGIApp:
    """Adds X-RateLimit-* to every API response of an identified key, errors included."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                decision = scope.get("state", {}).get(RATE_LIMIT)
                if decision is not None:
                    extra = [(name.lower().encode(), value.encode()) for name, value in decision.headers().items()]
                    message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await app(scope, receive, send_with_headers)

    return middleware
