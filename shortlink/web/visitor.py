"""GET/HEAD /l/<code> and POST /l/<code> (the password form): the hot path.

Kept lean on purpose: no dependency injection, one pass over the raw headers,
the link from the in-memory cache, the visitor class from a cached classifier,
and the click handed to the in-memory recorder queue.
"""
from __future__ import annotations

import asyncio
import time
from urllib.parse import parse_qsl

from litestar import MediaType, Request, post, route
from litestar.datastructures import Cookie
from litestar.enums import HttpMethod
from litestar.params import FromPath
from litestar.response.base import ASGIResponse

from shortlink.links.rules import verify_password
from shortlink.services import Services
from shortlink.visits import passwords, respond
from shortlink.visits.cache import VisitTarget
from shortlink.visits.classify import classify
from shortlink.visits.click import Click

MAX_FORM_BYTES = 4096
MAX_USER_AGENT = 512


class Facts:
    """The request headers the visitor path reads, picked in one pass."""
    __slots__ = ("host", "user_agent", "ch_platform", "ch_mobile", "referrer", "forwarded_for",
                 "cookie", "country")

    def __init__(self, scope, country_header: bytes):
        self.host = self.user_agent = self.ch_platform = self.ch_mobile = ""
        self.referrer = self.cookie = self.country = ""
        self.forwarded_for = None
        for name, value in scope["headers"]:
            if name == b"user-agent":
                self.user_agent = value.decode("latin-1")[:MAX_USER_AGENT]
            elif name == b"host":
                self.host = value.decode("latin-1").lower()
            elif name == b"referer":
                self.referrer = value.decode("latin-1")[:2048]
            elif name == b"sec-ch-ua-platform":
                self.ch_platform = value.decode("latin-1")
            elif name == b"sec-ch-ua-mobile":
                self.ch_mobile = value.decode("latin-1")
            elif name == b"x-forwarded-for":
                self.forwarded_for = value.decode("latin-1")
            elif name == b"cookie":
                self.cookie = value.decode("latin-1")
            elif name == country_header:
                self.country = value.decode("latin-1")[:2].upper()


def _reply(reply: respond.Reply, cookies: list[Cookie] | None = None, head: bool = False) -> ASGIResponse:
    # The low-level response: a full Response costs more than the rest of a redirect
    # together (profiled: 62 -> 46 us per redirect in-process).
    return ASGIResponse(body=reply.body.encode(), status_code=reply.status, headers=reply.headers,
                        cookies=cookies, is_head_response=head,
                        media_type=MediaType.HTML if reply.body else None)


def _cookie(cookie_header: str, name: str) -> str | None:
    for part in cookie_header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


def visitor_handlers(services: Services) -> list:
    config = services.config
    country_header = config.network.country_header.lower().encode() or b"\x00"
    https = config.short_host.startswith("https://")
    cache = services.link_cache

    async def find(code: str, host: str) -> VisitTarget | None:
        target = cache.get(code)
        if target is ...:  # not cached: the only database read of the visitor path
            target = await services.load_target(code)
        if target is not None and not services.serves_on(target, host):
            return None  # a custom domain shows only its own account's links
        return target

    def short_url(host: str, code: str, query: str) -> str:
        base = services.base_for_host(host)
        return f"{base}/l/{code}?{query}" if query else f"{base}/l/{code}"

    def record(target: VisitTarget, facts: Facts, query: str, address: tuple[str, bool],
               is_bot: bool) -> None:
        ip, via_trusted_proxy = address
        campaign = ""
        if "utm_source=" in query:
            campaign = next((v for k, v in parse_qsl(query) if k == "utm_source"), "")[:200]
        services.recorder.record(Click(
            target.link_id, target.account_id, int(time.time() * 1000), facts.user_agent,
            facts.referrer, campaign, ip, facts.country if via_trusted_proxy else "", is_bot,
        ))

    @route("/l/{code:str}", http_method=[HttpMethod.GET, HttpMethod.HEAD], include_in_schema=False)
    async def visit(request: Request, code: FromPath[str]) -> ASGIResponse:
        scope = request.scope
        head = scope["method"] == "HEAD"   # answered like GET, without a body, never counted
        facts = Facts(scope, country_header)
        target = await find(code, facts.host)
        if target is None:
            return _reply(respond.not_found(), head=head)
        closed = respond.unavailable(target, time.time())
        if closed is not None:
            return _reply(closed, head=head)
        if target.password_hash is not None and not passwords.cookie_is_valid(
                services.cookie_secret, target.public_id, target.password_hash,
                _cookie(facts.cookie, passwords.cookie_name(code))):
            return _reply(respond.page(200, respond.pages.password_page()), head=head)
        query = scope["query_string"].decode("latin-1")
        visitor = classify(facts.user_agent, facts.ch_platform, facts.ch_mobile)
        reply = respond.destination(target, visitor, query, short_url(facts.host, code, query))
        if not head:
            record(target, facts, query, services.visitor_address(scope, facts.forwarded_for),
                   visitor.is_bot)
        return _reply(reply, head=head)

    @post("/l/{code:str}", include_in_schema=False, status_code=200)
    async def unlock(request: Request, code: FromPath[str]) -> ASGIResponse:
        scope = request.scope
        facts = Facts(scope, country_header)
        target = await find(code, facts.host)
        if target is None:
            return _reply(respond.not_found())
        closed = respond.unavailable(target, time.time())
        if closed is not None:
            return _reply(closed)
        query = scope["query_string"].decode("latin-1")
        visitor = classify(facts.user_agent, facts.ch_platform, facts.ch_mobile)
        address = services.visitor_address(scope, facts.forwarded_for)
        cookies = None
        if target.password_hash is not None:
            attempt = services.password_limiter.take((address[0], target.link_id))
            if not attempt.allowed:
                return _reply(respond.page(429, respond.pages.too_many_attempts_page(attempt.retry_after),
                                           **{"Retry-After": str(attempt.retry_after)}))
            body = await request.body()
            form = dict(parse_qsl(body[:MAX_FORM_BYTES].decode("utf-8", "replace")))
            password = form.get("password", "")
            if not password or not await asyncio.to_thread(verify_password, password, target.password_hash):
                return _reply(respond.page(403, respond.pages.password_page(
                    "That password is not right. Please try again.")))
            cookies = [Cookie(
                key=passwords.cookie_name(code), path=f"/l/{code}", httponly=True, secure=https,
                samesite="lax", max_age=passwords.REMEMBER_SECONDS,
                value=passwords.make_cookie_value(services.cookie_secret, target.public_id,
                                                  target.password_hash),
            )]
        # 303: the browser follows a form POST with a GET to the destination.
        reply = respond.destination(target, visitor, query, short_url(facts.host, code, query),
                                    redirect_status=303)
        record(target, facts, query, address, visitor.is_bot)
        return _reply(reply, cookies)

    return [visit, unlock]
