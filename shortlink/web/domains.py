"""The /domains resource: thin handlers over `application.domains.Domains`, an extension beside
the spec's resources with its envelope, bearer auth, Pro gate and rate limits; and
GET /tls/allowed, Caddy's on-demand TLS question."""

from __future__ import annotations

from litestar import Controller, Request, Response, delete, get, patch, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from shortlink.accounts.schema import Principal
from shortlink.client_address import address_of
from shortlink.domains.schema import (
    CreateDomain,
    DeletedDomain,
    DeletedDomainResponse,
    DomainListResponse,
    DomainResponse,
    UpdateDomain,
)
from shortlink.web.openapi import error_responses
from shortlink.wiring import Services

# Longer than any domain name: the question is answered without reading more.
MAX_ASKED_NAME = 255


class DomainController(Controller):
    path = "/domains"
    tags = ["domains"]

    @post(
        "/",
        status_code=201,
        responses=error_responses(409),
        summary="Connect a domain (extension); served once its TXT record is verified",
        description=(
            "Answers the DNS record to create (`verification`): a TXT record `_shortlink-verify.<name>` holding"
            " the value shown. The domain is checked hourly for 7 days, or at once with `POST /domains/{id}/verify`."
            " 409 when another account has connected the name. See docs/deployment.md."
        ),
    )
    async def create(
        self, data: JSONBody[CreateDomain], principal: NamedDependency[Principal], services: NamedDependency[Services]
    ) -> DomainResponse:
        return DomainResponse(await services.domains.create(principal.account_id, data))

    @get("/", responses=error_responses(), summary="The account's domains (extension)")
    async def list(
        self, principal: NamedDependency[Principal], services: NamedDependency[Services]
    ) -> DomainListResponse:
        return DomainListResponse(await services.domains.all(principal.account_id))

    @get("/{id:str}", responses=error_responses(404), summary="A domain (extension)")
    async def read(
        self, id: FromPath[str], principal: NamedDependency[Principal], services: NamedDependency[Services]
    ) -> DomainResponse:
        return DomainResponse(await services.domains.get(principal.account_id, id))

    @patch(
        "/{id:str}",
        responses=error_responses(404),
        summary="Choose where `/` and an unknown code lead on the domain (extension); null: the usual page",
    )
    async def update(
        self,
        id: FromPath[str],
        data: JSONBody[UpdateDomain],
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
    ) -> DomainResponse:
        return DomainResponse(await services.domains.update(principal.account_id, id, data))

    @post(
        "/{id:str}/verify",
        status_code=200,
        responses=error_responses(404),
        summary="Look for the domain's TXT record now (extension); answers the domain as it then is",
    )
    async def verify(
        self, id: FromPath[str], principal: NamedDependency[Principal], services: NamedDependency[Services]
    ) -> DomainResponse:
        return DomainResponse(await services.domains.verify(principal.account_id, id))

    @delete(
        "/{id:str}",
        status_code=200,
        responses=error_responses(404),
        summary="Disconnect a domain (extension): its links are no longer served on it",
    )
    async def remove(
        self, id: FromPath[str], principal: NamedDependency[Principal], services: NamedDependency[Services]
    ) -> DeletedDomainResponse:
        await services.domains.delete(principal.account_id, id)
        return DeletedDomainResponse(DeletedDomain(id=id, deleted=True))


@get("/tls/allowed", include_in_schema=False)
async def tls_allowed(request: Request, services: NamedDependency[Services]) -> Response:
    """200 for a name this service serves (its own hosts, verified domains), else 404: Caddy asks
    before it gets a certificate for a name it was never configured with."""
    client = request.scope.get("client")
    address = address_of(
        client[0] if client else "", request.headers.get("x-forwarded-for"), services.config.trusted_networks
    )[0]
    allowed = await services.domains.tls_allowed(request.query_params.get("domain", "")[:MAX_ASKED_NAME], address)
    if allowed is None:
        return Response(b"too many requests\n", status_code=429, media_type="text/plain", headers={"Retry-After": "60"})
    if not allowed:
        return Response(b"not a domain of this service\n", status_code=404, media_type="text/plain")
    return Response(b"ok\n", status_code=200, media_type="text/plain")
