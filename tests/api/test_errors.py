"""Framework errors leave in the spec's envelope with one of its codes."""

import pytest

from tests.support.helpers import error_of


def test_unknown_route(client, auth):
    response = client.get("/api/v1/nothing-here", headers=auth)
    assert response.status_code == 404 and error_of(response) == "NOT_FOUND"


def test_wrong_method(client, auth):
    response = client.put("/api/v1/me", headers=auth)
    assert response.status_code == 405 and error_of(response) == "NOT_FOUND"
    assert "PUT" in response.json()["error"]["message"]


def test_malformed_json(client, auth):
    response = client.post(
        "/api/v1/links", headers={**auth, "Content-Type": "application/json"}, content=b'{"originalUrl": '
    )
    assert response.status_code == 400 and error_of(response) == "VALIDATION_ERROR"


def test_wrong_content_type(client, auth):
    response = client.post(
        "/api/v1/links", headers={**auth, "Content-Type": "text/plain"}, content=b"originalUrl=https://example.com"
    )
    assert response.status_code in (400, 415) and error_of(response) == "VALIDATION_ERROR"


def test_body_too_large(client, auth):
    response = client.post(
        "/api/v1/links",
        headers={**auth, "Content-Type": "application/json"},
        content=b'{"originalUrl": "https://example.com/' + b"a" * 100_000 + b'"}',
    )
    assert response.status_code == 413 and error_of(response) == "VALIDATION_ERROR"
    assert "64 KiB" in response.json()["error"]["message"]


def test_unknown_field_is_named(client, auth):
    response = client.post("/api/v1/links", headers=auth, json={"originalUrl": "https://example.com", "colour": "red"})
    assert response.status_code == 400 and error_of(response) == "VALIDATION_ERROR"
    assert "colour" in response.json()["error"]["message"]


def test_openapi_document_is_served_with_bearer_security(client):
    response = client.get("/api/v1/schema/openapi.json")
    assert response.status_code == 200
    document = response.json()
    assert document["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    assert {"/api/v1/me", "/api/v1/links", "/api/v1/links/{id}"} <= set(document["paths"])


def test_oversized_query_string_and_headers_are_refused_in_the_envelope(client, auth):
    for response in (
        client.get("/api/v1/links?search=" + "a" * 9000, headers=auth),
        client.get("/l/abc", headers={f"X-Padding-{i}": "v" * 1000 for i in range(40)}),
    ):
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "VALIDATION_ERROR"
    assert "query string" in client.get("/l/abc?x=" + "a" * 9000).json()["error"]["message"]


def test_json_sent_with_another_content_type_is_a_400_on_post_and_patch(client, auth):
    link = client.post("/api/v1/links", headers=auth, json={"originalUrl": "https://example.com/a"}).json()["data"]
    for method, url, body in [
        ("POST", "/api/v1/links", b'{"originalUrl": "https://example.com/b"}'),
        ("PATCH", f"/api/v1/links/{link['id']}", b'{"title": "Changed"}'),
    ]:
        for content_type in ("text/plain", "application/x-www-form-urlencoded", "application/jsonx"):
            response = client.request(method, url, headers={**auth, "Content-Type": content_type}, content=body)
            assert response.status_code == 400 and error_of(response) == "VALIDATION_ERROR", (method, content_type)
            message = response.json()["error"]["message"]
            assert message.startswith("Content-Type:") and "application/json" in message
    # Neither a second link nor a new title: the body was not used.
    assert client.get("/api/v1/links", headers=auth).json()["pagination"]["total"] == 1
    assert client.get(f"/api/v1/links/{link['id']}", headers=auth).json()["data"]["title"] is None
    # Without a Content-Type the body is read as JSON.
    response = client.post("/api/v1/links", headers=auth, content=b'{"originalUrl": "https://example.com/d"}')
    assert response.status_code == 201, response.text
    # Parameters of the JSON media type are fine.
    response = client.post(
        "/api/v1/links",
        headers={**auth, "Content-Type": "Application/JSON; charset=utf-8"},
        content=b'{"originalUrl": "https://example.com/c"}',
    )
    assert response.status_code == 201


@pytest.mark.parametrize("body", [b"", b"   ", b"\r\n"])
def test_an_empty_body_says_so(client, auth, body):
    link = client.post("/api/v1/links", headers=auth, json={"originalUrl": "https://example.com/a"}).json()["data"]
    for method, url in [("POST", "/api/v1/links"), ("PATCH", f"/api/v1/links/{link['id']}")]:
        response = client.request(method, url, headers={**auth, "Content-Type": "application/json"}, content=body)
        assert response.status_code == 400 and error_of(response) == "VALIDATION_ERROR", method
        message = response.json()["error"]["message"]
        assert message.startswith("body:") and "empty" in message and "JSON" in message


@pytest.mark.parametrize(
    "body",
    [
        b'{"title": "ok \xff\xfe"}',  # bytes that are never UTF-8, inside a string
        b'{"title": "caf\xe9"}',  # Latin-1
        b'{"title": "\xc3"}',  # a truncated sequence
        b"\xff\xfe{\x00}\x00",  # UTF-16 with a byte-order mark
    ],
)
def test_a_body_that_is_not_utf8_is_a_400_saying_so(client, auth, body):
    link = client.post("/api/v1/links", headers=auth, json={"originalUrl": "https://example.com/a"}).json()["data"]
    for method, url in [("POST", "/api/v1/links"), ("PATCH", f"/api/v1/links/{link['id']}")]:
        response = client.request(method, url, headers={**auth, "Content-Type": "application/json"}, content=body)
        assert response.status_code == 400 and error_of(response) == "VALIDATION_ERROR", (method, response.text)
        message = response.json()["error"]["message"]
        assert message.startswith("body:") and "not UTF-8" in message, message


def test_unknown_pages_under_the_schema_path_are_404_in_the_envelope(client):
    for path in ("/api/v1/schema/nonexistent", "/api/v1/schema/openapi.yamlx", "/api/v1/schema/a/b"):
        response = client.get(path)
        assert response.status_code == 404 and error_of(response) == "NOT_FOUND", path
        assert response.headers["content-type"].startswith("application/json")
    assert "/api/v1/schema/openapi.json" in client.get("/api/v1/schema/nonexistent").json()["error"]["message"]
    assert client.get("/api/v1/schema/openapi.json").status_code == 200


def test_only_the_json_document_is_served_no_html_viewer(client):
    # The viewers Litestar offers load unpinned CDN scripts; Swagger invites pasting a key.
    for page in ("redoc", "swagger", "elements", "rapidoc", "stoplight", "scalar", "oauth2-redirect.html"):
        response = client.get(f"/api/v1/schema/{page}")
        assert response.status_code == 404 and error_of(response) == "NOT_FOUND", page
    for path in ("/api/v1/schema", "/api/v1/schema/openapi.json"):
        response = client.get(path)
        assert response.status_code == 200 and response.headers["content-type"] == "application/vnd.oai.openapi+json"
        assert response.json()["openapi"].startswith("3.") and "<script" not in response.text


def test_a_browser_on_an_unknown_page_gets_a_page_and_api_clients_json(client):
    browser = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
    for path in ["/links/x/y", "/nothing<script>"]:
        response = client.get(path, headers=browser)
        assert response.status_code == 404
        assert response.headers["content-type"].startswith("text/html")
        assert "Link not found" in response.text and "<script>" not in response.text
        assert client.get(path).json()["error"]["code"] == "NOT_FOUND"
    assert client.get("/api/v1/nothing", headers=browser).json()["error"]["code"] == "NOT_FOUND"
