"""A visit of `/l/<code>`: resolve → decide → respond → track, for GET, HEAD and POST.

- resolve: the link from the in-memory cache, or on a miss from one indexed read shared
  by every miss of the same turn of the event loop (`visits.loader`: on the loop's own
  read connection, no thread hop, never behind a click batch); a custom domain shows
  only its own account's links.
- decide: closed (paused, expired), password, bot, and the visitor's class.
- route (a link with rules only; docs/link-rules.md): the cap on human clicks, then the first
  rule that holds, compiled in the cache entry (`link_rules.matcher`); a link without rules skips it.
- respond: `visits.respond` builds the redirect or page as plain data.
- track: the click goes to the in-memory recorder queue; the writer stores it later.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from urllib.parse import parse_qsl

from shortlink.application.hosts import Hosts
from shortlink.application.link_rules import ClickCaps
from shortlink.applinks import deferred
from shortlink.applinks.visit import own_app_reply
from shortlink.client_address import Network, address_of
from shortlink.link_rules.matcher import Facts
from shortlink.link_rules.schema import SimulatedResult, SimulatedVisit
from shortlink.link_rules.split import DayKeys, bucket
from shortlink.links.passwords import verify_password
from shortlink.ratelimit import Limiter
from shortlink.storage import Database
from shortlink.storage.labels import UNKNOWN_COUNTRY
from shortlink.visits import enrich, password_entry, respond
from shortlink.visits.cache import LinkCache, OwnApp, VisitTarget
from shortlink.visits.classify import Visitor, classify
from shortlink.visits.click import Click
from shortlink.visits.countries import CountryTable
from shortlink.visits.loader import LinkLoader
from shortlink.visits.recorder import ClickRecorder
from shortlink.visits.utm import forward_utm


class VisitRequest:
    """What the visitor path reads of a request; the transport fills it in one pass."""

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


class RememberCookie:
    """The cookie a correct password sets: scoped to the link's path."""

    __slots__ = ("name", "path", "value")

    def __init__(self, name: str, path: str, value: str):
        self.name, self.path, self.value = name, path, value

    max_age = password_entry.REMEMBER_SECONDS


def _result(rule: int | None, variant: int | None, reply: respond.Reply, page: str) -> SimulatedResult:
    location = reply.headers.get("Location")
    return SimulatedResult(
        rule=rule, variant=variant, status=reply.status, location=location, page=None if location else page
    )


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
        *,
        caps: ClickCaps | None = None,
        split_keys: DayKeys | None = None,
        countries: CountryTable | None = None,
    ):
        """`caps`, `split_keys`, `countries`: what link rules use (application.link_rules, link_rules.split,
        the [geoip] table), shared between processes when Redis is."""
        self.hosts, self.cache, self.recorder = hosts, cache, recorder
        self.loader = LinkLoader(db, cache, hosts.is_ours)
        self.caps = caps or ClickCaps()
        self.split_keys = split_keys or DayKeys()
        self.countries = countries or recorder.countries
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
            elsewhere = self.hosts.not_found_redirect(request.host)  # a custom domain's choice
            return respond.not_found() if elsewhere is None else respond.fallback(elsewhere)
        closed = respond.closed_state(target, time.time())
        if closed is not None:
            return respond.closed_page(target, closed)
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
        if target.rules is None:
            reply = self._destination(target, code, visitor, request, head=head)
            if not head:
                self.track(target, request, visitor)
            return reply
        return await self._routed(target, code, visitor, request, head=head)

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
            attempt = await self.password_limiter.take(
                password_entry.attempt_key(self.address(request)[0], target.link_id)
            )
            if not attempt.allowed:
                return respond.too_many_attempts(attempt.retry_after), None
            password = await read_password()
            if not password or not await asyncio.to_thread(verify_password, password, target.password_hash):
                return respond.password_form(target, "That password is not right. Please try again."), None
            secret = self._cookie_secret()
            value = password_entry.make_cookie_value(secret, target.public_id, target.password_hash)
            cookie = RememberCookie(password_entry.cookie_name(code), f"/l/{code}", value)
        # 303: the browser follows a form POST with a GET to the destination.
        if target.rules is not None:
            return await self._routed(target, code, visitor, request, head=False, redirect_status=303), cookie
        reply = self._destination(target, code, visitor, request, redirect_status=303)
        self.track(target, request, visitor)
        return reply, cookie

    # link rules

    async def _routed(
        self,
        target: VisitTarget,
        code: str,
        visitor: Visitor,
        request: VisitRequest,
        *,
        head: bool,
        redirect_status: int = 302,
    ) -> respond.Reply:
        """A visit of a link with rules: the cap on human clicks, then the first rule that
        holds; the click keeps which rule and variant sent it."""
        routed = await self.route(target, visitor, request, time.time(), count=not head)
        if isinstance(routed, respond.Reply):
            return routed
        destination, rule, variant = routed
        reply = self._destination(destination, code, visitor, request, redirect_status, head)
        if not head:
            self.track(target, request, visitor, rule, variant)
        return reply

    async def route(
        self,
        target: VisitTarget,
        visitor: Visitor,
        request: VisitRequest,
        now: float,
        *,
        count: bool,
        country: str | None = None,
    ) -> respond.Reply | tuple[VisitTarget, int, int]:
        """Where a link's rules send this visit: the capped page (or the fallback), or the
        target and the (rule, variant) that chose it, (-1, -1) for the link's own destination.
        With `count`, a human visit uses up a click of the cap. `country`: the tester's
        simulated country instead of the request's."""
        rules = target.rules
        assert rules is not None
        if rules.max_clicks is not None and not await self.caps.take(
            target.link_id, rules.stored_clicks, rules.max_clicks, count and not visitor.is_bot
        ):
            return respond.capped() if rules.fallback_url is None else respond.fallback(rules.fallback_url)
        if not rules.rules:
            return target, -1, -1
        facts = Facts(
            visitor,
            request.user_agent,
            query=request.query,
            referrer=request.referrer,
            accept_language=request.accept_language,
            country_of=(lambda: country) if country is not None else (lambda: self.country_of(request)),
            now=now,
        )
        key = b""
        if rules.has_split:
            key = self.split_keys.current(now) or await self.split_keys.fetch(now)
        # The visitor key (address and agent) only when a split asks for it.
        match = rules.match(
            facts, lambda rule: bucket(key, f"{self.address(request)[0]}\n{request.user_agent}", target.link_id, rule)
        )
        if match is None:
            return target, -1, -1
        return match.target, match.rule, match.variant

    async def simulate(self, target: VisitTarget, visit: SimulatedVisit, now: float) -> SimulatedResult:
        """What this simulated visitor would get of the link (the tester): no click is recorded
        and no click of the cap is used up."""
        request = VisitRequest("", visit.query)
        request.user_agent, request.accept_language, request.referrer = (
            visit.user_agent,
            visit.accept_language,
            visit.referrer,
        )
        closed = respond.closed_state(target, now)
        if closed is not None:
            return _result(None, None, respond.closed_page(target, closed), closed)
        visitor = classify(visit.user_agent)
        if target.password_hash is not None:
            return _result(None, None, respond.password_form(target), "password")
        destination, rule, variant = target, -1, -1
        if target.rules is not None:
            routed = await self.route(target, visitor, request, now, count=False, country=visit.country or "")
            if isinstance(routed, respond.Reply):
                return _result(None, None, routed, "capped")
            destination, rule, variant = routed
        _, plan = respond.plan_for(
            destination, visitor, visit.query, lambda: self.short_url("", target.code, visit.query)
        )
        return SimulatedResult(
            rule=None if rule < 0 else rule,
            variant=None if variant < 0 else variant,
            status=302 if plan.action == "redirect" else 200,
            location=plan.location,
            page=None if plan.action == "redirect" else plan.action,
            app_url=plan.app_url,
        )

    def country_of(self, request: VisitRequest) -> str:
        """The visitor's country for a rule: the trusted proxy's header, else the [geoip] table;
        "" when unknown."""
        ip, via_trusted_proxy = self.address(request)
        code = enrich.country_of(ip, request.country if via_trusted_proxy else "", self.countries)
        return "" if code == UNKNOWN_COUNTRY else code

    # decide and respond

    def _remembered(self, target: VisitTarget, code: str, request: VisitRequest) -> bool:
        assert target.password_hash is not None
        value = _cookie(request.cookie, password_entry.cookie_name(code))
        return password_entry.cookie_is_valid(self._cookie_secret(), target.public_id, target.password_hash, value)

    def _destination(
        self,
        target: VisitTarget,
        code: str,
        visitor: Visitor,
        request: VisitRequest,
        redirect_status: int = 302,
        head: bool = False,
    ) -> respond.Reply:
        if target.app is not None:  # a link into the account's own app
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

    def track(
        self, target: VisitTarget, request: VisitRequest, visitor: Visitor, rule: int = -1, variant: int = -1
    ) -> None:
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
                rule,
                variant,
            )
        )
