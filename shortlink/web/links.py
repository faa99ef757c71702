"""The /links resource: thin handlers over `application.links.Links`."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, delete, get, patch, post
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery, JSONBody, QueryParameter

from shortlink.accounts.schema import Principal
from shortlink.links.bulk import BulkActionResponse, BulkCreateLinks, BulkCreateResponse, BulkLinkAction
from shortlink.links.platforms import Platform
from shortlink.links.schema import (
    CreateLink,
    DeletedLink,
    DeletedLinkResponse,
    LinkFilter,
    LinkListResponse,
    LinkResponse,
    UpdateLink,
)
from shortlink.web.openapi import error_responses
from shortlink.wiring import Services


class LinkController(Controller):
    path = "/links"
    tags = ["links"]

    @post("/", status_code=201, responses=error_responses(409), summary="Create a link")
    async def create(
        self, data: JSONBody[CreateLink], principal: NamedDependency[Principal], services: NamedDependency[Services]
    ) -> LinkResponse:
        return LinkResponse(await services.links.create(principal.account_id, data, source="API"))

    @post(
        "/bulk",
        status_code=200,
        responses=error_responses(),
        summary="Create up to 100 links in one request, with a result per item (extension)",
        description=(
            "Each item of `links` is the body of POST /links, checked on its own: the result at its `index` has the"
            " status that request would have answered, with the link (`data`) or the spec's error (`error`)."
            " The request counts once against the per-minute limit; every created link counts against the daily one."
        ),
    )
    async def create_many(
        self,
        data: JSONBody[BulkCreateLinks],
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
    ) -> BulkCreateResponse:
        return BulkCreateResponse(await services.links.create_many(principal.account_id, data.links, source="API"))

    @post(
        "/bulk/actions",
        status_code=200,
        responses=error_responses(),
        summary="Pause, resume, delete, tag or untag up to 1000 links in one request (extension)",
        description=(
            "Each id gets a result at its `index`: status 200, or the status and the spec's error its single request"
            " would have given (404 for a link not in this account). A deleted link goes with its clicks and"
            " rollups and stops redirecting at once, as with DELETE /links/{id}."
        ),
    )
    async def act_on_many(
        self,
        data: JSONBody[BulkLinkAction],
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
    ) -> BulkActionResponse:
        return BulkActionResponse(await services.links.act_on_many(principal.account_id, data))

    @get("/", responses=error_responses(), summary="List the account's links, newest first")
    async def list(
        self,
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
        # Any page: one past the end is empty (the query string is bounded by http.bounds).
        page: Annotated[int, QueryParameter(ge=1)] = 1,
        limit: Annotated[int, QueryParameter(ge=1, le=100)] = 20,
        search: Annotated[
            str | None, QueryParameter(description="Case-insensitive substring of the destination, title or short code")
        ] = None,
        short_code: Annotated[str | None, QueryParameter(name="shortCode", description="Exact short code")] = None,
        platform: FromQuery[Platform | None] = None,
        is_active: Annotated[bool | None, QueryParameter(name="isActive")] = None,
        tag: Annotated[
            str | None, QueryParameter(description="Extension: only links carrying this tag (exact name)")
        ] = None,
    ) -> LinkListResponse:
        query = LinkFilter(
            page=page,
            limit=limit,
            search=search,
            short_code=short_code,
            platform=platform,
            is_active=is_active,
            tag=tag,
        )
        links, pagination = await services.links.list(principal.account_id, query)
        return LinkListResponse(links, pagination)

    # The path parameter is `id`, as in the spec; Litestar names the argument after it.
    @get("/{id:str}", responses=error_responses(404), summary="Get a link")
    async def get(
        self,
        id: FromPath[str],
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
    ) -> LinkResponse:
        return LinkResponse(await services.links.get(principal.account_id, id))

    @patch("/{id:str}", responses=error_responses(404), summary="Change a link")
    async def update(
        self,
        id: FromPath[str],
        data: JSONBody[UpdateLink],
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
    ) -> LinkResponse:
        return LinkResponse(await services.links.update(principal.account_id, id, data))

    @delete("/{id:str}", status_code=200, responses=error_responses(404), summary="Delete a link and its click history")
    async def remove(
        self,
        id: FromPath[str],
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
    ) -> DeletedLinkResponse:
        await services.links.delete(principal.account_id, id)
        return DeletedLinkResponse(DeletedLink(id=id, deleted=True))
