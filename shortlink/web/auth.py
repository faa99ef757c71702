"""Authentication, the Pro gate and the rate limit for every /api/v1 route, written once."""

from __future__ import annotations

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.handlers import BaseRouteHandler
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from shortlink.accounts import Principal, authenticate, require_subscription
from shortlink.errors import RateLimitedError
from shortlink.ratelimit import Decision
from shortlink.services import Services

PRINCIPAL = "principal"
RATE_LIMIT = "rate_limit"


async def api_guard(connection: ASGIConnection, _: BaseRouteHandler) -> None:
    """401 for a missing/bad/revoked key, 429 over the key's rate, 403 without Pro.

    The key is looked up in the database on every request, so a key revoked or a
    subscription changed from the CLI takes effect on the very next request.
    """
    services: Services = connection.app.state.services
    principal = await services.db.run(authenticate, connection.headers.get("authorization"))
    decision = services.api_limiter.take(principal.key_id)
    connection.scope["state"][RATE_LIMIT] = decision
    if not decision.allowed:
        raise RateLimitedError(
            f"Rate limit of {decision.limit} requests per minute exceeded; retry in {decision.retry_after} s",
            retry_after=decision.retry_after,
        )
    require_subscription(principal)
    connection.scope["state"][PRINCIPAL] = principal


def provide_principal(request: Request) -> Principal:
    return request.scope["state"][PRINCIPAL]


def rate_limit_headers(decision: Decision) -> list[tuple[bytes, bytes]]:
    return [
        (b"x-ratelimit-limit", str(decision.limit).encode()),
        (b"x-ratelimit-remaining", str(decision.remaining).encode()),
        (b"x-ratelimit-reset", str(decision.reset_seconds).encode()),
    ]


def rate_limit_headers_middleware(app: ASGIApp) -> ASGIApp:
    """Adds X-RateLimit-* to every API response of an identified key, errors included."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                decision = scope.get("state", {}).get(RATE_LIMIT)
                if decision is not None:
                    message["headers"] = [*message.get("headers", []), *rate_limit_headers(decision)]
            await send(message)

        await app(scope, receive, send_with_headers)

    return middleware
