"""GET/HEAD /l/<code> and POST /l/<code> (the password form): the hot path.

Kept lean on purpose: no dependency injection, one pass over the raw headers,
the link from the in-memory cache, the visitor class from a cached classifier,
and the click handed to the in-memory recorder queue.
"""

from __future__ import annotations

import asyncio
import time
from urllib.parse import parse_qsl

from litestar import Request, post, route
from litestar.datastructures import Cookie
from litestar.enums import HttpMethod
from litestar.params import FromPath
from litestar.types import HTTPResponseBodyEvent, HTTPResponseStartEvent, Receive, Scope, Send

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

    __slots__ = ("ch_mobile", "ch_platform", "cookie", "country", "forwarded_for", "host", "referrer", "user_agent")

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


class Answer:
    """A visitor response, sent as its two ASGI messages.

    Lighter than Litestar's responses, and exact where they are not: a redirect has no
    body and so no Content-Type, and HEAD gets the status and headers GET would get
    (Content-Length included) without the body."""

    __slots__ = ("_body", "_start")

    def __init__(self, reply: respond.Reply, cookies: list[Cookie] | None = None, head: bool = False):
        body = reply.body.encode()
        headers = [(name.lower().encode(), value.encode("latin-1")) for name, value in reply.headers.items()]
        if body:
            headers.append((b"content-type", b"text/html; charset=utf-8"))
        headers.append((b"content-length", str(len(body)).encode()))
        if cookies:
            headers += [cookie.to_encoded_header() for cookie in cookies]
        self._start: HTTPResponseStartEvent = {
            "type": "http.response.start",
            "status": reply.status,
            "headers": headers,
        }
        self._body: HTTPResponseBodyEvent = {
            "type": "http.response.body",
            "body": b"" if head else body,
            "more_body": False,
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(self._start)
        await send(self._body)


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

    def record(target: VisitTarget, facts: Facts, query: str, address: tuple[str, bool], is_bot: bool) -> None:
        ip, via_trusted_proxy = address
        campaign = ""
        if "utm_source=" in query:
            # The last value, as utm forwarding keeps the last of repeated parameters.
            sources = [v for k, v in parse_qsl(query) if k == "utm_source"]
            campaign = sources[-1][:200] if sources else ""
        services.recorder.record(
            Click(
                target.link_id,
                target.account_id,
                int(time.time() * 1000),
                facts.user_agent,
                facts.referrer,
                campaign,
                ip,
                facts.country if via_trusted_proxy else "",
                is_bot,
            )
        )

    @route("/l/{code:str}", http_method=[HttpMethod.GET, HttpMethod.HEAD], include_in_schema=False)
    async def visit(request: Request, code: FromPath[str]) -> Answer:
        scope = request.scope
        head = scope["method"] == "HEAD"  # answered like GET, without a body, never counted
        facts = Facts(scope, country_header)
        target = await find(code, facts.host)
        if target is None:
            return Answer(respond.not_found(), head=head)
        closed = respond.unavailable(target, time.time())
        if closed is not None:
            return Answer(closed, head=head)
        visitor = classify(facts.user_agent, facts.ch_platform, facts.ch_mobile)
        if target.password_hash is not None and (
            visitor.is_bot
            or not passwords.cookie_is_valid(
                services.cookie_secret,
                target.public_id,
                target.password_hash,
                _cookie(facts.cookie, passwords.cookie_name(code)),
            )
        ):
            return Answer(respond.password_form(), head=head)  # bots never get past it
        query = scope["query_string"].decode("latin-1")
        reply = respond.destination(target, visitor, query, lambda: short_url(facts.host, code, query))
        if not head:
            record(target, facts, query, services.visitor_address(scope, facts.forwarded_for), visitor.is_bot)
        return Answer(reply, head=head)

    @post("/l/{code:str}", include_in_schema=False, status_code=200)
    async def unlock(request: Request, code: FromPath[str]) -> Answer:
        scope = request.scope
        facts = Facts(scope, country_header)
        target = await find(code, facts.host)
        if target is None:
            return Answer(respond.not_found())
        closed = respond.unavailable(target, time.time())
        if closed is not None:
            return Answer(closed)
        query = scope["query_string"].decode("latin-1")
        visitor = classify(facts.user_agent, facts.ch_platform, facts.ch_mobile)
        address = services.visitor_address(scope, facts.forwarded_for)
        cookies = None
        if target.password_hash is not None:
            if visitor.is_bot:
                # Bots never get past the form. Their posts are not checked at all, so
                # they spend no attempt of the visitor's bucket and no scrypt time.
                return Answer(respond.password_form())
            attempt = services.password_limiter.take(passwords.attempt_key(address[0], target.link_id))
            if not attempt.allowed:
                return Answer(
                    respond.page(
                        429,
                        respond.pages.too_many_attempts_page(attempt.retry_after),
                        **{"Retry-After": str(attempt.retry_after)},
                    )
                )
            body = await request.body()
            form = dict(parse_qsl(body[:MAX_FORM_BYTES].decode("utf-8", "replace")))
            password = form.get("password", "")
            if not password or not await asyncio.to_thread(verify_password, password, target.password_hash):
                return Answer(respond.password_form("That password is not right. Please try again."))
            cookies = [
                Cookie(
                    key=passwords.cookie_name(code),
                    path=f"/l/{code}",
                    httponly=True,
                    secure=https,
                    samesite="lax",
                    max_age=passwords.REMEMBER_SECONDS,
                    value=passwords.make_cookie_value(services.cookie_secret, target.public_id, target.password_hash),
                )
            ]
        # 303: the browser follows a form POST with a GET to the destination.
        reply = respond.destination(
            target, visitor, query, lambda: short_url(facts.host, code, query), redirect_status=303
        )
        record(target, facts, query, address, visitor.is_bot)
        return Answer(reply, cookies)

    return [visit, unlock]
