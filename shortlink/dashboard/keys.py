"""/keys: the API section. List, create (the key shown once), revoke with confirmation."""

from __future__ import annotations

from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from shortlink.accounts.schema import SessionAccount
from shortlink.dashboard.forms import text
from shortlink.dashboard.guard import SignedInController
from shortlink.dashboard.render import page, see_other
from shortlink.errors import NotFoundError, ValidationError
from shortlink.wiring import Services


class KeyPages(SignedInController):
    path = "/keys"

    async def _page(
        self, request: Request, session: SessionAccount, services: Services, status_code: int = 200, **context
    ) -> Response:
        keys = await services.accounts.keys(session.account_id)
        context.setdefault("errors", {})
        return page(request, "keys.html", status_code=status_code, keys=keys, **context)

    @get("/")
    async def index(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        return await self._page(request, session, services, revoked=request.query_params.get("revoked") == "1")

    @post("/")
    async def create(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        """The new key is in this response only: it is stored as a hash."""
        name = text(await request.form(), "name") or None
        try:
            created = await services.accounts.create_key(session.account_id, name)
        except ValidationError as exc:
            return await self._page(request, session, services, 400, errors={exc.field: exc.message})
        return await self._page(request, session, services, created=created)

    @get("/{key_id:str}/revoke")
    async def confirm_revoke(
        self,
        request: Request,
        key_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        keys = await services.accounts.keys(session.account_id)
        key = next((key for key in keys if key.id == key_id and key.revoked_at is None), None)
        if key is None:
            raise NotFoundError(f"no active key with id {key_id}")
        return page(request, "key_revoke.html", key=key)

    @post("/{key_id:str}/revoke")
    async def revoke(
        self, key_id: FromPath[str], session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        await services.accounts.revoke_key(session.account_id, key_id)
        return see_other("/keys?revoked=1")
