"""/domains: the domains an account connects itself. Add one (the DNS record to create is
shown with copy buttons), check it now (a few checks a minute), choose where `/` and an
unknown code lead on it, and remove it after a confirmation; all through `services.domains`,
as the API's /domains does (docs/deployment.md, "Domains people connect themselves")."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import msgspec
from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from shortlink.accounts.schema import SessionAccount
from shortlink.dashboard.forms import text
from shortlink.dashboard.guard import SignedInController, client_address
from shortlink.dashboard.render import page, see_other
from shortlink.domains.schema import CreateDomain, UpdateDomain
from shortlink.errors import ConflictError, RateLimitedError, ValidationError, field_error
from shortlink.wiring import Services

REDIRECT_FIELDS = ("rootRedirect", "notFoundRedirect")


def _redirects(form: Mapping[str, Any]) -> dict[str, str | None]:
    """The two redirect fields; an empty one is null (the usual page)."""
    return {name: text(form, name) or None for name in REDIRECT_FIELDS}


def _shown(fields: Mapping[str, str | None]) -> dict[str, str]:
    return {name: value or "" for name, value in fields.items()}


def _pointer(services: Services) -> tuple[str, str] | None:
    """The record that points a domain at this service, as (type, target): a CNAME to the short
    host's name, or an A / AAAA record when the short host is an address."""
    target = urlsplit(services.hosts.short_host).hostname
    if not target:
        return None
    try:
        return ("A" if ipaddress.ip_address(target).version == 4 else "AAAA", target)
    except ValueError:
        return ("CNAME", target)


class DomainPages(SignedInController):
    path = "/domains"

    async def _list(
        self, request: Request, session: SessionAccount, services: Services, status_code: int = 200, **context
    ) -> Response:
        context.setdefault("errors", {})
        context.setdefault("values", {})
        domains = await services.domains.all(session.account_id)
        return page(request, "domains.html", status_code=status_code, domains=domains, **context)

    async def _detail(
        self,
        request: Request,
        session: SessionAccount,
        services: Services,
        domain_id: str,
        status_code: int = 200,
        **context,
    ) -> Response:
        domain = await services.domains.get(session.account_id, domain_id)
        context.setdefault("errors", {})
        context.setdefault(
            "values", {"rootRedirect": domain.root_redirect, "notFoundRedirect": domain.not_found_redirect}
        )
        context["values"] = _shown(context["values"])
        return page(
            request, "domain.html", status_code=status_code, domain=domain, pointer=_pointer(services), **context
        )

    @get("/")
    async def index(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        return await self._list(request, session, services, done=request.query_params.get("done", ""))

    @post("/")
    async def create(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        """The name alone (where it leads is chosen on its page); `validate_name` says what is wrong with it."""
        name = text(await request.form(), "name")
        try:
            domain = await services.domains.create(session.account_id, CreateDomain(name=name))
        except ValidationError as exc:
            return await self._list(
                request, session, services, 400, errors={"name": exc.message}, values={"name": name}
            )
        except ConflictError as exc:  # the name is another account's: said beside it
            return await self._list(
                request, session, services, 409, errors={"name": exc.message}, values={"name": name}
            )
        return see_other(f"/domains/{domain.id}?done=added")

    @get("/{domain_id:str}")
    async def show(
        self,
        request: Request,
        domain_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        return await self._detail(request, session, services, domain_id, done=request.query_params.get("done", ""))

    @post("/{domain_id:str}")
    async def save(
        self,
        request: Request,
        domain_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        """Where `/` and an unknown code lead on the domain; an empty field: the usual page."""
        fields = _redirects(await request.form())
        try:
            patch = msgspec.convert(fields, UpdateDomain)
            await services.domains.update(session.account_id, domain_id, patch)
        except (msgspec.ValidationError, ValidationError) as exc:
            error = field_error(str(exc)) if isinstance(exc, msgspec.ValidationError) else exc
            return await self._detail(
                request, session, services, domain_id, 400, errors={error.field: error.message}, values=fields
            )
        return see_other(f"/domains/{domain_id}?done=saved")

    @post("/{domain_id:str}/verify")
    async def verify(
        self,
        request: Request,
        domain_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        """Look for the TXT record now; a few checks a minute, as each is a DNS lookup."""
        await services.domains.get(session.account_id, domain_id)  # another account's id: 404, no token taken
        try:
            await services.dashboard_limits.domain_checks.take(session.account_id, client_address(request))
        except RateLimitedError as exc:
            return await self._detail(request, session, services, domain_id, 429, check_refused=exc.message)
        await services.domains.verify(session.account_id, domain_id)
        return see_other(f"/domains/{domain_id}?done=checked")

    @get("/{domain_id:str}/remove")
    async def confirm_remove(
        self,
        request: Request,
        domain_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        return page(request, "domain_remove.html", domain=await services.domains.get(session.account_id, domain_id))

    @post("/{domain_id:str}/remove")
    async def remove(
        self, domain_id: FromPath[str], session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        await services.domains.delete(session.account_id, domain_id)
        return see_other("/domains?done=removed")
