"""/webhooks: endpoints (the secret shown once), each one's delivery log, replay, a test event,
and the notice of an endpoint disabled after failing for days."""

from __future__ import annotations

import msgspec
from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from shortlink.accounts.schema import SessionAccount
from shortlink.dashboard.forms import text
from shortlink.dashboard.guard import SignedInController
from shortlink.dashboard.render import page, see_other
from shortlink.errors import ValidationError, field_error
from shortlink.webhooks.events import EVENT_TYPES, CreateWebhook, Replay, UpdateWebhook
from shortlink.wiring import Services

LOG_ROWS = 50


class WebhookPages(SignedInController):
    path = "/webhooks"

    async def _list(
        self, request: Request, session: SessionAccount, services: Services, status_code: int = 200, **context
    ) -> Response:
        context.setdefault("errors", {})
        context.setdefault("chosen", [])
        hooks = await services.webhooks.all(session.account_id)
        return page(request, "webhooks.html", status_code=status_code, hooks=hooks, event_types=EVENT_TYPES, **context)

    @get("/")
    async def index(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        return await self._list(request, session, services)

    @post("/")
    async def create(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        """The secret is in this response only."""
        form = await request.form()
        events = [event for event in form.getall("events", []) if isinstance(event, str)]
        fields = {"url": text(form, "url"), "events": events, "description": text(form, "description") or None}
        try:
            body = msgspec.convert(fields, CreateWebhook)
            created = await services.webhooks.create(session.account_id, body)
        except msgspec.ValidationError as exc:
            error = field_error(str(exc))
            return await self._list(
                request, session, services, 400, errors={error.field: error.message}, url=fields["url"], chosen=events
            )
        except ValidationError as exc:
            return await self._list(
                request, session, services, 400, errors={exc.field: exc.message}, url=fields["url"], chosen=events
            )
        return await self._list(request, session, services, created=created)

    @get("/{webhook_id:str}")
    async def show(
        self,
        request: Request,
        webhook_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        hook = await services.webhooks.get(session.account_id, webhook_id)
        log = await services.webhooks.attempts(session.account_id, webhook_id, LOG_ROWS, None)
        done = request.query_params.get("done", "")
        return page(request, "webhook.html", hook=hook, log=log, done=done)

    @post("/{webhook_id:str}/test")
    async def test(
        self, webhook_id: FromPath[str], session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        await services.webhooks.send_test(session.account_id, webhook_id)
        return see_other(f"/webhooks/{webhook_id}?done=test")

    @post("/{webhook_id:str}/replay")
    async def replay(
        self,
        request: Request,
        webhook_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        event_id = text(await request.form(), "eventId")
        body = Replay(event_id=event_id) if event_id else Replay(failed=True)
        await services.webhooks.replay(session.account_id, webhook_id, body)
        return see_other(f"/webhooks/{webhook_id}?done=replay")

    @post("/{webhook_id:str}/enable")
    async def enable(
        self, webhook_id: FromPath[str], session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        await services.webhooks.update(session.account_id, webhook_id, UpdateWebhook(is_enabled=True))
        return see_other(f"/webhooks/{webhook_id}?done=enable")
