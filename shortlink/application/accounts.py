"""Who is calling, what they may do, and their keys: for the API, MCP and the dashboard."""

from __future__ import annotations

import asyncio
import logging

import msgspec

from shortlink.accounts import service as accounts
from shortlink.accounts import validation as account_validation
from shortlink.accounts.schema import AccountOverview, CreatedKey, KeySummary, Principal
from shortlink.errors import RateLimitedError, SubscriptionRequiredError
from shortlink.ratelimit import Decision, Limiter
from shortlink.storage import Database
from shortlink.storage import accounts as account_store
from shortlink.times import Timestamp, to_iso, utcnow

log = logging.getLogger("shortlink")


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
    def __init__(self, *, db: Database, api_limiter: Limiter, links_per_day: int):
        self.db, self.api_limiter, self.links_per_day = db, api_limiter, links_per_day
        self._touching: set[asyncio.Task] = set()

    async def admit(self, authorization: str | None) -> Admission:
        """Every API request and MCP tool call: 401 for a missing, bad or revoked key, 429
        over the key's per-minute budget, 403 without an active subscription.

        The key is looked up on every call (a point read, no thread hop), so a key revoked
        or a subscription changed elsewhere takes effect on the very next call. A 429 and a
        403 carry the key's X-RateLimit-* headers too.
        """
        principal = self.db.read_now(accounts.authenticate, authorization)
        self._note_use(principal)
        decision = await self.charge(principal)
        try:
            account_validation.require_subscription(principal)
        except SubscriptionRequiredError as exc:
            exc.headers.update(decision.headers())
            raise
        return Admission(principal, decision)

    def identify(self, authorization: str | None) -> Principal:
        """Who an MCP HTTP request acts for, without charging its budget (MCP charges per
        tool call, not per HTTP request): 401 for a missing, bad or revoked key, 403
        without an active subscription. Looked up on every call, as in `admit`."""
        principal = self.db.read_now(accounts.authenticate, authorization)
        self._note_use(principal)
        account_validation.require_subscription(principal)
        return principal

    def _note_use(self, principal: Principal) -> None:
        """The key's "last used", written in the background at most once a minute: the
        request never waits for it."""
        now = utcnow()
        if account_validation.key_use_is_stale(principal, now) and len(self._touching) < 1000:
            task = asyncio.create_task(self.db.write(account_store.touch_api_key, principal.key_id, to_iso(now)))
            self._touching.add(task)
            task.add_done_callback(self._touched)

    def _touched(self, task: asyncio.Task) -> None:
        self._touching.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("could not record a key's last use: %s", task.exception())

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

    # The dashboard's API section and account page: always one account's own keys.

    async def keys(self, account_id: int) -> list[KeySummary]:
        """The account's keys, never the keys themselves."""
        return await self.db.read(accounts.keys_of, account_id)

    async def create_key(self, account_id: int, name: str | None) -> CreatedKey:
        return await self.db.write(accounts.issue_key_for, account_id, name)

    async def revoke_key(self, account_id: int, key_id: str) -> None:
        """Revoked on the writer: the key's very next request reads the revocation."""
        await self.db.write(accounts.revoke_key, key_id, account_id)

    async def overview(self, account_id: int) -> AccountOverview:
        return await self.db.read(accounts.overview, account_id)
