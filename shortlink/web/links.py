"""The /links resource: thin handlers over shortlink.links.service."""

from __future__ import annotations

import asyncio
from typing import Annotated

from litestar import Controller, delete, get, patch, post
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery, JSONBody, QueryParameter

from shortlink.accounts import Principal
from shortlink.links import rules, service
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
from shortlink.services import Services
from shortlink.times import utcnow
from shortlink.web.openapi import error_responses


def provide_owner(principal: NamedDependency[Principal], services: NamedDependency[Services]) -> service.Owner:
    return service.Owner(
        principal.account_id,
        services.config.short_host,
        services.config.limits.links_per_day,
        tuple(services.config.links.domains),
    )


async def hash_password(password: str | None) -> str | None:
    # The slow hash runs in a worker thread: neither the event loop nor the
    # database thread waits on it.
    return None if password is None else await asyncio.to_thread(rules.hash_password, password)


class LinkController(Controller):
    path = "/links"
    tags = ["links"]

    @post("/", status_code=201, responses=error_responses(409), summary="Create a link")
    async def create(
        self, data: JSONBody[CreateLink], owner: NamedDependency[service.Owner], services: NamedDependency[Services]
    ) -> LinkResponse:
        password_hash = await hash_password(data.password)
        link = await services.db.run(
            service.create_link,
            owner,
            data,
            now=utcnow(),
            password_hash=password_hash,
            fetch_title=services.config.fetcher.enabled,
        )
        services.links_changed(link.short_code)
        services.fetcher.notify()
        return LinkResponse(link)

    @get("/", responses=error_responses(), summary="List the account's links, newest first")
    async def list(
        self,
        owner: NamedDependency[service.Owner],
        services: NamedDependency[Services],
        # Any page: one past the end is empty (the query string is bounded by web.bounds).
        page: Annotated[int, QueryParameter(ge=1)] = 1,
        limit: Annotated[int, QueryParameter(ge=1, le=100)] = 20,
        search: Annotated[
            str | None, QueryParameter(description="Case-insensitive substring of the destination, title or short code")
        ] = None,
        short_code: Annotated[str | None, QueryParameter(name="shortCode", description="Exact short code")] = None,
        platform: FromQuery[Platform | None] = None,
        is_active: Annotated[bool | None, QueryParameter(name="isActive")] = None,
    ) -> LinkListResponse:
        query = LinkFilter(
            page=page, limit=limit, search=search, short_code=short_code, platform=platform, is_active=is_active
        )
        links, pagination = await services.db.run(service.list_links, owner, query)
        return LinkListResponse(links, pagination)

    # The path parameter is `id`, as in the spec; Litestar names the argument after it.
    @get("/{id:str}", responses=error_responses(404), summary="Get a link")
    async def get(
        self,
        id: FromPath[str],
        owner: NamedDependency[service.Owner],
        services: NamedDependency[Services],
    ) -> LinkResponse:
        return LinkResponse(await services.db.run(service.get_link, owner, id))

    @patch("/{id:str}", responses=error_responses(404), summary="Change a link")
    async def update(
        self,
        id: FromPath[str],
        data: JSONBody[UpdateLink],
        owner: NamedDependency[service.Owner],
        services: NamedDependency[Services],
    ) -> LinkResponse:
        password = data.password if isinstance(data.password, str) else None
        password_hash = await hash_password(password)
        link, code = await services.db.run(
            service.update_link, owner, id, data, now=utcnow(), password_hash=password_hash
        )
        services.links_changed(code)
        return LinkResponse(link)

    @delete("/{id:str}", status_code=200, responses=error_responses(404), summary="Delete a link and its click history")
    async def remove(
        self,
        id: FromPath[str],
        owner: NamedDependency[service.Owner],
        services: NamedDependency[Services],
    ) -> DeletedLinkResponse:
        code = await services.db.run(service.delete_link, owner, id)
        services.links_changed(code)
        return DeletedLinkResponse(DeletedLink(id=id, deleted=True))
