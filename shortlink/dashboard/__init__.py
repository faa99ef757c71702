"""The dashboard: server-rendered pages on the service's own host, over the application layer.

Controllers per resource (`links`, `keys`, `account`, `analytics`, `bio`, `signin`, `domains`…); every
signed-in route inherits `session.SignedInController` (the guard that loads the
session's account); `session.check_csrf` runs before every handler; templates and
static files live in this package.
"""

from __future__ import annotations

from litestar import Response, Router, get
from litestar.static_files import create_static_files_router

from shortlink.dashboard.account import AccountPage
from shortlink.dashboard.analytics import AnalyticsPages
from shortlink.dashboard.apps import AppPages
from shortlink.dashboard.bio import BioPages
from shortlink.dashboard.domains import DomainPages
from shortlink.dashboard.guard import check_csrf
from shortlink.dashboard.keys import KeyPages
from shortlink.dashboard.link_rules import RulePages
from shortlink.dashboard.links import LinkPages
from shortlink.dashboard.moving import MovingPages
from shortlink.dashboard.render import EXCEPTION_HANDLERS, HERE, STATIC_PATH, template_config
from shortlink.dashboard.signin import SignInController, home
from shortlink.dashboard.webhooks import WebhookPages
from shortlink.http.envelope import NOSNIFF

__all__ = ["dashboard_handlers", "template_config"]


def dashboard_handlers() -> list:
    pages = Router(
        path="/",
        route_handlers=[
            home,
            SignInController,
            LinkPages,
            KeyPages,
            AccountPage,
            AnalyticsPages,
            BioPages,
            RulePages,
            AppPages,
            WebhookPages,
            DomainPages,
            MovingPages,
        ],
        before_request=check_csrf,
        exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
        include_in_schema=False,
    )
    static = create_static_files_router(
        path=STATIC_PATH, directories=[HERE / "static"], include_in_schema=False, after_request=_nosniff
    )
    return [pages, static, favicon_svg, favicon_ico]


# The icon every page links to, and the one browsers ask for at /favicon.ico unasked. Exact
# paths, so they win over the one-segment routes (/@handle, a custom domain's /<code>); no short
# code can hold a dot. Read once; a week in caches (a new icon takes a week to show).
_ICONS = {name: (HERE / "static" / name).read_bytes() for name in ("favicon.svg", "favicon.ico")}
ICON_HEADERS = {
    "Cache-Control": "public, max-age=604800",
    # Opened on its own, the SVG is a document: it may run nothing and load nothing.
    "Content-Security-Policy": "default-src 'none'",
    **NOSNIFF,
}


@get("/favicon.svg", include_in_schema=False, sync_to_thread=False)
def favicon_svg() -> Response:
    return Response(content=_ICONS["favicon.svg"], media_type="image/svg+xml", headers=ICON_HEADERS)


@get("/favicon.ico", include_in_schema=False, sync_to_thread=False)
def favicon_ico() -> Response:
    return Response(content=_ICONS["favicon.ico"], media_type="image/x-icon", headers=ICON_HEADERS)


async def _nosniff(response: Response) -> Response:
    # The static router's file responses do not get the app's response_headers: a browser
    # must still never read a style sheet or script as another type.
    response.headers.update(NOSNIFF)
    return response
