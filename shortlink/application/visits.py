"""A click on `/l/<code>` in four steps: resolve → decide → respond → track (GET, HEAD, POST).

- resolve: the link from the in-memory cache, or on a miss from one indexed read shared
  by every miss of the same turn of the event loop (`visits.loader`: on the loop's own
  read connection, no thread hop, never behind a click batch); a custom domain shows
  only its own account's links.
- decide: `visits.decide`, one plain function: closed, who visits, password, link rules,
  the account's own app, the platform. Then the cap on human clicks, the one shared count.
- respond: `visits.respond` turns the Decision into the redirect or page, as plain data.
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
from shortlink.client_address import Network, address_of
from shortlink.link_rules.schema import SimulatedResult, SimulatedVisit
from shortlink.link_rules.split import DayKeys
from shortlink.links.passwords import verify_password
from shortlink.ratelimit import Limiter
from shortlink.storage import Database
from shortlink.storage.labels import UNKNOWN_COUNTRY
from shortlink.visits import enrich, password_entry
from shortlink.visits.cache import LinkCache, VisitTarget
from shortlink.visits.click import Click
from shortlink.visits.countries import CountryTable
from shortlink.visits.decide import Decision, VisitRequest, capped, decide
from shortlink.visits.loader import LinkLoader
from shortlink.visits.recorder import ClickRecorder
from shortlink.visits.respond import Reply, not_found, password_form, respond, too_many_attempts

__all__ = ["RememberCookie", "VisitRequest", "Visits"]


class RememberCookie:
    """The cookie a correct password sets: scoped to the link's path."""

    __slots__ = ("name", "path", "value")

    def __init__(self, name: str, path: str, value: str):
        self.name, self.path, self.value = name, path, value

    max_age = password_entry.REMEMBER_SECONDS


class Visits:
    def __init__(
        self,
        *,
        db: Database,
        hosts: Hosts,
        cache: LinkCache,
        recorder: ClickRecorder,
        password_limiter: Limiter,
        trusted_proxies: Sequence[Network],
        signing_key: bytes,
        count_app_outcome: Callable[[int, str], None],
        caps: ClickCaps | None = None,
        split_keys: DayKeys | None = None,
        countries: CountryTable | None = None,
    ):
        """`signing_key`: signs remembered link passwords and deferred-link tokens (keyfile);
        `count_app_outcome(link_pk, outcome)`: what the visitor path decided for a human visit of
        a link into an app (application.applinks); `caps`, `split_keys`, `countries`: what link
        rules use (application.link_rules, link_rules.split, the [geoip] table), shared between
        processes when Redis is."""
        self.hosts, self.cache, self.recorder = hosts, cache, recorder
        self.loader = LinkLoader(db, cache, hosts.is_ours)
        self.caps = caps or ClickCaps()
        self.split_keys = split_keys or DayKeys()
        self.countries = countries or recorder.countries
        self.password_limiter, self.trusted_proxies = password_limiter, trusted_proxies
        self.signing_key = signing_key
        self.count_app_outcome = count_app_outcome

    # the four steps

    async def visit(self, code: str, request: VisitRequest, *, head: bool = False) -> Reply:
        """HEAD is answered like GET and never counted. A cached link costs no database
        work and never yields to the event loop; an uncached one waits for the end of
        this turn of the loop, when it is read with the turn's other misses."""
        link = await self.resolve(code, request.host)
        decision = await self.decide(link, request, time.time(), count=not head)
        reply = respond(decision)
        if not head:
            self.track(decision, request)
        return reply

    async def resolve(self, code: str, host: str) -> VisitTarget | None:
        target = self.cache.get(code)
        if target is ...:  # not cached: the only database read of the visitor path
            target = await self.loader.load(code)
        if target is not None and not self.hosts.serves(target.account_id, host):
            return None  # a custom domain shows only its own account's links
        return target

    async def decide(
        self, link: VisitTarget | None, request: VisitRequest, now_s: float, *, count: bool, unlocked: bool = False
    ) -> Decision:
        """`visits.decide`, with today's split key when the link's rules split, then the cap on
        human clicks: with `count`, a person's visit uses up one of its clicks."""
        if link is None:
            elsewhere = self.hosts.not_found_redirect(request.host)  # a custom domain's choice
            if elsewhere is not None:
                return Decision("notFound", fallback=elsewhere)
        rules = link.rules if link is not None else None
        split_key = b""
        if rules is not None and rules.has_split:
            split_key = self.split_keys.current(now_s) or await self.split_keys.fetch(now_s)
        decision = decide(
            link, request, now_s, self, signing_key=self.signing_key, split_key=split_key, unlocked=unlocked
        )
        if decision.cap:
            assert link is not None and rules is not None and rules.max_clicks is not None and decision.visitor
            if not await self.caps.take(
                link.link_pk, rules.stored_clicks, rules.max_clicks, count and not decision.visitor.is_bot
            ):
                return capped(link)
        return decision

    def track(self, decision: Decision, request: VisitRequest) -> None:
        """A visit that went somewhere becomes a click (bots too, marked as such); a person's
        visit of a link into an app also counts what the app's page offered."""
        if decision.outcome != "go":
            return
        link, visitor = decision.link, decision.visitor
        assert link is not None and visitor is not None
        if decision.app_outcome is not None and not visitor.is_bot:
            self.count_app_outcome(link.link_pk, decision.app_outcome)
        ip, via_trusted_proxy = self.address(request)
        campaign = ""
        if "utm_source=" in request.query:
            # The last value, as utm forwarding keeps the last of repeated parameters.
            sources = [value for key, value in parse_qsl(request.query) if key == "utm_source"]
            campaign = sources[-1][:200] if sources else ""
        self.recorder.record(
            Click(
                link.link_pk,
                link.account_id,
                int(time.time() * 1000),
                request.user_agent,
                request.referrer,
                campaign,
                ip,
                request.country if via_trusted_proxy else "",
                visitor.is_bot,
                decision.rule,
                decision.variant,
            )
        )

    # POST: the password form

    async def unlock(
        self, code: str, request: VisitRequest, read_password: Callable[[], Awaitable[str]]
    ) -> tuple[Reply, RememberCookie | None]:
        """The password form's POST: a right password sets the cookie that remembers it and
        goes on as a visit, with 303 (the browser follows a form POST with a GET)."""
        link = await self.resolve(code, request.host)
        decision = await self.decide(link, request, time.time(), count=True)
        cookie = None
        if decision.outcome == "password" and decision.visitor is not None and not decision.visitor.is_bot:
            # Bots never get past the form. Their posts are not checked at all, so they spend
            # no attempt of the visitor's bucket and no scrypt time.
            assert link is not None and link.password_hash is not None
            attempt = await self.password_limiter.take(
                password_entry.attempt_key(self.address(request)[0], link.link_pk)
            )
            if not attempt.allowed:
                return too_many_attempts(attempt.retry_after), None
            password = await read_password()
            if not password or not await asyncio.to_thread(verify_password, password, link.password_hash):
                error = "That password is not right. Please try again."
                return password_form(link.original_url, link.title, error), None
            value = password_entry.make_cookie_value(self.signing_key, link.public_id, link.password_hash)
            cookie = RememberCookie(password_entry.cookie_name(code), f"/l/{code}", value)
            decision = await self.decide(link, request, time.time(), count=True, unlocked=True)
        reply = respond(decision, redirect_status=303)
        self.track(decision, request)
        return reply, cookie

    # the rules tester

    async def simulate(self, target: VisitTarget, visit: SimulatedVisit, now_s: float) -> SimulatedResult:
        """What this simulated visitor would get of the link (the tester): no click is recorded,
        no click of the cap is used up, and the link's rules are shown rather than its app's page."""
        request = VisitRequest("", visit.query)
        request.user_agent, request.accept_language, request.referrer = (
            visit.user_agent,
            visit.accept_language,
            visit.referrer,
        )
        request.country = visit.country or ""
        rules = target.rules
        split_key = b""
        if rules is not None and rules.has_split:
            split_key = self.split_keys.current(now_s) or await self.split_keys.fetch(now_s)
        decision = decide(
            target, request, now_s, _Simulated(self), signing_key=self.signing_key, split_key=split_key, own_apps=False
        )
        if decision.cap:
            assert rules is not None and rules.max_clicks is not None
            if not await self.caps.take(target.link_pk, rules.stored_clicks, rules.max_clicks, False):
                decision = capped(target)
        if decision.outcome != "go":
            location = decision.fallback
            return SimulatedResult(
                rule=None, variant=None, status=respond(decision).status, location=location,
                page=None if location else decision.outcome,
            )  # fmt: skip
        plan = decision.plan
        assert plan is not None
        return SimulatedResult(
            rule=None if decision.rule < 0 else decision.rule,
            variant=None if decision.variant < 0 else decision.variant,
            status=302 if plan.action == "redirect" else 200,
            location=plan.location,
            page=None if plan.action == "redirect" else plan.action,
            app_url=plan.app_url,
        )

    def not_found(self) -> Reply:
        """The visitor's 404 page, for a visitor path that is no short code or bio page."""
        return not_found()

    # what decide asks (visits.decide.Lookups)

    def not_found_url(self, request: VisitRequest) -> str | None:
        return self.hosts.not_found_redirect(request.host)

    def short_url(self, request: VisitRequest, link: VisitTarget) -> str:
        base = self.hosts.base_for_visitor(request.host)
        return f"{base}/l/{link.code}?{request.query}" if request.query else f"{base}/l/{link.code}"

    def base(self, request: VisitRequest) -> str:
        return self.hosts.base_for_visitor(request.host)

    def country_of(self, request: VisitRequest) -> str:
        """The visitor's country for a rule: the trusted proxy's header, else the [geoip] table;
        "" when unknown."""
        ip, via_trusted_proxy = self.address(request)
        code = enrich.country_of(ip, request.country if via_trusted_proxy else "", self.countries)
        return "" if code == UNKNOWN_COUNTRY else code

    def visitor_key(self, request: VisitRequest) -> str:
        return f"{self.address(request)[0]}\n{request.user_agent}"

    def deferred_token(self, link: VisitTarget) -> str:
        return deferred.issue(self.signing_key, link.public_id, time.time())

    def address(self, request: VisitRequest) -> tuple[str, bool]:
        """(client IP, whether the direct peer is a trusted proxy)."""
        return address_of(request.peer, request.forwarded_for, self.trusted_proxies)


class _Simulated:
    """What the rules tester's decide asks: the service's answers, but the simulated country."""

    def __init__(self, visits: Visits) -> None:
        self.visits = visits

    def not_found_url(self, request: VisitRequest) -> str | None:
        return self.visits.not_found_url(request)

    def short_url(self, request: VisitRequest, link: VisitTarget) -> str:
        return self.visits.short_url(request, link)

    def base(self, request: VisitRequest) -> str:
        return self.visits.base(request)

    def country_of(self, request: VisitRequest) -> str:
        return request.country

    def visitor_key(self, request: VisitRequest) -> str:
        return self.visits.visitor_key(request)

    def deferred_token(self, link: VisitTarget) -> str:
        return self.visits.deferred_token(link)
