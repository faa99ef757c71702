"""GET and PUT /links/{id}/rules, POST /links/{id}/rules/test: a link's rules and their tester; GET, PUT and
DELETE /links/{id}/destination: where everyone goes, a rule for everyone. Extensions beside the spec's
resources."""

from __future__ import annotations

from litestar import Controller, delete, get, post, put
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from shortlink.accounts.schema import Principal
from shortlink.analytics.ranges import DEFAULT_DAYS
from shortlink.link_rules.schema import (
    DestinationInput,
    DestinationResponse,
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
        return RulesResponse(await services.link_rules.set_rules(principal.account_id, id, data, door="api"))

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

    @get(
        "/{id:str}/destination",
        responses=error_responses(404),
        summary="Where the link's visitors go now, since when, and every change (extension)",
    )
    async def destination(
        self, id: FromPath[str], principal: NamedDependency[Principal], services: NamedDependency[Services]
    ) -> DestinationResponse:
        return DestinationResponse(await services.link_rules.destination(principal.account_id, id))

    @put(
        "/{id:str}/destination",
        responses=error_responses(404),
        summary="Send everyone to another address (extension); originalUrl is unchanged. docs/link-rules.md",
    )
    async def send_everyone(
        self,
        id: FromPath[str],
        data: JSONBody[DestinationInput],
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
    ) -> DestinationResponse:
        found = await services.link_rules.send_everyone_to(principal.account_id, id, data.url, door="api")
        return DestinationResponse(found)

    @delete(
        "/{id:str}/destination",
        status_code=200,
        responses=error_responses(404),
        summary="Send everyone to the link's originalUrl again (extension)",
    )
    async def send_back(
        self, id: FromPath[str], principal: NamedDependency[Principal], services: NamedDependency[Services]
    ) -> DestinationResponse:
        return DestinationResponse(await services.link_rules.send_everyone_back(principal.account_id, id, door="api"))
