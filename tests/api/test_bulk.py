"""POST /api/v1/links/bulk: many links in one request, a result per item (an extension)."""

from __future__ import annotations

from shortlink.storage.clicks import StoredClick, encode_batch, write_batch
from tests.conftest import bearer
from tests.support.helpers import error_of


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


def create_many(client, auth, count: int) -> list[dict]:
    links = []
    for start in range(0, count, 100):
        items = [{"originalUrl": f"https://example.com/{n}"} for n in range(start, min(count, start + 100))]
        links += [
            item["data"]
            for item in client.post("/api/v1/links/bulk", json={"links": items}, headers=auth).json()["data"]
        ]
    return links


def record_clicks(conn, links: list[dict]) -> None:
    """One human click per link, through the real batch writer (raw rows and rollups)."""
    rows = {row["public_id"]: row for row in conn.execute("SELECT id, account_id, public_id FROM links")}
    batch = [
        StoredClick(
            rows[link["id"]]["id"],
            rows[link["id"]]["account_id"],
            1_700_000_000_000,
            "2023-11-14",
            "desktop",
            "Chrome",
            "Linux",
            "DE",
            "Direct",
            "None",
            "ua",
            n,
            0,
        )
        for n, link in enumerate(links)
    ]
    assert write_batch(conn, encode_batch(batch)) == set()


def test_bulk_delete_of_a_thousand_links_removes_them_with_their_history_at_once(make_client, auth, conn):
    client = make_client(limits_links_per_day=2000)
    links = create_many(client, auth, 1000)
    record_clicks(conn, links)
    assert client.get(f"/l/{links[0]['shortCode']}", follow_redirects=False).status_code == 302  # cached now
    other = client.post("/api/v1/links", json={"originalUrl": "https://example.com/stays"}, headers=auth).json()["data"]
    ids = [link["id"] for link in links]
    response = client.post("/api/v1/links/bulk/actions", json={"action": "delete", "ids": ids}, headers=auth)
    assert response.status_code == 200
    assert [(item["index"], item["id"], item["status"]) for item in response.json()["data"]] == [
        (n, link_id, 200) for n, link_id in enumerate(ids)
    ]
    assert client.get(f"/l/{links[0]['shortCode']}", follow_redirects=False).status_code == 404
    for table in ("click_rows", "link_days", "link_dimensions", "link_visitors"):
        assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table
    assert conn.execute("SELECT coalesce(sum(clicks), 0) FROM account_days").fetchone()[0] == 0
    assert [link["id"] for link in client.get("/api/v1/links", headers=auth).json()["data"]] == [other["id"]]
    # Deleted already: each is the single DELETE's 404.
    again = client.post("/api/v1/links/bulk/actions", json={"action": "delete", "ids": ids[:2]}, headers=auth)
    assert [item["error"]["code"] for item in again.json()["data"]] == ["NOT_FOUND", "NOT_FOUND"]


def test_bulk_pause_resume_tag_and_untag(client, auth, new_key):
    links = create_many(client, auth, 3)
    ids = [link["id"] for link in links]
    foreign = client.post(
        "/api/v1/links", json={"originalUrl": "https://example.com/theirs"}, headers=bearer(new_key("b@example.com"))
    ).json()["data"]

    def act(**body):
        response = client.post("/api/v1/links/bulk/actions", json=body, headers=auth)
        assert response.status_code == 200, response.text
        return [(item["status"], item.get("error", {}).get("code")) for item in response.json()["data"]]

    assert act(action="pause", ids=[*ids, foreign["id"]]) == [(200, None)] * 3 + [(404, "NOT_FOUND")]
    assert client.get(f"/l/{links[0]['shortCode']}", follow_redirects=False).status_code != 302
    assert client.get("/api/v1/links", params={"isActive": "false"}, headers=auth).json()["pagination"]["total"] == 3
    assert act(action="resume", ids=ids[:1]) == [(200, None)]
    assert client.get(f"/l/{links[0]['shortCode']}", follow_redirects=False).status_code == 302

    assert (
        act(action="tag", ids=ids[:2], tags=[{"name": "q4", "colour": "#00aa00"}, {"name": "client"}])
        == [(200, None)] * 2
    )
    assert act(action="tag", ids=ids[1:], tags=[{"name": "q4"}]) == [(200, None)] * 2
    tagged = client.get(f"/api/v1/links/{ids[1]}/tags", headers=auth).json()["data"]["tags"]
    assert tagged == [{"name": "client", "colour": "#64748b"}, {"name": "q4", "colour": "#00aa00"}]
    assert client.get("/api/v1/links", params={"tag": "q4"}, headers=auth).json()["pagination"]["total"] == 3
    assert act(action="untag", ids=ids, tags=[{"name": "q4"}]) == [(200, None)] * 3
    assert client.get("/api/v1/links", params={"tag": "q4"}, headers=auth).json()["data"] == []
    assert client.get(f"/api/v1/links/{ids[1]}/tags", headers=auth).json()["data"]["tags"] == [
        {"name": "client", "colour": "#64748b"}
    ]

    for body in ({"action": "tag", "ids": ids}, {"action": "pause", "ids": ids, "tags": [{"name": "x"}]}):
        response = client.post("/api/v1/links/bulk/actions", json=body, headers=auth)
        assert response.status_code == 400 and error_of(response) == "VALIDATION_ERROR"
    response = client.post("/api/v1/links/bulk/actions", json={"action": "archive", "ids": ids}, headers=auth)
    assert error_of(response) == "VALIDATION_ERROR"
