"""/api/v1/apps (an account's apps, an extension beside the spec's resources) and the
association files every host serves: /.well-known/apple-app-site-association (and Apple's
legacy root path) and /.well-known/assetlinks.json.

The files are JSON as `application/json`, 200 or 404, never a redirect (Apple and Google
refuse one), and carry no cookie; HEAD answers the same headers without the body.
"""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Request, Response, delete, get, post, put, route
from litestar.di import NamedDependency
from litestar.enums import HttpMethod
from litestar.params import FromPath, JSONBody, QueryParameter

from shortlink.accounts.schema import Principal
from shortlink.applinks.association import CACHE_CONTROL, CONTENT_TYPE
from shortlink.applinks.schema import (
    NOT_PROOF,
    AppListResponse,
    AppResponse,
    CreateApp,
    DeepLinkResponse,
    DeletedApp,
    DeletedAppResponse,
    LinkAppAnalyticsResponse,
    LinkAppResponse,
    SetLinkApp,
)
from shortlink.web.openapi import error_responses
from shortlink.wiring import Services

APPLE_PATHS = ["/.well-known/apple-app-site-association", "/apple-app-site-association"]
ANDROID_PATH = "/.well-known/assetlinks.json"
NOT_FOUND = b'{"error":{"code":"NOT_FOUND","message":"no app is associated with this host"}}'


class AppController(Controller):
    path = "/apps"
    tags = ["apps"]

    @get("/", responses=error_responses(), summary="The account's apps (extension)")
    async def list(self, principal: NamedDependency[Principal], services: NamedDependency[Services]) -> AppListResponse:
        return AppListResponse(await services.apps.list(principal.account_id))

    @post(
        "/",
        status_code=201,
        responses=error_responses(409),
        summary="Register an app (extension): named in the association files of the account's custom domains",
        description=(
            "An iOS part (`teamId`, `bundleId`, optional `appStoreId`, `paths`), an Android part (`package`,"
            ' `sha256Fingerprints`, `paths`), or both. `paths` default to `["/l/*"]` (every short link of the'
            " domain). 409 when the account already registered this iOS app id or Android package."
        ),
    )
    async def create(
        self, data: JSONBody[CreateApp], principal: NamedDependency[Principal], services: NamedDependency[Services]
    ) -> AppResponse:
        return AppResponse(await services.apps.create(principal.account_id, data))

    @get("/{id:str}", responses=error_responses(404), summary="One app of the account (extension)")
    async def read(
        self, id: FromPath[str], principal: NamedDependency[Principal], services: NamedDependency[Services]
    ) -> AppResponse:
        return AppResponse(await services.apps.get(principal.account_id, id))

    @delete("/{id:str}", status_code=200, responses=error_responses(404), summary="Remove an app (extension)")
    async def remove(
        self, id: FromPath[str], principal: NamedDependency[Principal], services: NamedDependency[Services]
    ) -> DeletedAppResponse:
        await services.apps.remove(principal.account_id, id)
        return DeletedAppResponse(DeletedApp(id))


def _file(body: bytes | None, head: bool) -> Response[bytes]:
    headers = {"Cache-Control": CACHE_CONTROL if body is not None else "no-cache"}
    content = body if body is not None else NOT_FOUND
    headers["Content-Length"] = str(len(content))
    return Response(
        b"" if head else content, status_code=200 if body is not None else 404, media_type=CONTENT_TYPE, headers=headers
    )


def _host(request: Request) -> str:
    return request.headers.get("host", "").lower()


@route(APPLE_PATHS, http_method=[HttpMethod.GET, HttpMethod.HEAD], include_in_schema=False)
async def apple_app_site_association(request: Request, services: NamedDependency[Services]) -> Response[bytes]:
    return _file(await services.apps.apple_association(_host(request)), request.method == "HEAD")


@route(ANDROID_PATH, http_method=[HttpMethod.GET, HttpMethod.HEAD], include_in_schema=False)
async def asset_links(request: Request, services: NamedDependency[Services]) -> Response[bytes]:
    return _file(await services.apps.asset_links(_host(request)), request.method == "HEAD")


ASSOCIATION_HANDLERS = [apple_app_site_association, asset_links]


class LinkAppController(Controller):
    path = "/links"
    tags = ["apps"]

    @get("/{id:str}/app", responses=error_responses(404), summary="The app the link opens (extension)")
    async def read(
        self, id: FromPath[str], principal: NamedDependency[Principal], services: NamedDependency[Services]
    ) -> LinkAppResponse:
        return LinkAppResponse(await services.apps.link_app(principal.account_id, id))

    @put(
        "/{id:str}/app",
        responses=error_responses(404),
        summary="Make the link open one of the account's apps at a deep path (extension); appId null: no app",
    )
    async def replace(
        self,
        id: FromPath[str],
        data: JSONBody[SetLinkApp],
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
    ) -> LinkAppResponse:
        return LinkAppResponse(await services.apps.set_link_app(principal.account_id, id, data))

    @get(
        "/{id:str}/app/analytics",
        responses=error_responses(404),
        summary="Visits of a link into an app: sent to the app, to the store, to the website (extension)",
        description="Human visits of the last `days` days (1 to 366, default 30), by UTC day. " + NOT_PROOF,
    )
    async def analytics(
        self,
        id: FromPath[str],
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
        days: Annotated[int, QueryParameter(ge=1, le=366)] = 30,
    ) -> LinkAppAnalyticsResponse:
        return LinkAppAnalyticsResponse(await services.apps.app_analytics(principal.account_id, id, days))


# Called by the app itself, which holds no API key: the token (or the short link it was
# opened with) is what it knows. Answers only links without a password that are active.
@post("/app/deferred/{token:str}", status_code=200, include_in_schema=False)
async def redeem_deferred(token: FromPath[str], services: NamedDependency[Services]) -> DeepLinkResponse:
    return DeepLinkResponse(await services.apps.redeem(token))


@get("/app/links/{code:str}", include_in_schema=False)
async def resolve_link(code: FromPath[str], services: NamedDependency[Services]) -> DeepLinkResponse:
    return DeepLinkResponse(await services.apps.resolve(code))


ASSOCIATION_HANDLERS += [redeem_deferred, resolve_link]
