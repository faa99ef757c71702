"""GET /me: the account, key, subscription and rate limits of the calling key."""

from __future__ import annotations

import msgspec
from litestar import Controller, get
from litestar.datastructures import CacheControlHeader
from litestar.di import NamedDependency

from shortlink.accounts import Principal
from shortlink.links import service as links
from shortlink.services import Services
from shortlink.times import Timestamp, utcnow
from shortlink.web.openapi import error_responses


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


class MeResponse(msgspec.Struct):
    data: Me


class AccountController(Controller):
    path = "/me"
    tags = ["account"]

    # The account's email and key: never kept by a browser or an intermediary.
    @get(
        "/",
        responses=error_responses(),
        summary="The account of the API key",
        cache_control=CacheControlHeader(no_store=True),
    )
    async def me(self, principal: NamedDependency[Principal], services: NamedDependency[Services]) -> MeResponse:
        created_today = await services.db.run(links.created_today, principal.account_id, utcnow())
        return MeResponse(
            Me(
                user=MeUser(id=principal.account_public_id, email=principal.email, name=principal.name),
                key=MeKey(id=principal.key_public_id, prefix=principal.key_prefix),
                subscription=MeSubscription(
                    is_active=principal.subscription_active,
                    current_period_end=principal.current_period_end,
                    cancel_at_period_end=principal.cancel_at_period_end,
                ),
                rate_limits=RateLimits(
                    requests_per_minute=services.api_limiter.capacity,
                    remaining=services.api_limiter.peek(principal.key_id),
                    links_per_day=services.config.limits.links_per_day,
                    links_created_today=created_today,
                ),
            )
        )
