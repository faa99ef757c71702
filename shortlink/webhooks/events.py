"""Event types, the delivered body, and the API's shapes for endpoints and their log."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from shortlink.links.schema import Link
from shortlink.times import Timestamp

LINK_EVENTS = ("link.created", "link.updated", "link.deleted", "link.paused", "link.resumed", "link.expired")
CLICKED = "link.clicked"
# A link's counted human clicks reached its rules' maxClicks (link rules): written by
# the click batch that reaches it (storage.webhooks.cap_events_statement), its Link added at dispatch.
CAP_REACHED = "link.cap_reached"
EVENT_TYPES = (*LINK_EVENTS, CAP_REACHED, CLICKED)
# The events a click batch writes in SQL: the recorder asks for them while an account wants one.
BATCH_EVENTS = (CLICKED, CAP_REACHED)
# Sent by "send a test event" to the one endpoint asked, whatever it subscribes to.
TEST_EVENT = "webhook.test"
MAX_FILTER_ITEMS = 100


class EventBody(msgspec.Struct):
    """What a delivery's body is: `data` is a Link for link events, {link, click} for clicks."""

    type: str
    timestamp: str
    data: msgspec.Raw


class ClickLabels(msgspec.Struct):
    """The labels the analytics give a click; nothing that identifies the visitor."""

    device: str
    browser: str
    os: str
    country: str
    referrer: str
    campaign: str


class ClickedData(msgspec.Struct):
    link: Link
    click: ClickLabels


EventType = Annotated[str, Meta(description="One of: " + ", ".join(EVENT_TYPES))]
Url = Annotated[str, Meta(min_length=1, max_length=2048)]


class CreateWebhook(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    url: Url
    events: Annotated[list[EventType], Meta(min_length=1, max_length=len(EVENT_TYPES))]
    description: Annotated[str, Meta(max_length=200)] | None = None
    link_ids: Annotated[list[str], Meta(max_length=MAX_FILTER_ITEMS)] | None = None
    tags: Annotated[list[str], Meta(max_length=MAX_FILTER_ITEMS)] | None = None


class UpdateWebhook(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    """Every field optional; `linkIds` / `tags` null lifts that limit; `isEnabled` true
    turns a disabled endpoint back on."""

    url: Url | msgspec.UnsetType = msgspec.UNSET
    events: Annotated[list[EventType], Meta(min_length=1, max_length=len(EVENT_TYPES))] | msgspec.UnsetType = (
        msgspec.UNSET
    )
    description: Annotated[str, Meta(max_length=200)] | msgspec.UnsetType | None = msgspec.UNSET
    link_ids: Annotated[list[str], Meta(max_length=MAX_FILTER_ITEMS)] | msgspec.UnsetType | None = msgspec.UNSET
    tags: Annotated[list[str], Meta(max_length=MAX_FILTER_ITEMS)] | msgspec.UnsetType | None = msgspec.UNSET
    is_enabled: bool | msgspec.UnsetType = msgspec.UNSET


class Webhook(msgspec.Struct, rename="camel", kw_only=True):
    id: str
    url: str
    description: str | None
    events: list[str]
    link_ids: list[str] | None
    tags: list[str] | None
    is_enabled: bool
    disabled_reason: str | None
    failing_since: Timestamp | None
    previous_secret_valid_until: Timestamp | None
    created_at: Timestamp
    updated_at: Timestamp


class CreatedWebhook(Webhook, kw_only=True):
    """The endpoint and its secret: shown this once."""

    secret: str


class WebhookResponse(msgspec.Struct):
    data: Webhook


class CreatedWebhookResponse(msgspec.Struct):
    data: CreatedWebhook


class WebhookListResponse(msgspec.Struct):
    data: list[Webhook]


class DeletedWebhook(msgspec.Struct):
    id: str
    deleted: bool


class DeletedWebhookResponse(msgspec.Struct):
    data: DeletedWebhook


class RotateSecret(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    """How long the old secret keeps signing beside the new one (0: stops at once)."""

    overlap_seconds: Annotated[int, Meta(ge=0, le=7 * 86400)] = 86400


class RotatedSecret(msgspec.Struct, rename="camel", kw_only=True):
    id: str
    secret: str
    previous_secret_valid_until: Timestamp | None


class RotatedSecretResponse(msgspec.Struct):
    data: RotatedSecret


class Attempt(msgspec.Struct, rename="camel", kw_only=True):
    """One delivery attempt: `status` null when no answer came (timeout, refused address...),
    `response` the answer's first bytes or what went wrong; `deliveryState` where that
    event's delivery to this endpoint stands now (pending, succeeded, failed)."""

    id: int
    event_id: str
    event_type: str
    attempted_at: Timestamp
    status: int | None
    latency_ms: int
    response: str
    ok: bool
    delivery_state: str


class AttemptListResponse(msgspec.Struct):
    data: list[Attempt]


class Replay(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    """`eventId`: deliver that event again; or `failed: true`: every failed delivery of the endpoint."""

    event_id: str | None = None
    failed: bool = False


class Replayed(msgspec.Struct):
    replayed: int


class ReplayedResponse(msgspec.Struct):
    data: Replayed


class TestEventSent(msgspec.Struct, rename="camel"):
    event_id: str


class TestEventResponse(msgspec.Struct):
    data: TestEventSent
