"""The outbox: events written in the transaction of the change that causes them, fanned out to
the endpoints that want them, and each delivery attempt settled (retry, fail, disable).

Plain functions over a connection: the application layer runs each in one `Database.write`,
tests call them directly.
"""

from __future__ import annotations

import json
import secrets
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import msgspec
from msgspec import UNSET

from shortlink.links import service
from shortlink.links.schema import CreateLink, Link, UpdateLink
from shortlink.storage import Connection, Row, transaction
from shortlink.storage import links as link_store
from shortlink.storage import tags as tag_store
from shortlink.storage import webhooks as store
from shortlink.times import to_iso
from shortlink.webhooks import policy
from shortlink.webhooks.events import CAP_REACHED, CLICKED, TEST_EVENT, ClickedData, ClickLabels
from shortlink.webhooks.secrets import secret_of

if TYPE_CHECKING:  # the CLI's commands use the outbox without sending, and without httpx
    from shortlink.webhooks.send import DeliveryResult


def new_event_id(at_ms: int) -> str:
    """`evt_`, the event's time in 12 hex digits of milliseconds, then 80 random bits: the ids
    sort by time, so their unique index grows at its end (storage.webhooks.event_public_id_sql)."""
    return f"evt_{at_ms:012x}{secrets.token_hex(10)}"


def millis(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _tag_names(conn: Connection, link_pk: int) -> list[str]:
    return [name for name, _colour in tag_store.tags_of_links(conn, [link_pk]).get(link_pk, [])]


def emit_link(conn: Connection, account_id: int, event_type: str, link: Link, now: datetime) -> bool:
    """Add a link event to the outbox, in the caller's transaction, when an enabled endpoint of
    the account subscribes to its type (otherwise nothing is written). Returns whether it did."""
    if not store.subscribed(conn, account_id, event_type):
        return False
    row = link_store.link_of_account(conn, account_id, link.id)
    link_pk = None if row is None else row["id"]
    store.insert_event(
        conn,
        {
            "public_id": new_event_id(millis(now)),
            "account_id": account_id,
            "type": event_type,
            "link_id": link_pk,
            "link_public_id": link.id,
            "link_tags": json.dumps([] if link_pk is None else _tag_names(conn, link_pk)),
            "created_ms": millis(now),
            "data": msgspec.json.encode(link).decode(),
        },
    )
    return True


def create_link(conn: Connection, account_id: int, body: CreateLink, *, now: datetime, **options) -> Link:
    """`links.service.create_link` and its `link.created` event, in one transaction."""
    with transaction(conn):
        link = service.create_link(conn, account_id, body, now=now, **options)
        emit_link(conn, account_id, "link.created", link, now)
    return link


def change_events(was_active: bool, patch: UpdateLink) -> list[str]:
    """The events of a PATCH: paused / resumed when it turns the link off / on, and updated when
    it changes anything else (or nothing at all: updatedAt moves)."""
    events = []
    if patch.is_active is not UNSET and patch.is_active != was_active:
        events.append("link.resumed" if patch.is_active else "link.paused")
    others = (patch.title, patch.expires_at, patch.password)
    if any(value is not UNSET for value in others) or not events:
        events.append("link.updated")
    return events


def update_link(
    conn: Connection, account_id: int, link_id: str, patch: UpdateLink, *, now: datetime, **options
) -> tuple[Link, str]:
    with transaction(conn):
        before = service.owned_row(conn, account_id, link_id)
        link, code = service.update_link(conn, account_id, link_id, patch, now=now, **options)
        for event_type in change_events(bool(before["is_active"]), patch):
            emit_link(conn, account_id, event_type, link, now)
    return link, code


def delete_link(conn: Connection, account_id: int, link_id: str, *, base: str, now: datetime) -> str:
    """The `link.deleted` event carries the link as it was."""
    with transaction(conn):
        link = service.get_link(conn, account_id, link_id, base)
        emit_link(conn, account_id, "link.deleted", link, now)
        return service.delete_link(conn, account_id, link_id)


def dispatch(conn: Connection, now_ms: int, base_for: Callable[[int], str], limit: int = 2000) -> int:
    """Fan the oldest waiting events out to a delivery per enabled endpoint that wants each;
    an event a click batch wrote (a click, a cap reached) gets its link now. The batch's links,
    tags, deliveries and marks are read and written a statement each, not one per event.
    Returns how many events were taken."""
    with transaction(conn):
        events = store.waiting_events(conn, limit)
        if not events:
            return 0
        by_account: dict[int, list[_Wants]] = defaultdict(list)
        for endpoint in store.enabled_endpoints_of(conn, sorted({event["account_id"] for event in events})):
            by_account[endpoint["account_id"]].append(_Wants(endpoint))
        late = sorted({event["link_id"] for event in events if event["type"] in (CLICKED, CAP_REACHED)})
        links = link_store.links_by_pk(conn, late)
        tags = {
            link_pk: [name for name, _colour in pairs] for link_pk, pairs in tag_store.tags_of_links(conn, late).items()
        }
        encoded: dict[int, Link] = {}
        plain: list[int] = []
        completed: list[tuple[str, str, int]] = []
        deliveries: list[tuple[int, int, int]] = []
        for event in events:
            link_public_id = event["link_public_id"]
            link_tags: list[str] = [] if event["link_tags"] is None else json.loads(event["link_tags"])
            if event["type"] in (CLICKED, CAP_REACHED):
                row = links.get(event["link_id"])
                if row is None:  # deleted since the click: its history is gone, and so is this event
                    plain.append(event["id"])
                    continue
                if row["id"] not in encoded:
                    encoded[row["id"]] = service.to_link(row, base_for(event["account_id"]))
                link = encoded[row["id"]]
                link_public_id, link_tags = row["public_id"], tags.get(row["id"], [])
                if event["type"] == CLICKED:
                    labels = msgspec.json.decode(event["data"], type=ClickLabels)
                    data = msgspec.json.encode(ClickedData(link, labels)).decode()
                else:
                    data = msgspec.json.encode(link).decode()
                completed.append((data, json.dumps(link_tags), event["id"]))
            else:
                plain.append(event["id"])
            for wants in by_account[event["account_id"]]:
                if wants(event["type"], link_public_id, link_tags):
                    deliveries.append((event["id"], wants.endpoint_id, now_ms))
        store.add_deliveries(conn, deliveries)
        store.finish_dispatches(conn, plain, completed)
    return len(events)


class _Wants:
    """An endpoint's subscription, parsed once per dispatch."""

    def __init__(self, endpoint: Row):
        self.endpoint_id, self.account_id = endpoint["id"], endpoint["account_id"]
        self.link_ids = None if endpoint["link_ids"] is None else json.loads(endpoint["link_ids"])
        self.tags = None if endpoint["tags"] is None else json.loads(endpoint["tags"])
        self.events = frozenset(policy.events_of(endpoint["events"]))

    def __call__(self, event_type: str, link_public_id: str | None, link_tags: list[str]) -> bool:
        return policy.matches(self.events, self.link_ids, self.tags, event_type, link_public_id, link_tags)


def emit_expired(conn: Connection, now: datetime, base_for: Callable[[int], str]) -> int:
    """A `link.expired` event for each link whose expiry passed since the last sweep, once: the
    sweep's mark moves in the same transaction. The first sweep only sets the mark."""
    until = to_iso(now)
    with transaction(conn):
        mark = store.expiry_mark(conn)
        if mark is None or mark >= until:
            if mark is None:
                store.set_expiry_mark(conn, until)
            return 0
        rows = store.links_expired_between(conn, mark, until)
        for row in rows:
            link = service.to_link(row, base_for(row["account_id"]))
            emit_link(conn, row["account_id"], "link.expired", link, now)
        store.set_expiry_mark(conn, until)
    return len(rows)


def add_test_event(conn: Connection, endpoint: Row, now: datetime) -> str:
    """A `webhook.test` event with its delivery to this one endpoint."""
    public_id = new_event_id(millis(now))
    data = {"message": "A test event from shortlink", "webhookId": endpoint["public_id"]}
    with transaction(conn):
        event_id = store.insert_event(
            conn,
            {
                "public_id": public_id,
                "account_id": endpoint["account_id"],
                "type": TEST_EVENT,
                "created_ms": millis(now),
                "data": json.dumps(data),
                "dispatched": 1,
            },
        )
        store.add_delivery(conn, event_id, endpoint["id"], millis(now))
    return public_id


def settle(conn: Connection, due: Row, outcome: DeliveryResult, now_ms: int) -> bool:
    """Record an attempt and what follows from it: success; a retry on the backoff schedule; a
    failed delivery past the retry window; the endpoint disabled once it has failed for the
    whole window without a success. Returns whether the endpoint was disabled."""
    with transaction(conn):
        store.record_attempts(conn, [_attempt(due, outcome, now_ms)])
        attempts = due["attempts"] + 1
        if outcome.ok:
            store.settle_delivery(conn, due["delivery_id"], "succeeded", attempts, now_ms, due["first_failed_ms"])
            store.endpoint_succeeded(conn, due["endpoint_id"])
            return False
        first_failed = due["first_failed_ms"] or now_ms
        at = policy.next_attempt_ms(attempts, first_failed, now_ms)
        state = "failed" if at is None else "pending"
        store.settle_delivery(conn, due["delivery_id"], state, attempts, at or now_ms, first_failed)
        since = store.endpoint_failed(conn, due["endpoint_id"], now_ms)
        if policy.should_disable(since, now_ms):
            reason = f"failing without a success since {to_iso(datetime.fromtimestamp(since / 1000, UTC))}"
            store.disable_endpoint(conn, due["endpoint_id"], reason, to_iso(datetime.fromtimestamp(now_ms / 1000, UTC)))
            return True
    return False


def secrets_of(due: Row, key: bytes, now_ms: int) -> list[str]:
    found = [secret_of(key, due["secret_nonce"])]
    if due["previous_nonce"] and (due["previous_until_ms"] or 0) > now_ms:
        found.append(secret_of(key, due["previous_nonce"]))
    return found


def forget_old(conn: Connection, now_ms: int, limit: int) -> int:
    return store.delete_before(conn, now_ms - policy.RETENTION_MS, limit)


def claim(conn: Connection, now_ms: int, lease_ms: int, limit: int, per_link: int) -> list[Row]:
    return store.claim_due(conn, now_ms, lease_ms, limit, per_link)


def renew(conn: Connection, delivery_ids: Sequence[int], until_ms: int) -> None:
    store.renew(conn, delivery_ids, until_ms)


def settle_all(conn: Connection, settled: list[tuple[Row, DeliveryResult, int]], released: Sequence[int] = ()) -> int:
    """The attempts of a round, in one transaction: successes recorded together (a statement
    each for the log, the deliveries and their endpoints), each failure as `settle` does; the
    deliveries claimed but not sent given back. The attempts of a delivery deleted meanwhile
    (its endpoint deleted by its account) are dropped, every other one kept: one account's
    change never makes another's events go out again. Returns how many endpoints were disabled."""
    with transaction(conn):
        kept = store.still_there(
            conn, [due["endpoint_id"] for due, _, _ in settled], [due["delivery_id"] for due, _, _ in settled]
        )
        settled = [entry for entry in settled if entry[0]["delivery_id"] in kept]
        succeeded = [(due, outcome, at) for due, outcome, at in settled if outcome.ok]
        store.record_attempts(conn, [_attempt(due, outcome, at) for due, outcome, at in succeeded])
        store.settle_successes(conn, [(due["attempts"] + 1, at, due["delivery_id"]) for due, _, at in succeeded])
        for endpoint_id in sorted({due["endpoint_id"] for due, _, _ in succeeded}):
            store.endpoint_succeeded(conn, endpoint_id)
        disabled = sum(settle(conn, due, outcome, at) for due, outcome, at in settled if not outcome.ok)
        store.release(conn, released)
        return disabled


def _attempt(due: Row, outcome: DeliveryResult, at: int) -> dict:
    return {
        "delivery_id": due["delivery_id"],
        "endpoint_id": due["endpoint_id"],
        "ts_ms": at,
        "status": outcome.status,
        "latency_ms": outcome.latency_ms,
        "response_head": outcome.head,
        "ok": int(outcome.ok),
    }
