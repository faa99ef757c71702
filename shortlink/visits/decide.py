"""Where a visitor of `/l/<code>` goes: the "decide" step of a click, top to bottom.

A click is four steps (application.visits `Visits.visit`): resolve (the link cache) → decide
(this module) → respond (`visits.respond` turns the Decision into a redirect or a page) → track
(the click recorder). `decide` is a plain function of the link, the request and the time: it
reads no database and sends nothing. What it may need of the running service (the visitor's
country, this request's short URL, a deferred-link token) it asks `Lookups` for, and only
when a step needs it, so a plain redirect asks for none.

The one fact it cannot read is the cap on human clicks (link rules): a count shared between
processes (Redis when they share one), taken when the click is. A Decision to go through a
capped link says so (`cap`), and the caller turns it into `capped(link)` when the cap is
reached. Matching the rules before taking the cap changes nothing: the match is pure.
"""

from __future__ import annotations

from typing import Protocol
from urllib.parse import parse_qsl

import msgspec

from shortlink.link_rules.matcher import Facts
from shortlink.link_rules.split import bucket
from shortlink.visits import password_entry
from shortlink.visits.appurls import (
    ESCAPE_MARKER,
    Plan,
    android_intent,
    app_store_url,
    plan_visit,
    play_store_url,
    web_uri,
)
from shortlink.visits.cache import OwnApp, VisitTarget
from shortlink.visits.classify import Visitor, classify
from shortlink.visits.utm import forward_utm

# How a visit of a link into the account's own app was answered, for the app's analytics.
APP, STORE, WEB = "app", "store", "web"


class VisitRequest:
    """What a visit reads of its request; the transport fills it in one pass."""

    __slots__ = (
        "accept_language",
        "ch_mobile",
        "ch_platform",
        "cookie",
        "country",
        "forwarded_for",
        "host",
        "peer",
        "query",
        "referrer",
        "user_agent",
    )

    def __init__(self, peer: str, query: str) -> None:
        self.peer, self.query = peer, query
        self.host = self.user_agent = self.ch_platform = self.ch_mobile = ""
        self.referrer = self.cookie = self.country = self.accept_language = ""
        self.forwarded_for: str | None = None


class Lookups(Protocol):
    """What decide asks of the running service, each only when a step needs it."""

    def not_found_url(self, request: VisitRequest) -> str | None: ...  # a custom domain's page for unknown codes

    def short_url(self, request: VisitRequest, link: VisitTarget) -> str: ...  # in-app browsers' way out

    def base(self, request: VisitRequest) -> str: ...  # this request's scheme://host, for an own app

    def country_of(self, request: VisitRequest) -> str: ...  # a rule's country; "" when unknown

    def visitor_key(self, request: VisitRequest) -> str: ...  # address and agent, for a split

    def deferred_token(self, link: VisitTarget) -> str: ...  # carries the link into its own app


class OwnAppPage(msgspec.Struct, frozen=True):
    """The page of a link into the account's own app: "Open in app" where the app may be
    opened from here, "Get the app" (the store), and on iOS the code to carry into it."""

    name: str | None
    open_url: str | None
    store_url: str | None
    code: str | None


class Decision(msgspec.Struct, frozen=True, gc=False):
    # notFound | paused | expired | notYet | capped: the link leads nowhere now;
    # password: its form; go: on to the destination, by `plan`.
    outcome: str
    link: VisitTarget | None = None
    visitor: Visitor | None = None
    fallback: str | None = None  # where to redirect instead of the page: link rules' fallback, a domain's page
    plan: Plan | None = None  # go: the redirect, or the page (ios, store, in_app, own_app)
    web_url: str = ""  # go: the destination's website, utm_* forwarded
    title: str | None = None  # go: the destination's title, named on its page
    own_app: OwnAppPage | None = None
    app_outcome: str | None = None  # APP, STORE or WEB for a visit into an own app
    rule: int = -1  # the link rule that chose the destination, its split variant; -1: none
    variant: int = -1
    cap: bool = False  # go, through a link whose cap on human clicks must still allow it


def decide(
    link: VisitTarget | None,
    request: VisitRequest,
    now_s: float,
    lookups: Lookups,
    *,
    signing_key: bytes,
    split_key: bytes = b"",
    unlocked: bool = False,
    own_apps: bool = True,
) -> Decision:
    """Where this visit goes. `signing_key` checks a remembered link password; `split_key`:
    today's key when the link's rules hold a split; `unlocked`: the visitor has just typed the
    link's password; `own_apps=False`: the rules tester, which shows where the link's rules
    send a visitor and not the app's page."""
    if link is None:  # unknown here; a custom domain may send its unknown codes to a page of its own
        return Decision("notFound", fallback=lookups.not_found_url(request))

    # 1. Closed: paused, expired, or before the start time of its rules.
    rules = link.rules
    if not link.is_active:
        return _closed(link, "paused")
    if link.expires_at is not None and now_s >= link.expires_at:
        return _closed(link, "expired")
    if rules is not None and rules.starts_at is not None and now_s < rules.starts_at:
        return _closed(link, "notYet")

    # 2. Who visits: person or bot, phone or desktop, which in-app browser.
    visitor = classify(request.user_agent, request.ch_platform, request.ch_mobile)

    # 3. Password: bots never get past the form; a person once it was typed right (a cookie).
    if link.password_hash is not None and (visitor.is_bot or not (unlocked or _remembered(link, request, signing_key))):
        return Decision("password", link, visitor)

    # 4. Link rules: the first rule the visit meets (its split's variant), else the link's own
    #    destination. Facts are computed as a condition first asks for them.
    destination, rule, variant = link, -1, -1
    if rules is not None and rules.rules:
        facts = Facts(
            visitor,
            request.user_agent,
            query=request.query,
            referrer=request.referrer,
            accept_language=request.accept_language,
            country_of=lambda: lookups.country_of(request),
            now_s=now_s,
        )
        match = rules.match(facts, lambda index: bucket(split_key, lookups.visitor_key(request), link.link_pk, index))
        if match is not None:
            destination, rule, variant = match.target, match.rule, match.variant
    capped = rules is not None and rules.max_clicks is not None
    web_url = forward_utm(destination.original_url, request.query)

    # 5. A link into the account's own app, on a phone whose OS the app has a part for.
    if destination.app is not None and own_apps:
        own = _own_app(destination, destination.app, visitor, web_url, request, lookups)
        if own is not None:
            plan, page, outcome = own
            return Decision(
                "go", link, visitor, plan=plan, web_url=plan.location, title=destination.title, own_app=page,
                app_outcome=outcome, rule=rule, variant=variant, cap=capped,
            )  # fmt: skip

    # 6. The platform: the big apps' URLs on phones, the in-app browsers' way out, else the website.
    ios_url = forward_utm(destination.ios_url, request.query) if destination.ios_url else None
    android_url = forward_utm(destination.android_url, request.query) if destination.android_url else None
    in_app = visitor.in_app is not None
    plan = plan_visit(
        visitor,
        destination.platform,
        web_url,
        ios_url,
        android_url,
        lookups.short_url(request, link) if in_app else "",
        escaped=in_app and was_escaped(request.query),
    )
    return Decision(
        "go", link, visitor, plan=plan, web_url=web_url, title=destination.title, rule=rule, variant=variant, cap=capped
    )


def capped(link: VisitTarget) -> Decision:
    """A link whose cap on human clicks is reached: its page, or its rules' fallback."""
    return Decision("capped", link, fallback=link.rules.fallback_url if link.rules is not None else None)


def _closed(link: VisitTarget, state: str) -> Decision:
    # The fallback is where the owner sends visitors the link no longer takes anywhere.
    return Decision(state, link, fallback=link.rules.fallback_url if link.rules is not None else None)


def _remembered(link: VisitTarget, request: VisitRequest, signing_key: bytes) -> bool:
    assert link.password_hash is not None
    value = _cookie(request.cookie, password_entry.cookie_name(link.code))
    return password_entry.cookie_is_valid(signing_key, link.public_id, link.password_hash, value)


def _cookie(cookie_header: str, name: str) -> str | None:
    for part in cookie_header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


_MARKER_PARAMETER = ESCAPE_MARKER + "="


def was_escaped(query: str) -> bool:
    """Did the visitor come back through our own "Open in browser" link?"""
    return _MARKER_PARAMETER in query and any(key == ESCAPE_MARKER for key, _ in parse_qsl(query))


def _own_app(
    link: VisitTarget, app: OwnApp, visitor: Visitor, web_url: str, request: VisitRequest, lookups: Lookups
) -> tuple[Plan, OwnAppPage | None, str] | None:
    """As for the big apps (visits.appurls): bots and desktops go to the website. On Android
    the app is opened with an intent whose fallback is the Play Store page, carrying the
    deferred-link token in its install referrer; Chrome takes the intent as a redirect, other
    browsers and in-app browsers get the app's page. On iOS a visitor only reaches us when the
    OS did not open the app from the universal link (not installed, or an in-app browser, which
    never opens universal links): the page with "Get the app" and the code to carry into the
    app. None when the app has no part for this phone's OS: the link is then as any other."""
    web_url = web_uri(web_url)
    if visitor.is_bot or visitor.kind not in ("ios", "android"):
        return Plan("redirect", web_url), None, WEB
    if visitor.kind == "android":
        if app.package is None:
            return None
        store = play_store_url(app.package, lookups.deferred_token(link))
        intent = android_intent(lookups.base(request) + app.deep_path, app.package, store)
        if visitor.in_app is None and visitor.browser == "chrome":
            # Chrome opens the app, or follows the fallback to the store when it is missing.
            return Plan("redirect", intent), None, APP
        return Plan("own_app", web_url), OwnAppPage(app.name, intent, store, None), APP
    if app.app_store_id is None:
        return None
    code = lookups.deferred_token(link)
    return Plan("own_app", web_url), OwnAppPage(app.name, None, app_store_url(app.app_store_id), code), STORE
