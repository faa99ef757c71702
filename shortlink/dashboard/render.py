"""Rendering dashboard pages: the Jinja environment (autoescaped), the navigation, the
security headers of every page, and the error pages."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from litestar import Request, Response
from litestar.exceptions import HTTPException, NotFoundException
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.response import Redirect, Template
from litestar.template.config import TemplateConfig

from shortlink.dashboard import charts
from shortlink.dashboard.guard import CSRF_FIELD, CrossSiteRequest, SignInRequired, WrongScheme, load_session
from shortlink.errors import NotFoundError, ShortlinkError, UnavailableError
from shortlink.links.platforms import PLATFORM_NAMES, Platform
from shortlink.pages.csp import policy
from shortlink.times import from_iso

log = logging.getLogger("shortlink")


def platform_name(platform: Platform | str | None) -> str:
    """A platform (or its value) as people read it; "Unknown" for none or a value this
    service does not know."""
    try:
        return PLATFORM_NAMES[Platform(platform)] if platform is not None else "Unknown"
    except ValueError:
        return "Unknown"


HERE = Path(__file__).parent
STATIC_PATH = "/static/dashboard"

# Scripts and styles only from our own files (no 'unsafe-inline'); images from here and
# the QR previews; forms post only here; no framing.
CONTENT_SECURITY_POLICY = policy(style="'self'", script="'self'", img="'self'", connect="'self'", form_action="'self'")
PAGE_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "Cache-Control": "no-store",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}


class NavItem:
    __slots__ = ("href", "label")

    def __init__(self, label: str, href: str):
        self.label, self.href = label, href


# The signed-in navigation, in order. Another section appends its NavItem here.
NAV: list[NavItem] = [
    NavItem("Links", "/links"),
    NavItem("Bio page", "/bio"),
    NavItem("Analytics", "/analytics"),
    NavItem("API keys", "/keys"),
    NavItem("Account", "/account"),
    NavItem("Domains", "/domains"),
    NavItem("Apps", "/apps"),
    NavItem("Webhooks", "/webhooks"),
    NavItem("Import", "/import"),
]


def when(text: str | None) -> str:
    """An ISO timestamp as people read it: '2026-11-24 13:05 UTC'."""
    if not text:
        return "never"
    return from_iso(text).strftime("%Y-%m-%d %H:%M UTC")


def is_past(text: str | None) -> bool:
    return bool(text) and from_iso(text) <= datetime.now(UTC)  # type: ignore[arg-type]


def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = when
    env.filters["number"] = charts.count_text
    env.filters["platform_name"] = platform_name
    env.tests["past"] = is_past
    env.globals.update(
        nav=NAV,
        static=STATIC_PATH,
        csrf_field=CSRF_FIELD,
        time_series=charts.time_series,
        breakdown=charts.breakdown,
    )
    return env


def template_config() -> TemplateConfig:
    return TemplateConfig(instance=JinjaTemplateEngine.from_environment(environment()))


def page(request: Request, name: str, status_code: int = 200, cookies: list | None = None, **context: Any) -> Template:
    """A page, with the session (if any) and its CSRF token in the context."""
    session = load_session(request)
    context.setdefault("csrf", session.csrf if session is not None else "")
    return Template(
        template_name=name,
        context={"session": session, "path": request.scope["path"], **context},
        status_code=status_code,
        headers=PAGE_HEADERS,
        cookies=cookies or [],
    )


def see_other(path: str, cookies: list | None = None) -> Redirect:
    """After a form POST: the browser GETs the next page (and a reload posts nothing)."""
    return Redirect(path, status_code=303, cookies=cookies or [], headers={"Cache-Control": "no-store"})


def _error_page(request: Request, status: int, title: str, message: str) -> Response:
    return page(request, "error.html", status_code=status, title=title, message=message)


def handle_sign_in_required(request: Request, _: Exception) -> Response:
    return see_other("/login")


def handle_cross_site(request: Request, exc: Exception) -> Response:
    if isinstance(exc, WrongScheme):
        return _error_page(
            request,
            403,
            "Open the dashboard at its own address",
            f"This dashboard is served at {exc.address}; open it there and sign in again.",
        )
    return _error_page(
        request,
        403,
        "This form has expired",
        "The form was sent from another site, or its page is too old. Go back, reload the page and try again.",
    )


def handle_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, NotFoundError | NotFoundException):
        return _error_page(request, 404, "Not found", "There is nothing here, or it belongs to another account.")
    if isinstance(exc, ShortlinkError) and exc.status < 500:
        return _error_page(request, exc.status, "That did not work", exc.message)
    if isinstance(exc, UnavailableError):  # Redis, which holds the limits, does not answer
        response = _error_page(request, exc.status, "Try again shortly", exc.message)
        response.headers = {**response.headers, **exc.headers}
        return response
    if isinstance(exc, HTTPException) and 400 <= exc.status_code < 500:
        return _error_page(request, exc.status_code, "That did not work", exc.detail or "Invalid request")
    log.exception("unhandled error on %s %s", request.method, request.scope["path"])
    return _error_page(request, 500, "Something went wrong", "An unexpected error happened; it has been logged.")


EXCEPTION_HANDLERS = {
    SignInRequired: handle_sign_in_required,
    CrossSiteRequest: handle_cross_site,
    Exception: handle_error,
}
