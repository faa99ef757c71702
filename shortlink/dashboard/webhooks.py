"""/webhooks: endpoints (the secret shown once), each one's delivery log, replay, a test event,
the notice of an endpoint disabled after failing for days; an endpoint changed, its secret
rotated (the new one shown once) and the endpoint deleted, each of the last two confirmed."""

from __future__ import annotations

import msgspec
from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from shortlink.accounts.schema import SessionAccount
from shortlink.dashboard.forms import text
from shortlink.dashboard.guard import SignedInController, client_address
from shortlink.dashboard.render import page, see_other
from shortlink.errors import ValidationError, field_error
from shortlink.webhooks.events import EVENT_TYPES, CreateWebhook, Replay, RotateSecret, UpdateWebhook
from shortlink.wiring import Services

LOG_ROWS = 50
# The rotation page's choices: how long the current secret keeps signing beside the new one.
OVERLAPS = ((0, "Not at all: stop it now"), (3600, "1 hour"), (86400, "1 day"), (7 * 86400, "7 days"))


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
        deleted = request.query_params.get("deleted") == "1"
        return await self._list(request, session, services, deleted=deleted)

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
        return await self._detail(request, session, services, webhook_id, done=request.query_params.get("done", ""))

    async def _detail(
        self,
        request: Request,
        session: SessionAccount,
        services: Services,
        webhook_id: str,
        status_code: int = 200,
        **context,
    ) -> Response:
        hook = await services.webhooks.get(session.account_id, webhook_id)
        log = await services.webhooks.attempts(session.account_id, webhook_id, LOG_ROWS, None)
        context.setdefault("errors", {})
        context.setdefault("form", {"url": hook.url, "description": hook.description or "", "events": hook.events})
        return page(
            request, "webhook.html", status_code=status_code, hook=hook, log=log, event_types=EVENT_TYPES, **context
        )

    @post("/{webhook_id:str}/edit")
    async def edit(
        self,
        request: Request,
        webhook_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        form = await request.form()
        events = [event for event in form.getall("events", []) if isinstance(event, str)]
        fields = {"url": text(form, "url"), "events": events, "description": text(form, "description") or None}
        try:
            patch = msgspec.convert(fields, UpdateWebhook)
            await services.webhooks.update(session.account_id, webhook_id, patch)
        except (msgspec.ValidationError, ValidationError) as exc:
            error = field_error(str(exc)) if isinstance(exc, msgspec.ValidationError) else exc
            shown = {**fields, "description": fields["description"] or ""}
            return await self._detail(
                request, session, services, webhook_id, 400, errors={error.field: error.message}, form=shown
            )
        return see_other(f"/webhooks/{webhook_id}?done=edit")

    @get("/{webhook_id:str}/rotate")
    async def confirm_rotate(
        self,
        request: Request,
        webhook_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        hook = await services.webhooks.get(session.account_id, webhook_id)
        return page(request, "webhook_rotate.html", hook=hook, overlaps=OVERLAPS, chosen=86400, errors={})

    @post("/{webhook_id:str}/rotate")
    async def rotate(
        self,
        request: Request,
        webhook_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        """The new secret is in this response only."""
        chosen = text(await request.form(), "overlapSeconds")
        try:  # the API's bounds (RotateSecret), for a value sent by other means than the page's choices
            overlap = msgspec.convert({"overlapSeconds": int(chosen)}, RotateSecret).overlap_seconds
        except (ValueError, msgspec.ValidationError):
            hook = await services.webhooks.get(session.account_id, webhook_id)
            errors = {"overlapSeconds": "choose how long the current secret keeps signing"}
            return page(
                request,
                "webhook_rotate.html",
                status_code=400,
                hook=hook,
                overlaps=OVERLAPS,
                chosen=86400,
                errors=errors,
            )
        rotated = await services.webhooks.rotate(session.account_id, webhook_id, overlap)
        hook = await services.webhooks.get(session.account_id, webhook_id)
        return page(request, "webhook_rotate.html", hook=hook, rotated=rotated)

    @get("/{webhook_id:str}/delete")
    async def confirm_delete(
        self,
        request: Request,
        webhook_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        hook = await services.webhooks.get(session.account_id, webhook_id)
        return page(request, "webhook_delete.html", hook=hook)

    @post("/{webhook_id:str}/delete")
    async def delete(
        self, webhook_id: FromPath[str], session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        await services.webhooks.delete(session.account_id, webhook_id)
        return see_other("/webhooks?deleted=1")

    @post("/{webhook_id:str}/test")
    async def test(
        self,
        request: Request,
        webhook_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        # Over the limit: RATE_LIMITED, the error page (429) saying how long to wait.
        await services.dashboard_limits.webhook_tests.take(session.account_id, client_address(request))
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
