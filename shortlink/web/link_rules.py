"""GET and PUT /links/{id}/rules, POST /links/{id}/rules/test: a link's rules and their tester, extensions
beside the spec's resources."""

from __future__ import annotations

from litestar import Controller, get, post, put
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from shortlink.accounts.schema import Principal
from shortlink.analytics.ranges import DEFAULT_DAYS
from shortlink.link_rules.schema import (
    RuleAnalyticsResponse,
    RulesDocument,
    RulesResponse,
    SimulatedResponse,
    SimulatedVisit,
)
from shortlink.web.analytics import Days, From, To
from shortlink.web.openapi import error_responses
from shortlink.wiring import Services


class RulesController(Controller):
    path = "/links"
    tags = ["link rules"]

    @get("/{id:str}/rules", responses=error_responses(404), summary="The link's rules (extension)")
    async def read(
        self, id: FromPath[str], principal: NamedDependency[Principal], services: NamedDependency[Services]
    ) -> RulesResponse:
        return RulesResponse(await services.link_rules.rules(principal.account_id, id))

    @put(
        "/{id:str}/rules",
        responses=error_responses(404),
        summary="Replace the link's rules, start time, click cap and fallback (extension); docs/link-rules.md",
    )
    async def replace(
        self,
        id: FromPath[str],
        data: JSONBody[RulesDocument],
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
    ) -> RulesResponse:
        return RulesResponse(await services.link_rules.set_rules(principal.account_id, id, data))

    @post(
        "/{id:str}/rules/test",
        status_code=200,
        responses=error_responses(404),
        summary="What a simulated visitor would get of the link (extension); records no click",
    )
    async def test(
        self,
        id: FromPath[str],
        data: JSONBody[SimulatedVisit],
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
    ) -> SimulatedResponse:
        return SimulatedResponse(await services.link_rules.test(principal.account_id, id, data))

    @get(
        "/{id:str}/rules/analytics",
        responses=error_responses(404),
        summary="Human clicks and unique visitors per rule and variant per day (extension)",
    )
    async def analytics(
        self,
        id: FromPath[str],
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
        days: Days = str(DEFAULT_DAYS),
        start: From = None,
        end: To = None,
    ) -> RuleAnalyticsResponse:
        return RuleAnalyticsResponse(await services.link_rules.analytics(principal.account_id, id, days, start, end))
