"""Endpoints of an account: create, read, change, delete, rotate the secret, replay, the log.
Plain functions over a connection; secrets are made from the nonces by the caller, who holds
the key (webhooks.secrets)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from msgspec import UNSET

from shortlink.errors import NotFoundError, ValidationError
from shortlink.ids import new_id
from shortlink.storage import Connection, Row, transaction
from shortlink.storage import webhooks as store
from shortlink.times import to_iso
from shortlink.webhooks import policy
from shortlink.webhooks.events import Attempt, CreateWebhook, Replay, UpdateWebhook, Webhook
from shortlink.webhooks.outbox import millis
from shortlink.webhooks.secrets import new_nonce

MAX_ENDPOINTS_PER_ACCOUNT = 20
MAX_LOG_PAGE = 100


def _stamp(ms: int | None) -> str | None:
    return None if ms is None else to_iso(datetime.fromtimestamp(ms / 1000, UTC))


def to_webhook(row: Row, now_ms: int) -> Webhook:
    previous_until = row["previous_until_ms"] if row["previous_nonce"] else None
    return Webhook(
        id=row["public_id"],
        url=row["url"],
        description=row["description"],
        events=policy.events_of(row["events"]),
        link_ids=None if row["link_ids"] is None else json.loads(row["link_ids"]),
        tags=None if row["tags"] is None else json.loads(row["tags"]),
        is_enabled=bool(row["is_enabled"]),
        disabled_reason=row["disabled_reason"],
        failing_since=_stamp(row["failing_since_ms"]),
        previous_secret_valid_until=_stamp(previous_until) if previous_until and previous_until > now_ms else None,
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def _names(names: list[str] | None) -> str | None:
    return None if names is None else json.dumps(names)


def create_endpoint(
    conn: Connection, account_id: int, body: CreateWebhook, *, now: datetime, allow_private: bool
) -> Row:
    """A new enabled endpoint with a fresh secret nonce."""
    row = {
        "public_id": new_id("whk"),
        "account_id": account_id,
        "url": policy.validate_url(body.url, allow_private),
        "description": body.description,
        "events": policy.stored_events(policy.validate_events(body.events)),
        "link_ids": _names(policy.validate_names("linkIds", body.link_ids)),
        "tags": _names(policy.validate_names("tags", body.tags)),
        "secret_nonce": new_nonce(),
        "is_enabled": 1,
        "created_at": to_iso(now),
        "updated_at": to_iso(now),
    }
    with transaction(conn):
        if len(store.endpoints_of_account(conn, account_id)) >= MAX_ENDPOINTS_PER_ACCOUNT:
            raise ValidationError("url", f"an account has at most {MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints")
        return store.insert_endpoint(conn, row)


def owned(conn: Connection, account_id: int, webhook_id: str) -> Row:
    row = store.endpoint_of_account(conn, account_id, webhook_id)
    if row is None:
        raise NotFoundError(f"No webhook with id {webhook_id} in this account")
    return row


def list_endpoints(conn: Connection, account_id: int, now_ms: int) -> list[Webhook]:
    return [to_webhook(row, now_ms) for row in store.endpoints_of_account(conn, account_id)]


def update_endpoint(
    conn: Connection, account_id: int, webhook_id: str, patch: UpdateWebhook, *, now: datetime, allow_private: bool
) -> Webhook:
    changes: dict[str, object] = {}
    if patch.url is not UNSET:
        changes["url"] = policy.validate_url(patch.url, allow_private)
    if patch.events is not UNSET:
        changes["events"] = policy.stored_events(policy.validate_events(patch.events))
    if patch.description is not UNSET:
        changes["description"] = patch.description
    if patch.link_ids is not UNSET:
        changes["link_ids"] = _names(policy.validate_names("linkIds", patch.link_ids))
    if patch.tags is not UNSET:
        changes["tags"] = _names(policy.validate_names("tags", patch.tags))
    if patch.is_enabled is not UNSET:
        changes["is_enabled"] = int(patch.is_enabled)
        if patch.is_enabled:  # a fresh start: the failures before do not count toward disabling it again
            changes["disabled_reason"] = None
            changes["failing_since_ms"] = None
    if not changes:
        raise ValidationError("body", "send at least one of url, events, description, linkIds, tags, isEnabled")
    changes["updated_at"] = to_iso(now)
    with transaction(conn):
        row = owned(conn, account_id, webhook_id)
        return to_webhook(store.update_endpoint(conn, row["id"], changes), millis(now))


def delete_endpoint(conn: Connection, account_id: int, webhook_id: str) -> None:
    store.delete_endpoint(conn, owned(conn, account_id, webhook_id)["id"])


def rotate_secret(conn: Connection, account_id: int, webhook_id: str, overlap_seconds: int, now: datetime) -> Row:
    """A new nonce; the current one keeps signing beside it for `overlap_seconds`."""
    with transaction(conn):
        row = owned(conn, account_id, webhook_id)
        until = millis(now + timedelta(seconds=overlap_seconds))
        changes = {
            "secret_nonce": new_nonce(),
            "previous_nonce": row["secret_nonce"] if overlap_seconds else None,
            "previous_until_ms": until if overlap_seconds else None,
            "updated_at": to_iso(now),
        }
        return store.update_endpoint(conn, row["id"], changes)


def attempts(conn: Connection, account_id: int, webhook_id: str, limit: int, before: int | None) -> list[Attempt]:
    row = owned(conn, account_id, webhook_id)
    return [
        Attempt(
            id=found["id"],
            event_id=found["event_public_id"],
            event_type=found["type"],
            attempted_at=_stamp(found["ts_ms"]) or "",
            status=found["status"],
            latency_ms=found["latency_ms"],
            response=found["response_head"],
            ok=bool(found["ok"]),
            delivery_state=found["state"],
        )
        for found in store.attempts_of_endpoint(conn, row["id"], min(limit, MAX_LOG_PAGE), before)
    ]


def replay(conn: Connection, account_id: int, webhook_id: str, body: Replay, now: datetime) -> int:
    """Deliver one event again (`eventId`), or every failed delivery (`failed`); returns how many."""
    if (body.event_id is None) == (not body.failed):
        raise ValidationError("body", "send either eventId or failed: true")
    row = owned(conn, account_id, webhook_id)
    if body.failed:
        return store.replay_failed(conn, row["id"], millis(now))
    assert body.event_id is not None
    event = store.event_of_account(conn, account_id, body.event_id)
    if event is None:
        raise NotFoundError(f"No event with id {body.event_id} in this account (events are kept 30 days)")
    store.replay_event(conn, row["id"], event["id"], millis(now))
    return 1


def endpoint_row(conn: Connection, account_id: int, webhook_id: str) -> Row:
    return owned(conn, account_id, webhook_id)


def owner_of(conn: Connection, webhook_id: str) -> int:
    """The account of an endpoint, for operators (the CLI), who act for every account."""
    row = store.endpoint_by_public_id(conn, webhook_id)
    if row is None:
        raise NotFoundError(f"No webhook with id {webhook_id}")
    return row["account_id"]
