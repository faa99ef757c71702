"""GET and PUT /links/{id}/tags: a link's tags, an extension beside the spec's resources."""

from __future__ import annotations

from litestar import Controller, get, put
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from shortlink.accounts.schema import Principal
from shortlink.links.tags import LinkTagsResponse, SetTags
from shortlink.web.openapi import error_responses
from shortlink.wiring import Services


class TagController(Controller):
    path = "/links"
    tags = ["tags"]

    @get("/{id:str}/tags", responses=error_responses(404), summary="The link's tags (extension)")
    async def read(
        self, id: FromPath[str], principal: NamedDependency[Principal], services: NamedDependency[Services]
    ) -> LinkTagsResponse:
        return LinkTagsResponse(await services.links.tags(principal.account_id, id))

    @put(
        "/{id:str}/tags",
        responses=error_responses(404),
        summary="Replace the link's tags (extension); a tag without colour keeps the account's colour for its name",
    )
    async def replace(
        self,
        id: FromPath[str],
        data: JSONBody[SetTags],
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
    ) -> LinkTagsResponse:
        return LinkTagsResponse(await services.links.set_tags(principal.account_id, id, data))
