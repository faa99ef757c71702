"""GET /me: the account, key, subscription and rate limits of the calling key."""

from __future__ import annotations

import msgspec
from litestar import Controller, get
from litestar.datastructures import CacheControlHeader
from litestar.di import NamedDependency

from shortlink.accounts.schema import Principal
from shortlink.application.accounts import Me
from shortlink.web.openapi import error_responses
from shortlink.wiring import Services


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
        created_today = services.links.created_today(principal.account_id)
        return MeResponse(await services.accounts.me(principal, created_today))
