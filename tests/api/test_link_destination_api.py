"""GET, PUT and DELETE /api/v1/links/{id}/destination through the real app: everyone sent to
another address as the rules document's one rule for everyone, the spec's Link unchanged, the
change kept in the link's history, validation in the spec's envelope, the gate."""

from __future__ import annotations

import pytest

from shortlink.accounts import service as accounts
from tests.conftest import bearer
from tests.support.helpers import error_of

ORIGINAL = "https://example.com/printed"


def create(client, auth, url: str = ORIGINAL) -> dict:
    response = client.post("/api/v1/links", json={"originalUrl": url}, headers=auth)
    assert response.status_code == 201, response.text
    return response.json()["data"]


def visit(client, link: dict) -> str:
    response = client.get(f"/l/{link['shortCode']}", follow_redirects=False)
    assert response.status_code == 302, response.text
    return response.headers["location"]


@pytest.mark.both_backends
def test_everyone_goes_to_the_new_address_then_back_and_the_history_keeps_both(client, auth):
    link = create(client, auth)
    path = f"/api/v1/links/{link['id']}/destination"
    assert visit(client, link) == ORIGINAL  # cached before the change: the change must reach the cache

    first = client.get(path, headers=auth).json()["data"]
    assert first == {"url": ORIGINAL, "since": link["createdAt"], "originalUrl": ORIGINAL, "history": []}

    moved = client.put(path, json={"url": "https://example.org/new"}, headers=auth)
    assert moved.status_code == 200, moved.text
    data = moved.json()["data"]
    assert data["url"] == "https://example.org/new" and data["originalUrl"] == ORIGINAL
    assert data["history"] == [{"at": data["since"], "url": "https://example.org/new", "door": "api"}]
    assert visit(client, link) == "https://example.org/new"
    # The spec's Link object is as it was; the rules show the one rule for everyone.
    now = client.get(f"/api/v1/links/{link['id']}", headers=auth).json()["data"]
    assert {**now, "clickCount": 0} == link  # the visit above may be counted by now
    rules = client.get(f"/api/v1/links/{link['id']}/rules", headers=auth).json()["data"]["rules"]
    assert [(rule["conditions"], rule["url"]) for rule in rules] == [([], "https://example.org/new")]

    again = client.put(path, json={"url": "https://example.net/later"}, headers=auth).json()["data"]
    assert [change["url"] for change in again["history"]] == ["https://example.net/later", "https://example.org/new"]
    assert visit(client, link) == "https://example.net/later"

    back = client.delete(path, headers=auth)
    assert back.status_code == 200, back.text
    data = back.json()["data"]
    assert data["url"] == ORIGINAL and data["since"] == data["history"][0]["at"]
    assert [change["url"] for change in data["history"]] == [
        ORIGINAL,
        "https://example.net/later",
        "https://example.org/new",
    ]
    assert visit(client, link) == ORIGINAL
    assert client.get(path, headers=auth).json()["data"] == data
    assert client.get(f"/api/v1/links/{link['id']}/rules", headers=auth).json()["data"]["rules"] == []


def test_limits_are_kept_and_a_rule_for_everyone_set_through_the_rules_counts_as_a_change(client, auth):
    link = create(client, auth)
    rules, path = f"/api/v1/links/{link['id']}/rules", f"/api/v1/links/{link['id']}/destination"
    client.put(rules, json={"rules": [{"url": "https://example.org/by-rules"}], "maxClicks": 50}, headers=auth)
    data = client.get(path, headers=auth).json()["data"]
    assert data["url"] == "https://example.org/by-rules" and data["history"][0]["url"] == data["url"]
    client.put(path, json={"url": "https://example.org/new"}, headers=auth)
    client.delete(path, headers=auth)
    assert client.get(rules, headers=auth).json()["data"]["maxClicks"] == 50


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"url": "ftp://example.com/x"}, "url: "),
        ({"url": "https://sho.rt/l/{code}"}, "url: "),
        ({"url": "https://example.com", "extra": 1}, "extra"),
        ({}, "url"),
    ],
)
def test_a_bad_address_is_the_spec_validation_error(client, auth, body, message):
    link = create(client, auth)
    body = {
        name: value.format(code=link["shortCode"]) if isinstance(value, str) else value for name, value in body.items()
    }
    response = client.put(f"/api/v1/links/{link['id']}/destination", json=body, headers=auth)
    assert response.status_code == 400, response.text
    assert error_of(response) == "VALIDATION_ERROR"
    assert message in response.json()["error"]["message"]
    assert client.get(f"/api/v1/links/{link['id']}/destination", headers=auth).json()["data"]["history"] == []


def test_a_blocked_host_is_refused(make_client, api_key):
    client, auth = make_client(public_blocked_hosts=["blocked.example"]), bearer(api_key)
    link = create(client, auth)
    response = client.put(
        f"/api/v1/links/{link['id']}/destination", json={"url": "https://www.blocked.example/x"}, headers=auth
    )
    assert error_of(response) == "VALIDATION_ERROR"
    assert response.json()["error"]["message"] == "url: leads to blocked.example, which this service does not link to"


def test_rules_by_condition_are_not_silently_made_unreachable(client, auth):
    link = create(client, auth)
    phones = {"conditions": [{"type": "device", "values": ["phone"]}], "url": "https://example.com/phone"}
    client.put(f"/api/v1/links/{link['id']}/rules", json={"rules": [phones]}, headers=auth)
    path = f"/api/v1/links/{link['id']}/destination"
    response = client.put(path, json={"url": "https://example.org/new"}, headers=auth)
    assert error_of(response) == "VALIDATION_ERROR"
    assert "remove them from the link's rules first" in response.json()["error"]["message"]
    assert client.delete(path, headers=auth).json()["data"]["url"] == ORIGINAL  # nothing to undo
    rules = client.get(f"/api/v1/links/{link['id']}/rules", headers=auth).json()["data"]["rules"]
    assert [rule["url"] for rule in rules] == ["https://example.com/phone"]


def test_another_accounts_link_is_not_found_and_the_gate_applies(client, auth, new_key, conn):
    other = bearer(new_key("other@example.com"))
    link = create(client, auth)
    path = f"/api/v1/links/{link['id']}/destination"
    for call in (
        lambda headers: client.get(path, headers=headers),
        lambda headers: client.put(path, json={"url": "https://example.org/new"}, headers=headers),
        lambda headers: client.delete(path, headers=headers),
    ):
        assert error_of(call(other)) == "NOT_FOUND"
        assert call({}).status_code == 401
        assert "X-RateLimit-Limit" in call(auth).headers
    accounts.set_subscription(conn, "owner@example.com", False)
    assert error_of(client.get(path, headers=auth)) == "SUBSCRIPTION_REQUIRED"
    schema = client.get("/api/v1/schema/openapi.json").json()
    assert {"get", "put", "delete"} <= set(schema["paths"]["/api/v1/links/{id}/destination"])
