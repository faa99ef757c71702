"""The Litestar application: the API under /api/v1, MCP at /mcp, the visitor routes, the dashboard,
bio pages, the public shortening page, /healthz."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from litestar import Litestar, Router, asgi
from litestar.datastructures import ResponseHeader, State
from litestar.di import Provide
from litestar.handlers import ASGIRouteHandler
from litestar.types import Receive, Scope, Send

from shortlink.config import Config
from shortlink.dashboard import dashboard_handlers, template_config
from shortlink.http.bounds import MAX_BODY_BYTES, check_json_body, request_bounds_middleware
from shortlink.http.envelope import NOSNIFF
from shortlink.mcp import PATH as MCP_PATH
from shortlink.mcp.on_demand import McpOnDemand
from shortlink.web.accesslog import access_log_middleware
from shortlink.web.account import AccountController
from shortlink.web.analytics import AnalyticsController
from shortlink.web.applinks import ASSOCIATION_HANDLERS, AppController, LinkAppController
from shortlink.web.auth import api_guard, provide_principal, rate_limit_headers_middleware
from shortlink.web.bio import bio_handlers
from shortlink.web.domains import DomainController, tls_allowed
from shortlink.web.errors import handle_exception
from shortlink.web.exports import ExportController
from shortlink.web.health import healthz
from shortlink.web.link_rules import RulesController
from shortlink.web.links import LinkController
from shortlink.web.openapi import ClosedStructSchemaPlugin, openapi_config
from shortlink.web.public import shorten
from shortlink.web.qr import QrController
from shortlink.web.tags import TagController
from shortlink.web.visitor import visitor_handlers
from shortlink.web.webhooks import WebhookController
from shortlink.wiring import Services

API_CONTROLLERS = [
    AccountController,
    LinkController,
    QrController,
    AnalyticsController,
    TagController,
    AppController,
    LinkAppController,
    RulesController,
    WebhookController,
    ExportController,
    DomainController,
]


class Bound:
    """What a built app serves with: its Services, its MCP endpoint, and the two settings the
    visitor route reads on every request. Handlers reach them through this one object, so an
    app is built once and can be bound to new parts (`bind`): the test suite binds each test's
    fresh database to an app it already built, instead of building an app per test."""

    __slots__ = ("country_header", "https", "mcp", "services", "trusted_proxies")

    def __init__(self, config: Config):
        self.set(config)

    def set(self, config: Config) -> None:
        self.services = Services(config)
        self.mcp = McpOnDemand(self.services)
        self.country_header = config.network.country_header.lower().encode() or b"\x00"
        self.https = config.short_host.startswith("https://")
        self.trusted_proxies = config.trusted_networks

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Litestar) -> AsyncIterator[None]:
        async with self.services.lifespan(app), self.mcp.lifespan(app):
            yield


def bind(app: Litestar, config: Config) -> Services:
    """Give `app` new Services for `config`, between two runs of its lifespan (never during one)."""
    bound: Bound = app.state.bound
    bound.set(config)
    app.state.services = bound.services
    return bound.services


def mcp_route(bound: Bound) -> ASGIRouteHandler:
    @asgi(MCP_PATH, copy_scope=False)
    async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
        await bound.mcp(scope, receive, send)

    return mcp_endpoint


def create_app(config: Config) -> Litestar:
    bound = Bound(config)
    api = Router(
        path="/api/v1",
        route_handlers=API_CONTROLLERS,
        guards=[api_guard],
        before_request=check_json_body,
        middleware=[rate_limit_headers_middleware],
        dependencies={
            "principal": Provide(provide_principal, sync_to_thread=False),
        },
        security=[{"bearerAuth": []}],
    )
    return Litestar(
        route_handlers=[
            api,
            healthz,
            tls_allowed,
            mcp_route(bound),
            *dashboard_handlers(),
            *visitor_handlers(bound),
            *bio_handlers(bound),
            shorten,
            *ASSOCIATION_HANDLERS,
        ],
        # Litestar resolves a handler's dependencies level by level, and the values of one level
        # together in an anyio task group. For two plain values that group costs three trips
        # around the event loop: under full redirect load, most of an API request's latency
        # (bench.contention). So `principal` and `session` take `services`, one level below it.
        dependencies={"services": Provide(lambda: bound.services, sync_to_thread=False)},
        state=State({"bound": bound, "services": bound.services}),
        lifespan=[bound.lifespan],
        middleware=[access_log_middleware, request_bounds_middleware],
        exception_handlers={Exception: handle_exception},
        request_max_body_size=MAX_BODY_BYTES,
        # Every handler's response (the visitor route sends its own, HTML with its type).
        response_headers=[ResponseHeader(name=name, value=value) for name, value in NOSNIFF.items()],
        template_config=template_config(),
        openapi_config=openapi_config("/api/v1/schema"),
        plugins=[ClosedStructSchemaPlugin()],
        debug=False,
    )
