"""/apps: the account's apps. Register one (iOS and/or Android), remove it after a
confirmation, see where its association files are served and check them as the validators
do; and, per link, the app it opens and the deep path (/apps/links/{id})."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from shortlink.accounts.schema import SessionAccount
from shortlink.applinks.schema import AndroidApp, CreateApp, IosApp, SetLinkApp
from shortlink.dashboard.forms import text
from shortlink.dashboard.guard import SignedInController, client_address
from shortlink.dashboard.render import page, see_other
from shortlink.errors import ConflictError, RateLimitedError, ValidationError
from shortlink.wiring import Services

# Form field → the API field a ValidationError names, so the message lands beside its input.
FORM_FIELDS = {
    "ios.teamId": "ios_team_id",
    "ios.bundleId": "ios_bundle_id",
    "ios.appStoreId": "ios_app_store_id",
    "android.package": "android_package",
    "body": "ios_team_id",
    "name": "name",
}


def _form_field(api_field: str) -> str:
    if api_field.startswith("ios.paths"):
        return "ios_paths"
    if api_field.startswith("android.sha256Fingerprints"):
        return "android_sha256"
    if api_field.startswith("android.paths"):
        return "android_paths"
    return FORM_FIELDS.get(api_field, "name")


def _lines(value: str) -> list[str]:
    return [line.strip() for line in value.replace(",", "\n").splitlines() if line.strip()]


def app_from_form(form: Mapping[str, Any]) -> CreateApp:
    ios = android = None
    if text(form, "ios_team_id") or text(form, "ios_bundle_id"):
        ios = IosApp(
            team_id=text(form, "ios_team_id"),
            bundle_id=text(form, "ios_bundle_id"),
            app_store_id=text(form, "ios_app_store_id") or None,
        )
        if _lines(text(form, "ios_paths")):
            ios.paths = _lines(text(form, "ios_paths"))
    if text(form, "android_package") or text(form, "android_sha256"):
        android = AndroidApp(
            package=text(form, "android_package"), sha256_fingerprints=_lines(text(form, "android_sha256"))
        )
        if _lines(text(form, "android_paths")):
            android.paths = _lines(text(form, "android_paths"))
    return CreateApp(name=text(form, "name") or None, ios=ios, android=android)


class AppPages(SignedInController):
    path = "/apps"

    async def _page(
        self, request: Request, session: SessionAccount, services: Services, status_code: int = 200, **context
    ) -> Response:
        apps = await services.apps.list(session.account_id)
        domains = (await services.accounts.overview(session.account_id)).domains
        context.setdefault("errors", {})
        context.setdefault("values", {})
        return page(
            request,
            "apps.html",
            status_code=status_code,
            apps=apps,
            domains=domains,
            scheme=services.hosts.scheme,
            **context,
        )

    @get("/")
    async def index(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        done = request.query_params.get("done")
        return await self._page(request, session, services, done=done)

    @post("/")
    async def create(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        form = await request.form()
        try:
            await services.apps.create(session.account_id, app_from_form(form))
        except ValidationError as exc:
            message = exc.message.split(": ", 1)[-1]
            return await self._page(
                request, session, services, 400, errors={_form_field(exc.field): message}, values=dict(form)
            )
        except ConflictError as exc:  # shown beside the identifiers
            errors = {"ios_bundle_id": exc.message}
            return await self._page(request, session, services, 409, errors=errors, values=dict(form))
        return see_other("/apps?done=added")

    @post("/check")
    async def check(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        """Each connected domain's files fetched as Apple's and Google's validators fetch them
        (no redirect followed), with one line per mistake; a few checks a minute."""
        try:
            await services.dashboard_limits.app_checks.take(session.account_id, client_address(request))
        except RateLimitedError as exc:
            return await self._page(request, session, services, 429, check_refused=exc.message)
        results = await services.apps.check(session.account_id)
        return await self._page(request, session, services, checks=results, checked=True)

    @get("/{app_id:str}/remove")
    async def confirm_remove(
        self,
        request: Request,
        app_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        return page(request, "app_remove.html", app=await services.apps.get(session.account_id, app_id))

    @post("/{app_id:str}/remove")
    async def remove(
        self, app_id: FromPath[str], session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        await services.apps.remove(session.account_id, app_id)
        return see_other("/apps?done=removed")

    @get("/links/{link_id:str}")
    async def link_app(
        self,
        request: Request,
        link_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        return await self._link_page(request, link_id, session, services)

    async def _link_page(
        self,
        request: Request,
        link_id: str,
        session: SessionAccount,
        services: Services,
        status_code: int = 200,
        **context,
    ) -> Response:
        link = await services.links.get(session.account_id, link_id)
        current = await services.apps.link_app(session.account_id, link_id)
        apps = await services.apps.list(session.account_id)
        visits = await services.apps.app_analytics(session.account_id, link_id, 30)
        context.setdefault("errors", {})
        return page(
            request, "link_app.html", status_code=status_code, link=link, current=current, apps=apps, visits=visits,
            **context,
        )  # fmt: skip

    @post("/links/{link_id:str}")
    async def set_link_app(
        self,
        request: Request,
        link_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        form = await request.form()
        app_id = text(form, "app_id") or None
        body = SetLinkApp(app_id=app_id, deep_path=text(form, "deep_path") or None)
        try:
            await services.apps.set_link_app(session.account_id, link_id, body)
        except ValidationError as exc:
            field = "deep_path" if exc.field == "deepPath" else "app_id"
            message = exc.message.split(": ", 1)[-1]
            return await self._link_page(request, link_id, session, services, 400, errors={field: message})
        return see_other(f"/links/{link_id}")
