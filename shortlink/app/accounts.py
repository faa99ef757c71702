"""Who is calling, what they may do, and their keys: for the API, MCP and the dashboard."""

from __future__ import annotations

import msgspec

from shortlink import accounts
from shortlink.accounts import Principal
from shortlink.errors import RateLimitedError, SubscriptionRequiredError
from shortlink.ratelimit import Decision, Limiter
from shortlink.storage import Database
from shortlink.times import Timestamp


class MeUser(msgspec.Struct):
    id: str
    email: str
    name: str | None


class MeKey(msgspec.Struct):
    id: str
    prefix: str


class MeSubscription(msgspec.Struct, rename="camel"):
    is_active: bool
    current_period_end: Timestamp | None
    cancel_at_period_end: bool


class RateLimits(msgspec.Struct, rename="camel"):
    requests_per_minute: int
    remaining: int
    links_per_day: int
    links_created_today: int


class Me(msgspec.Struct, rename="camel"):
    user: MeUser
    key: MeKey
    subscription: MeSubscription
    rate_limits: RateLimits


class Admission(msgspec.Struct, frozen=True):
    """A key let in: who it acts for, and its rate-limit state for the response headers."""

    principal: Principal
    rate: Decision


class Accounts:
    def __init__(self, db: Database, api_limiter: Limiter, links_per_day: int):
        self.db, self.api_limiter, self.links_per_day = db, api_limiter, links_per_day

    async def admit(self, authorization: str | None) -> Admission:
        """Every API request and MCP tool call: 401 for a missing, bad or revoked key, 429
        over the key's per-minute budget, 403 without an active subscription.

        The key is looked up on every call (a point read, no thread hop), so a key revoked
        or a subscription changed elsewhere takes effect on the very next call. A 429 and a
        403 carry the key's X-RateLimit-* headers too.
        """
        principal = self.db.read_now(accounts.authenticate, authorization)
        decision = await self.charge(principal)
        try:
            accounts.require_subscription(principal)
        except SubscriptionRequiredError as exc:
            exc.headers.update(decision.headers())
            raise
        return Admission(principal, decision)

    def identify(self, authorization: str | None) -> Principal:
        """Who an MCP HTTP request acts for, without charging its budget (MCP charges per
        tool call, not per HTTP request): 401 for a missing, bad or revoked key, 403
        without an active subscription. Looked up on every call, as in `admit`."""
        principal = self.db.read_now(accounts.authenticate, authorization)
        accounts.require_subscription(principal)
        return principal

    async def charge(self, principal: Principal) -> Decision:
        """One request against the key's per-minute budget: an API request or an MCP tool
        call. Over the budget: RATE_LIMITED saying when to retry."""
        decision = await self.api_limiter.take(principal.key_id)
        if not decision.allowed:
            raise RateLimitedError(
                f"Rate limit of {decision.limit} requests per minute exceeded; retry in {decision.retry_after} s",
                retry_after=decision.retry_after,
                headers=decision.headers(),
            )
        return decision

    async def me(self, principal: Principal, links_created_today: int) -> Me:
        return Me(
            user=MeUser(id=principal.account_public_id, email=principal.email, name=principal.name),
            key=MeKey(id=principal.key_public_id, prefix=principal.key_prefix),
            subscription=MeSubscription(
                is_active=principal.subscription_active,
                current_period_end=principal.current_period_end,
                cancel_at_period_end=principal.cancel_at_period_end,
            ),
            rate_limits=RateLimits(
                requests_per_minute=self.api_limiter.capacity,
                remaining=await self.api_limiter.peek(principal.key_id),
                links_per_day=self.links_per_day,
                links_created_today=links_created_today,
            ),
        )
