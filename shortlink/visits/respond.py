"""What a visitor of a short URL gets, decided without HTTP: status, headers, body.

The web route feeds in the request's facts and sends the Reply back as it is,
so every response kind can be tested as a plain function call.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from urllib.parse import parse_qsl

import msgspec

from shortlink.pages import visitor as pages
from shortlink.visits.appurls import ESCAPE_MARKER, Plan, plan_visit
from shortlink.visits.cache import VisitTarget
from shortlink.visits.classify import Visitor
from shortlink.visits.utm import forward_utm

# Visitor responses depend on the user agent and must never be cached.
REDIRECT_HEADERS = {
    "Cache-Control": "no-store",
    "Vary": "User-Agent, Sec-CH-UA-Platform, Sec-CH-UA-Mobile",
    "X-Robots-Tag": "noindex",
    "Referrer-Policy": "no-referrer-when-downgrade",
}


class Reply(msgspec.Struct):
    status: int
    headers: dict[str, str]
    body: str = ""


def page(status: int, html: str, **extra_headers: str) -> Reply:
    return Reply(status, {**pages.PAGE_HEADERS, **extra_headers}, html)


def not_found() -> Reply:
    return page(404, pages.not_found_page())


def closed_state(target: VisitTarget, now: float) -> str | None:
    """paused, expired, notYet (link rules' start time), or None when the link may be visited."""
    if not target.is_active:
        return "paused"
    if target.expires_at is not None and now >= target.expires_at:
        return "expired"
    rules = target.rules
    if rules is not None and rules.starts_at is not None and now < rules.starts_at:
        return "notYet"
    return None


def closed_page(target: VisitTarget, state: str) -> Reply:
    """The page of a closed link, or a redirect to link rules' fallback when it has one."""
    if target.rules is not None and target.rules.fallback_url is not None:
        return fallback(target.rules.fallback_url)
    if state == "paused":
        return page(404, pages.paused_page())
    if state == "expired":
        return page(410, pages.expired_page())
    assert target.rules is not None and target.rules.starts_at is not None
    return not_yet(target.rules.starts_at)


def not_yet(starts_at: float) -> Reply:
    """Before a link's start time (link rules): 200, since the link is there and will open."""
    opens = datetime.fromtimestamp(starts_at, UTC).strftime("%Y-%m-%d at %H:%M UTC")
    return page(200, pages.not_yet_page(opens))


def capped() -> Reply:
    """A link whose cap on human clicks is reached (link rules): 410, as an expired link."""
    return page(410, pages.capped_page())


def fallback(url: str) -> Reply:
    """Link rules' fallback, instead of the expired, paused, capped or not-yet page: a plain
    redirect (it is where the owner sends visitors the link no longer takes anywhere)."""
    return Reply(302, {"Location": url, **REDIRECT_HEADERS})


def too_many_attempts(retry_after: int) -> Reply:
    return page(429, pages.too_many_attempts_page(retry_after), **{"Retry-After": str(retry_after)})


def password_form(target: VisitTarget, error: str | None = None) -> Reply:
    """The password page: 200, or 403 with the error after a wrong password. It names the
    destination's host (never its path or query) so the visitor knows where the password leads."""
    return page(403 if error else 200, pages.password_page(target.original_url, target.title, error))


_MARKER_PARAMETER = ESCAPE_MARKER + "="
_PAGES = {"ios": pages.ios_page, "store": pages.store_page, "in_app": pages.in_app_page}


def was_escaped(query_string: str) -> bool:
    """Did the visitor come back through our own "Open in browser" link?"""
    return _MARKER_PARAMETER in query_string and any(key == ESCAPE_MARKER for key, _ in parse_qsl(query_string))


def plan_for(
    target: VisitTarget, visitor: Visitor, query_string: str, short_url: Callable[[], str]
) -> tuple[str, Plan]:
    """The destination's web URL (utm_* forwarded) and the plan that takes this visitor there."""
    web_url = forward_utm(target.original_url, query_string)
    ios_url = forward_utm(target.ios_url, query_string) if target.ios_url else None
    android_url = forward_utm(target.android_url, query_string) if target.android_url else None
    in_app = visitor.in_app is not None
    plan = plan_visit(
        visitor,
        target.platform,
        web_url,
        ios_url,
        android_url,
        short_url() if in_app else "",
        escaped=in_app and was_escaped(query_string),
    )
    return web_url, plan


def destination(
    target: VisitTarget, visitor: Visitor, query_string: str, short_url: Callable[[], str], redirect_status: int = 302
) -> Reply:
    """The redirect or interstitial that takes the visitor to the link's destination.

    `short_url` builds this request's short URL; only in-app visitors need it (for the
    "Open in browser" escape), so a redirect never pays for it."""
    web_url, plan = plan_for(target, visitor, query_string, short_url)
    if plan.action == "redirect":
        return Reply(redirect_status, {"Location": plan.location, **REDIRECT_HEADERS})
    return page(200, _PAGES[plan.action](plan, target.title, web_url))
