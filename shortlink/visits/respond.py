"""What a visitor of a short URL gets, decided without HTTP: status, headers, body.

The web route feeds in the request's facts and sends the Reply back as it is,
so every response kind can be tested as a plain function call.
"""
from __future__ import annotations

from urllib.parse import parse_qsl

import msgspec

from shortlink.visits import pages
from shortlink.visits.appurls import ESCAPE_MARKER, plan_visit
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


def unavailable(target: VisitTarget, now: float) -> Reply | None:
    """The page for a paused or expired link; None when it may be visited."""
    if not target.is_active:
        return page(404, pages.paused_page())
    if target.expires_at is not None and now >= target.expires_at:
        return page(410, pages.expired_page())
    return None


def was_escaped(query_string: str) -> bool:
    """Did the visitor come back through our own "Open in browser" link?"""
    return ESCAPE_MARKER + "=" in query_string and any(
        key == ESCAPE_MARKER for key, _ in parse_qsl(query_string))


def destination(target: VisitTarget, visitor: Visitor, query_string: str, short_url: str,
                redirect_status: int = 302) -> Reply:
    """The redirect or interstitial that takes the visitor to the link's destination."""
    web_url = forward_utm(target.original_url, query_string)
    ios_url = forward_utm(target.ios_url, query_string) if target.ios_url else None
    android_url = forward_utm(target.android_url, query_string) if target.android_url else None
    plan = plan_visit(visitor, target.platform, web_url, ios_url, android_url, short_url,
                      escaped=was_escaped(query_string))
    if plan.action == "redirect":
        return Reply(redirect_status, {"Location": plan.location, **REDIRECT_HEADERS})
    if plan.action == "ios":
        return page(200, pages.ios_page(plan, target.title))
    return page(200, pages.in_app_page(plan, target.title))
