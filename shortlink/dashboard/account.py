"""/account: e-mail, subscription, limits, custom domains; changing the password."""

from __future__ import annotations

from litestar import Request, Response, get, post
from litestar.di import NamedDependency

from shortlink.accounts.schema import SessionAccount
from shortlink.accounts.sessions import SignInFailed
from shortlink.dashboard.guard import SignedInController, client_address
from shortlink.dashboard.render import page
from shortlink.dashboard.signin import signed_in
from shortlink.errors import RateLimitedError, ValidationError
from shortlink.wiring import Services


class AccountPage(SignedInController):
    path = "/account"

    async def _page(
        self, request: Request, session: SessionAccount, services: Services, status_code: int = 200, **context
    ) -> Response:
        context.setdefault("errors", {})
        return page(
            request,
            "account.html",
            status_code=status_code,
            account=await services.accounts.overview(session.account_id),
            requests_per_minute=services.accounts.api_limiter.capacity,
            links_per_day=services.accounts.links_per_day,
            created_today=services.links.created_today(session.account_id),
            **context,
        )

    @get("/")
    async def index(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        return await self._page(request, session, services, changed=request.query_params.get("changed") == "1")

    @post("/password")
    async def change_password(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        """Every other session of the account ends; this browser gets a new one."""
        form = await request.form()
        current, new, again = (str(form.get(name, ""))[:1024] for name in ("current", "password", "again"))
        if new != again:
            return await self._page(request, session, services, 400, errors={"again": "again: the two do not match"})
        try:
            token = await services.sessions.change_password(session, current, new, client_address(request))
        except ValidationError as exc:
            return await self._page(request, session, services, 400, errors={exc.field: exc.message})
        except SignInFailed:
            errors = {"current": "current: that is not the account's password"}
            return await self._page(request, session, services, 400, errors=errors)
        except RateLimitedError as exc:
            return await self._page(request, session, services, 429, errors={"current": exc.message})
        return signed_in(request, token, "/account?changed=1")
