"""POST /api/v1/links/bulk: many links in one request, a result per item (an extension)."""

from __future__ import annotations

from tests.helpers import error_of


def test_a_hundred_links_are_one_request_with_a_result_each(client, auth):
    items = [{"originalUrl": f"https://example.com/{n}", "title": f"Nº {n} ✓"} for n in range(100)]
    before = client.get("/api/v1/me", headers=auth).headers["X-RateLimit-Remaining"]
    response = client.post("/api/v1/links/bulk", json={"links": items}, headers=auth)
    assert response.status_code == 200, response.text
    results = response.json()["data"]
    assert [(item["index"], item["status"]) for item in results] == [(n, 201) for n in range(100)]
    assert [item["data"]["originalUrl"] for item in results] == [item["originalUrl"] for item in items]
    assert "error" not in results[0]
    # One request against the per-minute limit, a hundred links against the day's.
    assert int(response.headers["X-RateLimit-Remaining"]) == int(before) - 1
    assert client.get("/api/v1/me", headers=auth).json()["data"]["rateLimits"]["linksCreatedToday"] == 100
    assert client.get("/api/v1/links", headers=auth).json()["pagination"]["total"] == 100


def test_each_item_fails_alone_with_the_spec_error_of_a_single_create(client, auth):
    items = [
        {"originalUrl": "https://example.com/ok", "customCode": "mine"},
        {"originalUrl": "ftp://example.com/"},
        {"originalUrl": "https://example.com/again", "customCode": "mine"},
        {"originalUrl": 5},
        {"originalUrl": "https://example.com/x", "colour": "red"},
        {"originalUrl": "https://example.com/admin", "customCode": "admin"},
    ]
    results = client.post("/api/v1/links/bulk", json={"links": items}, headers=auth).json()["data"]
    statuses = [(item["status"], item.get("error", {}).get("code")) for item in results]
    assert statuses == [
        (201, None),
        (400, "VALIDATION_ERROR"),
        (409, "CONFLICT"),
        (400, "VALIDATION_ERROR"),
        (400, "VALIDATION_ERROR"),
        (400, "VALIDATION_ERROR"),
    ]
    single = client.post("/api/v1/links", json=items[1], headers=auth).json()["error"]
    assert results[1]["error"] == single
    assert results[3]["error"]["message"].startswith("originalUrl:")
    assert results[4]["error"]["message"] == "colour: unknown field; it cannot be set here"


def test_the_daily_limit_applies_to_every_link_and_the_request_is_bounded(make_client, new_key):
    client = make_client(limits_links_per_day=3)
    auth = {"Authorization": f"Bearer {new_key()}"}
    items = [{"originalUrl": f"https://example.com/{n}"} for n in range(5)]
    results = client.post("/api/v1/links/bulk", json={"links": items}, headers=auth).json()["data"]
    assert [item["status"] for item in results] == [201, 201, 201, 429, 429]
    assert results[3]["error"]["code"] == "RATE_LIMITED"
    too_many = client.post("/api/v1/links/bulk", json={"links": items * 21}, headers=auth)
    assert too_many.status_code == 400 and error_of(too_many) == "VALIDATION_ERROR"
    assert error_of(client.post("/api/v1/links/bulk", json={"links": []}, headers=auth)) == "VALIDATION_ERROR"
    assert client.post("/api/v1/links/bulk", json={"links": items}).status_code == 401
