"""Tags on links: the extension resource /links/{id}/tags, the `tag` filter, deletion with the link."""

from __future__ import annotations

import json

import pytest

from shortlink.accounts import service as accounts
from tests.conftest import bearer, run_cli
from tests.support.helpers import error_of


def create(client, auth, url: str = "https://example.com/", **fields) -> dict:
    response = client.post("/api/v1/links", json={"originalUrl": url, **fields}, headers=auth)
    assert response.status_code == 201, response.text
    return response.json()["data"]


@pytest.mark.both_backends
def test_tags_are_replaced_read_back_and_filter_the_link_list(client, auth, storage):
    first = create(client, auth, "https://example.com/a")
    second = create(client, auth, "https://example.com/b")
    create(client, auth, "https://example.com/c")
    body = {"tags": [{"name": " spring ", "colour": "#FF8800"}, {"name": "Café ☕"}]}
    response = client.put(f"/api/v1/links/{first['id']}/tags", json=body, headers=auth)
    assert response.status_code == 200, response.text
    assert response.json() == {
        "data": {
            "linkId": first["id"],
            "tags": [{"name": "Café ☕", "colour": "#64748b"}, {"name": "spring", "colour": "#ff8800"}],
        }
    }
    # Without a colour, a name keeps the one the account gives it.
    client.put(f"/api/v1/links/{second['id']}/tags", json={"tags": [{"name": "spring"}]}, headers=auth)
    read = client.get(f"/api/v1/links/{second['id']}/tags", headers=auth).json()["data"]
    assert read["tags"] == [{"name": "spring", "colour": "#ff8800"}]

    listed = client.get("/api/v1/links", params={"tag": "spring"}, headers=auth).json()
    assert [link["id"] for link in listed["data"]] == [second["id"], first["id"]]
    assert listed["pagination"]["total"] == 2
    assert client.get("/api/v1/links", params={"tag": "Café ☕"}, headers=auth).json()["pagination"]["total"] == 1
    assert client.get("/api/v1/links", params={"tag": "SPRING"}, headers=auth).json()["data"] == []
    # The spec's Link object gains no field.
    assert "tags" not in listed["data"][0]
    # The CLI's list takes the same filter.
    result = run_cli("links", "list", "--email", "owner@example.com", "--tag", "spring", "--json", "--db", storage)
    assert [link["id"] for link in json.loads(result.stdout)["data"]] == [second["id"], first["id"]]

    # A colour given again changes the name's colour on every link of the account.
    client.put(
        f"/api/v1/links/{first['id']}/tags", json={"tags": [{"name": "spring", "colour": "#00aa00"}]}, headers=auth
    )
    assert (
        client.get(f"/api/v1/links/{second['id']}/tags", headers=auth).json()["data"]["tags"][0]["colour"] == "#00aa00"
    )
    # An empty list removes them.
    cleared = client.put(f"/api/v1/links/{first['id']}/tags", json={"tags": []}, headers=auth).json()
    assert cleared["data"]["tags"] == []


@pytest.mark.both_backends
def test_tags_go_with_their_link(client, auth, conn):
    link = create(client, auth)
    client.put(f"/api/v1/links/{link['id']}/tags", json={"tags": [{"name": "gone"}]}, headers=auth)
    assert client.delete(f"/api/v1/links/{link['id']}", headers=auth).status_code == 200
    assert conn.execute("SELECT count(*) FROM link_tags").fetchone()[0] == 0
    assert client.get("/api/v1/links", params={"tag": "gone"}, headers=auth).json()["data"] == []


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        ([{"name": "a;b"}], "must not contain"),
        ([{"name": "x\u202ey"}], "control characters"),
        ([{"name": "   "}], "1-40 characters"),
        ([{"name": "dup"}, {"name": "dup "}], "given twice"),
        ([{"name": "c", "colour": "red"}], "#"),
        ([{"name": str(n)} for n in range(21)], "20"),
        ([{"name": "c", "shade": "#000000"}], "shade"),
    ],
)
def test_bad_tags_are_the_spec_validation_error(client, auth, tags, message):
    link = create(client, auth)
    response = client.put(f"/api/v1/links/{link['id']}/tags", json={"tags": tags}, headers=auth)
    assert response.status_code == 400
    assert error_of(response) == "VALIDATION_ERROR"
    assert message in response.json()["error"]["message"]


def test_tags_of_another_accounts_link_are_not_found_and_the_gate_applies(client, auth, new_key, conn):
    other = bearer(new_key("other@example.com"))
    link = create(client, auth)
    for call in (
        lambda headers: client.get(f"/api/v1/links/{link['id']}/tags", headers=headers),
        lambda headers: client.put(f"/api/v1/links/{link['id']}/tags", json={"tags": []}, headers=headers),
    ):
        assert error_of(call(other)) == "NOT_FOUND"
        assert call({}).status_code == 401
        assert "X-RateLimit-Limit" in call(auth).headers
    accounts.set_subscription(conn, "owner@example.com", False)
    assert error_of(client.get(f"/api/v1/links/{link['id']}/tags", headers=auth)) == "SUBSCRIPTION_REQUIRED"
