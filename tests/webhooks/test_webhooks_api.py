"""The /webhooks extension resource, and link events delivered through the real app to a real
receiver on 127.0.0.1 that verifies every request with the `standardwebhooks` library."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from shortlink.accounts import service as accounts
from tests.conftest import bearer
from tests.support.helpers import error_of, wait_for
from tests.support.receiver import Receiver, running_receiver

PRIVATE_OK = {"fetcher_allow_private_addresses": True}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as running:
        yield running


def add_endpoint(client, auth, url: str, events: list[str], **fields) -> dict:
    response = client.post("/api/v1/webhooks", json={"url": url, "events": events, **fields}, headers=auth)
    assert response.status_code == 201, response.text
    return response.json()["data"]


@pytest.mark.both_backends
def test_endpoints_are_created_read_changed_rotated_and_deleted(make_client, auth, conn, new_key):
    client = make_client()
    created = add_endpoint(client, auth, "https://hooks.example.com/in", ["link.created", "link.clicked"])
    # The contract's shape: an id and a whsec_ secret, shown in this answer only.
    assert created["id"].startswith("whk_") and created["secret"].startswith("whsec_")
    assert created["events"] == ["link.created", "link.clicked"] and created["isEnabled"] is True
    assert created["linkIds"] is None and created["tags"] is None and created["failingSince"] is None
    read = client.get(f"/api/v1/webhooks/{created['id']}", headers=auth).json()["data"]
    assert "secret" not in read and read["url"] == "https://hooks.example.com/in"
    listed = client.get("/api/v1/webhooks", headers=auth).json()["data"]
    assert [item["id"] for item in listed] == [created["id"]]
    # Never stored: neither the secret nor anything it can be read back from alone.
    stored = conn.execute("SELECT * FROM webhook_endpoints").fetchone()
    assert created["secret"] not in [str(value) for value in stored]
    assert created["secret"].removeprefix("whsec_") not in str(list(stored))

    changed = client.patch(
        f"/api/v1/webhooks/{created['id']}",
        json={"events": ["link.deleted", "link.created"], "tags": ["spring"], "description": "CRM"},
        headers=auth,
    ).json()["data"]
    assert changed["events"] == ["link.created", "link.deleted"]  # in the catalogue's order
    assert changed["tags"] == ["spring"] and changed["description"] == "CRM"

    rotated = client.post(f"/api/v1/webhooks/{created['id']}/rotate", json={"overlapSeconds": 3600}, headers=auth)
    assert rotated.status_code == 200, rotated.text
    assert rotated.json()["data"]["secret"].startswith("whsec_")
    assert rotated.json()["data"]["secret"] != created["secret"]
    assert rotated.json()["data"]["previousSecretValidUntil"] is not None

    # Bad input: the spec's envelope, naming the field.
    for body, field in (
        ({"url": "ftp://example.com/", "events": ["link.created"]}, "url"),
        ({"url": "http://127.0.0.1:9/", "events": ["link.created"]}, "url"),
        ({"url": "http://10.1.2.3/", "events": ["link.created"]}, "url"),
        ({"url": "https://example.com/", "events": ["link.exploded"]}, "events"),
        ({"url": "https://example.com/", "events": []}, "events"),
        ({"url": "https://example.com/"}, "events"),
        ({"url": "https://example.com/", "events": ["link.created"], "colour": 1}, "colour"),
    ):
        response = client.post("/api/v1/webhooks", json=body, headers=auth)
        assert response.status_code == 400, (body, response.text)
        assert error_of(response) == "VALIDATION_ERROR" and field in response.json()["error"]["message"], body
    assert error_of(client.patch(f"/api/v1/webhooks/{created['id']}", json={}, headers=auth)) == "VALIDATION_ERROR"
    replay = client.post(f"/api/v1/webhooks/{created['id']}/replay", json={}, headers=auth)
    assert replay.status_code == 400 and error_of(replay) == "VALIDATION_ERROR"

    # Another account sees none of it.
    other = bearer(new_key("other@example.com"))
    for method, path, body in (
        ("GET", "", None),
        ("PATCH", "", {"url": "https://a.example/"}),
        ("DELETE", "", None),
        ("POST", "/rotate", {}),
        ("GET", "/deliveries", None),
        ("POST", "/replay", {"failed": True}),
        ("POST", "/test", None),
    ):
        response = client.request(method, f"/api/v1/webhooks/{created['id']}{path}", headers=other, json=body)
        assert response.status_code == 404 and error_of(response) == "NOT_FOUND", (method, path)
    assert client.get("/api/v1/webhooks", headers=other).json() == {"data": []}

    # Auth and the Pro gate, as for every API resource.
    assert client.get("/api/v1/webhooks").status_code == 401
    accounts.set_subscription(conn, "other@example.com", False)
    assert error_of(client.get("/api/v1/webhooks", headers=other)) == "SUBSCRIPTION_REQUIRED"

    deleted = client.delete(f"/api/v1/webhooks/{created['id']}", headers=auth)
    assert deleted.json() == {"data": {"id": created["id"], "deleted": True}}
    assert client.get(f"/api/v1/webhooks/{created['id']}", headers=auth).status_code == 404

    document = client.get("/api/v1/schema/openapi.json").json()
    for path in ("/api/v1/webhooks", "/api/v1/webhooks/{id}", "/api/v1/webhooks/{id}/deliveries"):
        assert path in document["paths"], path


@pytest.mark.both_backends
@pytest.mark.slow
def test_link_changes_bulk_actions_and_test_events_reach_a_verifying_receiver(make_client, auth, receiver):
    client = make_client(**PRIVATE_OK)
    created = add_endpoint(
        client, auth, receiver.url, ["link.created", "link.updated", "link.deleted", "link.paused", "link.resumed"]
    )
    receiver.secrets = [created["secret"]]

    link = client.post("/api/v1/links", json={"originalUrl": "https://example.com/a"}, headers=auth).json()["data"]
    wait_for(lambda: receiver.count() >= 1, what="link.created")
    first = receiver.received[0]
    assert first.verified_by == [created["secret"]]
    assert first.headers["webhook-id"].startswith("evt_")
    assert first.headers["content-type"] == "application/json"
    # link.created's data is the spec's Link object, exactly as the API answered it.
    assert first.event["type"] == "link.created" and first.event["data"] == link
    assert first.event["timestamp"] == link["createdAt"]

    client.patch(f"/api/v1/links/{link['id']}", json={"title": "Hello"}, headers=auth)
    client.patch(f"/api/v1/links/{link['id']}", json={"isActive": False}, headers=auth)
    wait_for(lambda: receiver.count() >= 3, what="updated and paused")
    assert receiver.types() == ["link.created", "link.updated", "link.paused"]
    assert receiver.verified_events()[1]["data"]["title"] == "Hello"

    # Bulk actions emit the event of every link they touch.
    second = client.post("/api/v1/links", json={"originalUrl": "https://example.com/b"}, headers=auth).json()["data"]
    client.post(
        "/api/v1/links/bulk/actions", json={"action": "resume", "ids": [link["id"], second["id"]]}, headers=auth
    )
    client.post(
        "/api/v1/links/bulk/actions", json={"action": "delete", "ids": [link["id"], second["id"]]}, headers=auth
    )
    wait_for(lambda: receiver.count() >= 8, what="the bulk actions' events")
    # `second` was active already: resuming it changes nothing but updatedAt.
    # Each link's events in order (two links' may interleave).
    per_link: dict[str, list[str]] = {}
    for event in receiver.verified_events():
        per_link.setdefault(event["data"]["id"], []).append(event["type"])
    assert per_link == {
        link["id"]: ["link.created", "link.updated", "link.paused", "link.resumed", "link.deleted"],
        second["id"]: ["link.created", "link.updated", "link.deleted"],
    }
    # Every delivery has its own id (receivers deduplicate by it).
    assert len({item.headers["webhook-id"] for item in receiver.received}) == 8

    # The test event, the log and a replay.
    sent = client.post(f"/api/v1/webhooks/{created['id']}/test", headers=auth)
    assert sent.status_code == 202, sent.text
    test_id = sent.json()["data"]["eventId"]
    wait_for(lambda: receiver.count() >= 9, what="the test event")
    assert receiver.received[-1].headers["webhook-id"] == test_id and receiver.types()[-1] == "webhook.test"
    log = client.get(f"/api/v1/webhooks/{created['id']}/deliveries", headers=auth).json()["data"]
    assert len(log) == 9 and log[0]["eventId"] == test_id
    assert {entry["status"] for entry in log} == {200} and all(entry["ok"] for entry in log)
    assert log[0]["response"] == "thanks" and log[0]["deliveryState"] == "succeeded"
    assert (
        client.get(f"/api/v1/webhooks/{created['id']}/deliveries?limit=2&before={log[1]['id']}", headers=auth).json()[
            "data"
        ]
        == log[2:4]
    )
    replayed = client.post(
        f"/api/v1/webhooks/{created['id']}/replay", json={"eventId": log[-1]["eventId"]}, headers=auth
    )
    assert replayed.json() == {"data": {"replayed": 1}}
    wait_for(lambda: receiver.count() >= 10, what="the replay")
    assert receiver.received[-1].headers["webhook-id"] == log[-1]["eventId"]
    assert receiver.received[-1].body == receiver.received[0].body  # the same event, again
    unknown = client.post(f"/api/v1/webhooks/{created['id']}/replay", json={"eventId": "evt_nope"}, headers=auth)
    assert unknown.status_code == 404
