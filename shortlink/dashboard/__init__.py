"""The dashboard: server-rendered pages on the service's own host, over the application layer.

Controllers per resource (`links`, `keys`, `account`, `analytics`, `bio`, `signin`); every
signed-in route inherits `session.SignedInController` (the guard that loads the
session's account); `session.check_csrf` runs before every handler; templates and
static files live in this package.
"""

from __future__ import annotations

from litestar import Response, Router
from litestar.static_files import create_static_files_router

from shortlink.dashboard.account import AccountPage
from shortlink.dashboard.analytics import AnalyticsPages
from shortlink.dashboard.apps import AppPages
from shortlink.dashboard.bio import BioPages
from shortlink.dashboard.guard import check_csrf
from shortlink.dashboard.keys import KeyPages
from shortlink.dashboard.links import LinkPages
from shortlink.dashboard.moving import MovingPages
from shortlink.dashboard.render import EXCEPTION_HANDLERS, HERE, STATIC_PATH, template_config
from shortlink.dashboard.signin import SignInController, home
from shortlink.dashboard.targeting import RulePages
from shortlink.dashboard.webhooks import WebhookPages
from shortlink.web.errors import NOSNIFF

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
            MovingPages,
        ],
        before_request=check_csrf,
        exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
        include_in_schema=False,
    )
    static = create_static_files_router(
        path=STATIC_PATH, directories=[HERE / "static"], include_in_schema=False, after_request=_nosniff
    )
    return [pages, static]


async def _nosniff(response: Response) -> Response:
    # The static router's file responses do not get the app's response_headers: a browser
    # must still never read a style sheet or script as another type.
    response.headers.update(NOSNIFF)
    return response
