"""The /webhooks resource: thin handlers over `application.webhooks.Webhooks`, an extension
beside the spec's resources with its envelope, bearer auth, Pro gate and rate limits."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, delete, get, patch, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody, QueryParameter

from shortlink.accounts.schema import Principal
from shortlink.web.openapi import error_responses
from shortlink.webhooks.events import (
    AttemptListResponse,
    CreatedWebhookResponse,
    CreateWebhook,
    DeletedWebhook,
    DeletedWebhookResponse,
    Replay,
    Replayed,
    ReplayedResponse,
    RotatedSecretResponse,
    RotateSecret,
    TestEventResponse,
    TestEventSent,
    UpdateWebhook,
    WebhookListResponse,
    WebhookResponse,
)
from shortlink.wiring import Services


class WebhookController(Controller):
    path = "/webhooks"
    tags = ["webhooks"]

    @post(
        "/",
        status_code=201,
        responses=error_responses(),
        summary="Add a webhook endpoint (extension); its secret is shown in this answer only",
        description=(
            "Deliveries follow Standard Webhooks: headers `webhook-id` (the event id), `webhook-timestamp`,"
            " `webhook-signature`; body `{type, timestamp, data}`. See docs/webhooks.md."
        ),
    )
    async def create(
        self, data: JSONBody[CreateWebhook], principal: NamedDependency[Principal], services: NamedDependency[Services]
    ) -> CreatedWebhookResponse:
        return CreatedWebhookResponse(await services.webhooks.create(principal.account_id, data))

    @get("/", responses=error_responses(), summary="The account's webhook endpoints (extension)")
    async def list(
        self, principal: NamedDependency[Principal], services: NamedDependency[Services]
    ) -> WebhookListResponse:
        return WebhookListResponse(await services.webhooks.all(principal.account_id))

    @get("/{id:str}", responses=error_responses(404), summary="A webhook endpoint (extension)")
    async def read(
        self, id: FromPath[str], principal: NamedDependency[Principal], services: NamedDependency[Services]
    ) -> WebhookResponse:
        return WebhookResponse(await services.webhooks.get(principal.account_id, id))

    @patch(
        "/{id:str}",
        responses=error_responses(404),
        summary="Change a webhook endpoint (extension); isEnabled true turns a disabled one back on",
    )
    async def update(
        self,
        id: FromPath[str],
        data: JSONBody[UpdateWebhook],
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
    ) -> WebhookResponse:
        return WebhookResponse(await services.webhooks.update(principal.account_id, id, data))

    @delete(
        "/{id:str}",
        status_code=200,
        responses=error_responses(404),
        summary="Delete a webhook endpoint and its delivery log (extension)",
    )
    async def remove(
        self, id: FromPath[str], principal: NamedDependency[Principal], services: NamedDependency[Services]
    ) -> DeletedWebhookResponse:
        await services.webhooks.delete(principal.account_id, id)
        return DeletedWebhookResponse(DeletedWebhook(id=id, deleted=True))

    @post(
        "/{id:str}/rotate",
        status_code=200,
        responses=error_responses(404),
        summary="A new secret (extension); the old one keeps signing beside it for overlapSeconds",
    )
    async def rotate(
        self,
        id: FromPath[str],
        data: JSONBody[RotateSecret],
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
    ) -> RotatedSecretResponse:
        return RotatedSecretResponse(await services.webhooks.rotate(principal.account_id, id, data.overlap_seconds))

    @get(
        "/{id:str}/deliveries",
        responses=error_responses(404),
        summary="The endpoint's delivery attempts, newest first (extension); kept 30 days",
    )
    async def deliveries(
        self,
        id: FromPath[str],
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
        limit: Annotated[int, QueryParameter(ge=1, le=100)] = 50,
        before: Annotated[
            int | None,
            # A 64-bit id at most, as the databases store them.
            QueryParameter(ge=1, le=2**63 - 1, description="Only attempts with an id below this (the next page)"),
        ] = None,
    ) -> AttemptListResponse:
        return AttemptListResponse(await services.webhooks.attempts(principal.account_id, id, limit, before))

    @post(
        "/{id:str}/replay",
        status_code=200,
        responses=error_responses(404),
        summary="Deliver one event again, or every failed delivery of the endpoint (extension)",
    )
    async def replay(
        self,
        id: FromPath[str],
        data: JSONBody[Replay],
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
    ) -> ReplayedResponse:
        return ReplayedResponse(Replayed(await services.webhooks.replay(principal.account_id, id, data)))

    @post(
        "/{id:str}/test",
        status_code=202,
        responses=error_responses(404),
        summary="Send the endpoint a webhook.test event (extension); its attempt shows in the log",
    )
    async def test(
        self, id: FromPath[str], principal: NamedDependency[Principal], services: NamedDependency[Services]
    ) -> TestEventResponse:
        return TestEventResponse(TestEventSent(await services.webhooks.send_test(principal.account_id, id)))
