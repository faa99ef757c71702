"""The Litestar application: the API under /api/v1, MCP at /mcp, the visitor routes, the dashboard,
bio pages, the public shortening page, /healthz."""

from __future__ import annotations

from litestar import Litestar, Router
from litestar.datastructures import ResponseHeader, State
from litestar.di import Provide

from shortlink.config import Config
from shortlink.dashboard import dashboard_handlers, template_config
from shortlink.mcp.http import McpEndpoint
from shortlink.services import Services
from shortlink.web.accesslog import access_log_middleware
from shortlink.web.account import AccountController
from shortlink.web.analytics import AnalyticsController
from shortlink.web.auth import api_guard, provide_principal, rate_limit_headers_middleware
from shortlink.web.bio import bio_handlers
from shortlink.web.bounds import MAX_BODY_BYTES, check_json_body, request_bounds_middleware
from shortlink.web.errors import NOSNIFF, handle_exception
from shortlink.web.health import healthz
from shortlink.web.links import LinkController
from shortlink.web.openapi import ClosedStructSchemaPlugin, openapi_config
from shortlink.web.public import shorten
from shortlink.web.qr import QrController
from shortlink.web.tags import TagController
from shortlink.web.visitor import visitor_handlers

API_CONTROLLERS = [AccountController, LinkController, QrController, AnalyticsController, TagController]


def create_app(config: Config) -> Litestar:
    services = Services(config)
    mcp = McpEndpoint(services)
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
            mcp.route_handler(),
            *dashboard_handlers(),
            *visitor_handlers(services.visits, config.network.country_header, config.short_host.startswith("https://")),
            *bio_handlers(services.bio),
            shorten,
        ],
        # Litestar resolves a handler's dependencies level by level, and the values of one level
        # together in an anyio task group. For two plain values that group costs three trips
        # around the event loop: under full redirect load, most of an API request's latency
        # (bench.contention). So `principal` and `session` take `services`, one level below it.
        dependencies={"services": Provide(lambda: services, sync_to_thread=False)},
        state=State({"services": services}),
        lifespan=[services.lifespan, mcp.lifespan],
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
