"""Framework errors leave in the spec's envelope with one of its codes."""
from tests.test_auth_and_me import error_of


def test_unknown_route(client, auth):
    response = client.get("/api/v1/nothing-here", headers=auth)
    assert response.status_code == 404 and error_of(response) == "NOT_FOUND"


def test_wrong_method(client, auth):
    response = client.put("/api/v1/me", headers=auth)
    assert response.status_code == 405 and error_of(response) == "NOT_FOUND"
    assert "PUT" in response.json()["error"]["message"]


def test_malformed_json(client, auth):
    response = client.post("/api/v1/links", headers={**auth, "Content-Type": "application/json"},
                           content=b'{"originalUrl": ')
    assert response.status_code == 400 and error_of(response) == "VALIDATION_ERROR"


def test_wrong_content_type(client, auth):
    response = client.post("/api/v1/links", headers={**auth, "Content-Type": "text/plain"},
                           content=b"originalUrl=https://example.com")
    assert response.status_code in (400, 415) and error_of(response) == "VALIDATION_ERROR"


def test_body_too_large(client, auth):
    response = client.post("/api/v1/links", headers={**auth, "Content-Type": "application/json"},
                           content=b'{"originalUrl": "https://example.com/' + b"a" * 100_000 + b'"}')
    assert response.status_code == 413 and error_of(response) == "VALIDATION_ERROR"


def test_unknown_field_is_named(client, auth):
    response = client.post("/api/v1/links", headers=auth,
                           json={"originalUrl": "https://example.com", "colour": "red"})
    assert response.status_code == 400 and error_of(response) == "VALIDATION_ERROR"
    assert "colour" in response.json()["error"]["message"]


def test_openapi_document_is_served_with_bearer_security(client):
    response = client.get("/api/v1/schema/openapi.json")
    assert response.status_code == 200
    document = response.json()
    assert document["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    assert {"/api/v1/me", "/api/v1/links", "/api/v1/links/{link_id}"} <= set(document["paths"])


def test_oversized_query_string_and_headers_are_refused_in_the_envelope(client, auth):
    for response in (client.get("/api/v1/links?search=" + "a" * 9000, headers=auth),
                     client.get("/l/abc", headers={f"X-Padding-{i}": "v" * 1000 for i in range(40)})):
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "VALIDATION_ERROR"
    assert "query string" in client.get("/l/abc?x=" + "a" * 9000).json()["error"]["message"]
