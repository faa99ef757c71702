"""A visit of `/l/<code>`: resolve → decide → respond → track, for GET, HEAD and POST.

- resolve: the link from the in-memory cache, or on a miss from one indexed read shared
  by every miss of the same turn of the event loop (`visits.loader`: on the loop's own
  read connection, no thread hop, never behind a click batch); a custom domain shows
  only its own account's links.
- decide: closed (paused, expired), password, bot, and the visitor's class.
- respond: `visits.respond` builds the redirect or page as plain data.
- track: the click goes to the in-memory recorder queue; the writer stores it later.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from urllib.parse import parse_qsl

from shortlink.app.hosts import Hosts
from shortlink.applinks import deferred
from shortlink.applinks.visit import own_app_reply
from shortlink.client_address import Network, address_of
from shortlink.links.rules import verify_password
from shortlink.ratelimit import Limiter
from shortlink.storage import Database
from shortlink.visits import passwords, respond
from shortlink.visits.cache import LinkCache, OwnApp, VisitTarget
from shortlink.visits.classify import Visitor, classify
from shortlink.visits.click import Click
from shortlink.visits.loader import LinkLoader
from shortlink.visits.recorder import ClickRecorder
from shortlink.visits.utm import forward_utm


class VisitRequest:
    """What the visitor path reads of a request; the transport fills it in one pass."""

    __slots__ = (
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
        self.referrer = self.cookie = self.country = ""
        self.forwarded_for: str | None = None


class RememberCookie:
    """The cookie a correct password sets: scoped to the link's path."""

    __slots__ = ("name", "path", "value")

    def __init__(self, name: str, path: str, value: str):
        self.name, self.path, self.value = name, path, value

    max_age = passwords.REMEMBER_SECONDS


def _cookie(cookie_header: str, name: str) -> str | None:
    for part in cookie_header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


class Visits:
    def __init__(
        self,
        db: Database,
        hosts: Hosts,
        cache: LinkCache,
        recorder: ClickRecorder,
        password_limiter: Limiter,
        trusted_proxies: Sequence[Network],
        cookie_secret: Callable[[], bytes],
    ):
        self.hosts, self.cache, self.recorder = hosts, cache, recorder
        self.loader = LinkLoader(db, cache)
        self.password_limiter, self.trusted_proxies = password_limiter, trusted_proxies
        self._cookie_secret = cookie_secret
        # What the visitor path decided for a human visit of a link into an app (wiring sets it).
        self.count_app_outcome: Callable[[int, str], None] = lambda _link_id, _outcome: None

    # resolve

    async def resolve(self, code: str, host: str) -> VisitTarget | None:
        target = self.cache.get(code)
        if target is ...:  # not cached: the only database read of the visitor path
            target = await self.loader.load(code)
        if target is not None and not self.hosts.serves(target.account_id, host):
            return None  # a custom domain shows only its own account's links
        return target

    async def _open(self, code: str, request: VisitRequest) -> respond.Reply | tuple[VisitTarget, Visitor]:
        """The reply for an unknown or closed link, else the link and who visits it."""
        target = await self.resolve(code, request.host)
        if target is None:
            return respond.not_found()
        closed = respond.unavailable(target, time.time())
        if closed is not None:
            return closed
        return target, classify(request.user_agent, request.ch_platform, request.ch_mobile)

    # GET and HEAD

    async def visit(self, code: str, request: VisitRequest, *, head: bool = False) -> respond.Reply:
        """HEAD is answered like GET and never counted. A cached link costs no database
        work and never yields to the event loop; an uncached one waits for the end of
        this turn of the loop, when it is read with the turn's other misses."""
        opened = await self._open(code, request)
        if isinstance(opened, respond.Reply):
            return opened
        target, visitor = opened
        if target.password_hash is not None and (visitor.is_bot or not self._remembered(target, code, request)):
            return respond.password_form(target)  # bots never get past it
        reply = self._destination(target, code, visitor, request, head=head)
        if not head:
            self.track(target, request, visitor)
        return reply

    # POST: the password form

    async def unlock(
        self, code: str, request: VisitRequest, read_password: Callable[[], Awaitable[str]]
    ) -> tuple[respond.Reply, RememberCookie | None]:
        opened = await self._open(code, request)
        if isinstance(opened, respond.Reply):
            return opened, None
        target, visitor = opened
        cookie = None
        if target.password_hash is not None:
            if visitor.is_bot:
                # Bots never get past the form. Their posts are not checked at all, so
                # they spend no attempt of the visitor's bucket and no scrypt time.
                return respond.password_form(target), None
            attempt = await self.password_limiter.take(passwords.attempt_key(self.address(request)[0], target.link_id))
            if not attempt.allowed:
                return respond.too_many_attempts(attempt.retry_after), None
            password = await read_password()
            if not password or not await asyncio.to_thread(verify_password, password, target.password_hash):
                return respond.password_form(target, "That password is not right. Please try again."), None
            secret = self._cookie_secret()
            value = passwords.make_cookie_value(secret, target.public_id, target.password_hash)
            cookie = RememberCookie(passwords.cookie_name(code), f"/l/{code}", value)
        # 303: the browser follows a form POST with a GET to the destination.
        reply = self._destination(target, code, visitor, request, redirect_status=303)
        self.track(target, request, visitor)
        return reply, cookie

    # decide and respond

    def _remembered(self, target: VisitTarget, code: str, request: VisitRequest) -> bool:
        assert target.password_hash is not None
        value = _cookie(request.cookie, passwords.cookie_name(code))
        return passwords.cookie_is_valid(self._cookie_secret(), target.public_id, target.password_hash, value)

    def _destination(
        self,
        target: VisitTarget,
        code: str,
        visitor: Visitor,
        request: VisitRequest,
        redirect_status: int = 302,
        head: bool = False,
    ) -> respond.Reply:
        if target.app is not None:  # a link into the account's own app (issue 39)
            own = self._own_app(target, target.app, visitor, request, redirect_status, head)
            if own is not None:
                return own
        return respond.destination(
            target, visitor, request.query, lambda: self.short_url(request.host, code, request.query), redirect_status
        )

    def _own_app(
        self,
        target: VisitTarget,
        app: OwnApp,
        visitor: Visitor,
        request: VisitRequest,
        redirect_status: int,
        head: bool,
    ) -> respond.Reply | None:
        decided = own_app_reply(
            app,
            visitor,
            forward_utm(target.original_url, request.query),
            target.title,
            self.hosts.base_for_visitor(request.host),
            lambda: deferred.issue(self._cookie_secret(), target.public_id, time.time()),
            redirect_status,
        )
        if decided is None:
            return None
        if not head and not visitor.is_bot:
            self.count_app_outcome(target.link_id, decided[1])
        return decided[0]

    def short_url(self, host: str, code: str, query: str) -> str:
        base = self.hosts.base_for_visitor(host)
        return f"{base}/l/{code}?{query}" if query else f"{base}/l/{code}"

    def address(self, request: VisitRequest) -> tuple[str, bool]:
        """(client IP, whether the direct peer is a trusted proxy)."""
        return address_of(request.peer, request.forwarded_for, self.trusted_proxies)

    # track

    def track(self, target: VisitTarget, request: VisitRequest, visitor: Visitor) -> None:
        ip, via_trusted_proxy = self.address(request)
        campaign = ""
        if "utm_source=" in request.query:
            # The last value, as utm forwarding keeps the last of repeated parameters.
            sources = [value for key, value in parse_qsl(request.query) if key == "utm_source"]
            campaign = sources[-1][:200] if sources else ""
        self.recorder.record(
            Click(
                target.link_id,
                target.account_id,
                int(time.time() * 1000),
                request.user_agent,
                request.referrer,
                campaign,
                ip,
                request.country if via_trusted_proxy else "",
                visitor.is_bot,
            )
        )
