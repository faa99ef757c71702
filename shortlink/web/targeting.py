"""GET and PUT /links/{id}/rules: a link's rules, an extension beside the spec's resources."""

from __future__ import annotations

from litestar import Controller, get, put
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from shortlink.accounts import Principal
from shortlink.targeting.schema import RulesDocument, RulesResponse
from shortlink.web.openapi import error_responses
from shortlink.wiring import Services


class RulesController(Controller):
    path = "/links"
    tags = ["link rules"]

    @get("/{id:str}/rules", responses=error_responses(404), summary="The link's rules (extension)")
    async def read(
        self, id: FromPath[str], principal: NamedDependency[Principal], services: NamedDependency[Services]
    ) -> RulesResponse:
        return RulesResponse(await services.targeting.rules(principal.account_id, id))

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
        return RulesResponse(await services.targeting.set_rules(principal.account_id, id, data))
