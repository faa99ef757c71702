"""The "respond" step of a click: a Decision (visits.decide) as status, headers and body.

The web route sends the Reply as it is, so every response kind can be tested as a plain
function call. A redirect is built here without any page; pages come from `pages.visitor`.
"""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec

from shortlink.pages import visitor as pages
from shortlink.visits.decide import Decision

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


def respond(decision: Decision, redirect_status: int = 302) -> Reply:
    """The answer to a decided visit. `redirect_status`: 303 after the password form's POST."""
    outcome = decision.outcome
    if outcome == "go":
        plan = decision.plan
        assert plan is not None
        if plan.action == "redirect":
            return Reply(redirect_status, {"Location": plan.location, **REDIRECT_HEADERS})
        if decision.own_app is not None:
            own = decision.own_app
            html = pages.own_app_page(own.name, plan.location, decision.title, own.open_url, own.store_url, own.code)
        else:
            html = _PAGES[plan.action](plan, decision.title, decision.web_url)
        return page(200, html)
    if decision.fallback is not None:
        # Link rules' fallback instead of a closed or capped page, or a custom domain's page
        # for codes it does not know: a plain redirect.
        return Reply(302, {"Location": decision.fallback, **REDIRECT_HEADERS})
    if outcome == "password":
        assert decision.link is not None
        return password_form(decision.link.original_url, decision.link.title)
    if outcome == "notFound":
        return not_found()
    if outcome == "paused":
        return page(404, pages.paused_page())
    if outcome == "expired":
        return page(410, pages.expired_page())
    if outcome == "capped":
        # As an expired link: it no longer leads anywhere.
        return page(410, pages.capped_page())
    assert outcome == "notYet" and decision.link is not None and decision.link.rules is not None
    starts_at = decision.link.rules.starts_at
    assert starts_at is not None
    # 200, since the link is there and will open.
    opens = datetime.fromtimestamp(starts_at, UTC).strftime("%Y-%m-%d at %H:%M UTC")
    return page(200, pages.not_yet_page(opens))


_PAGES = {"ios": pages.ios_page, "store": pages.store_page, "in_app": pages.in_app_page}


def page(status: int, html: str, **extra_headers: str) -> Reply:
    return Reply(status, {**pages.PAGE_HEADERS, **extra_headers}, html)


def not_found() -> Reply:
    return page(404, pages.not_found_page())


def too_many_attempts(retry_after: int) -> Reply:
    return page(429, pages.too_many_attempts_page(retry_after), **{"Retry-After": str(retry_after)})


def password_form(destination: str, title: str | None, error: str | None = None) -> Reply:
    """The password page: 200, or 403 with the error after a wrong password. It names the
    destination's host (never its path or query) so the visitor knows where the password leads."""
    return page(403 if error else 200, pages.password_page(destination, title, error))
