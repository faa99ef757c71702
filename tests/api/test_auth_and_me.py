import json

import pytest

from tests.conftest import bearer, run_cli
from tests.support.helpers import error_of


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": ""},
        {"Authorization": "Bearer"},
        {"Authorization": "Basic dXNlcjpwYXNz"},
        {"Authorization": "Bearer sl_live_short"},
        {"Authorization": "Bearer sl_live_" + "A" * 32},  # well-formed, unknown
        {"Authorization": "Bearer sk_live_" + "A" * 32},  # wrong prefix
        {"Authorization": ("Bearer sl_live_" + "é" * 32).encode()},
    ],
)
def test_missing_malformed_or_unknown_keys_are_401(client, headers):
    response = client.get("/api/v1/me", headers=headers)
    assert response.status_code == 401
    assert error_of(response) == "UNAUTHORIZED"
    assert response.headers["www-authenticate"].startswith("Bearer ")  # the scheme that would do


def test_every_api_route_is_protected(client):
    for method, path in [
        ("GET", "/api/v1/links"),
        ("POST", "/api/v1/links"),
        ("GET", "/api/v1/links/x"),
        ("PATCH", "/api/v1/links/x"),
        ("DELETE", "/api/v1/links/x"),
    ]:
        response = client.request(method, path, json={"title": "x"} if method in ("POST", "PATCH") else None)
        assert response.status_code == 401, (method, path)


def test_me_returns_the_account_of_the_key(client, new_key):
    key = new_key("Owner@Example.com", name="Owner")
    response = client.get("/api/v1/me", headers=bearer(key))
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"  # email and key: never kept in a cache
    me = response.json()["data"]
    assert set(me) == {"user", "key", "subscription", "rateLimits"}
    assert me["user"]["email"] == "Owner@Example.com" and me["user"]["name"] == "Owner"
    assert me["user"]["id"].startswith("usr_")
    assert me["key"]["id"].startswith("key_")
    assert key.startswith(me["key"]["prefix"]) and len(me["key"]["prefix"]) < len(key) // 2
    assert me["subscription"] == {"isActive": True, "currentPeriodEnd": None, "cancelAtPeriodEnd": False}
    limits = me["rateLimits"]
    assert limits["requestsPerMinute"] == 60 and limits["linksPerDay"] == 1000
    assert limits["linksCreatedToday"] == 0 and limits["remaining"] == 59


def test_key_format_and_hash_only_storage(conn, new_key):
    key = new_key()
    assert key.startswith("sl_live_") and len(key) == len("sl_live_") + 32
    stored = [tuple(row) for row in conn.execute("SELECT * FROM api_keys")]
    assert key not in json.dumps(stored)


def test_cli_changes_apply_to_the_running_server_on_the_next_request(client, db_path):
    created = json.loads(
        run_cli("key", "create", "--email", "cli@example.com", "--name", "CLI", "--json", "--db", str(db_path)).stdout
    )
    assert set(created) == {"key", "keyId", "userId", "email"}
    headers = bearer(created["key"])
    assert client.get("/api/v1/me", headers=headers).json()["data"]["key"]["id"] == created["keyId"]

    run_cli("subscription", "set", "--email", "cli@example.com", "--inactive", "--db", str(db_path))
    response = client.get("/api/v1/me", headers=headers)
    assert response.status_code == 403 and error_of(response) == "SUBSCRIPTION_REQUIRED"

    run_cli("subscription", "set", "--email", "cli@example.com", "--active", "--db", str(db_path))
    assert client.get("/api/v1/me", headers=headers).status_code == 200

    listing = run_cli("key", "list", "--email", "cli@example.com", "--db", str(db_path)).stdout
    assert created["keyId"] in listing and "active" in listing and created["key"] not in listing

    run_cli("key", "revoke", created["keyId"], "--db", str(db_path))
    response = client.get("/api/v1/me", headers=headers)
    assert response.status_code == 401 and error_of(response) == "UNAUTHORIZED"
    assert "revoked" in run_cli("key", "list", "--email", "cli@example.com", "--db", str(db_path)).stdout


def test_cli_errors_are_one_line_messages(db_path):
    result = run_cli("key", "revoke", "key_nope", "--db", str(db_path), check=False)
    assert result.returncode == 2 and "no active key" in result.stderr and "Traceback" not in result.stderr
    result = run_cli("subscription", "set", "--email", "x@y.z", "--active", "--db", str(db_path), check=False)
    assert result.returncode == 2 and "no account" in result.stderr


def test_second_key_of_an_account_shares_the_account(client, new_key):
    first, second = new_key("same@example.com"), new_key("same@example.com")
    a = client.get("/api/v1/me", headers=bearer(first)).json()["data"]
    b = client.get("/api/v1/me", headers=bearer(second)).json()["data"]
    assert a["user"]["id"] == b["user"]["id"] and a["key"]["id"] != b["key"]["id"]


def test_rate_limit_61st_request_is_429_and_other_keys_are_unaffected(client, new_key):
    key, other = new_key("a@example.com"), new_key("b@example.com")
    responses = [client.get("/api/v1/me", headers=bearer(key)) for _ in range(61)]
    assert all(r.status_code == 200 for r in responses[:60])
    assert responses[0].headers["x-ratelimit-limit"] == "60"
    assert responses[0].headers["x-ratelimit-remaining"] == "59"
    assert responses[59].headers["x-ratelimit-remaining"] == "0"
    assert int(responses[0].headers["x-ratelimit-reset"]) >= 1
    limited = responses[60]
    assert limited.status_code == 429 and error_of(limited) == "RATE_LIMITED"
    assert int(limited.headers["retry-after"]) >= 1
    assert limited.headers["x-ratelimit-remaining"] == "0"
    assert client.get("/api/v1/me", headers=bearer(other)).status_code == 200


def test_rate_limit_cannot_be_dodged_with_forwarding_headers(make_client, new_key):
    client = make_client(limits_requests_per_minute=3)
    key = new_key()
    codes = [
        client.get(
            "/api/v1/me", headers={**bearer(key), "X-Forwarded-For": f"10.0.0.{i}", "X-Real-IP": f"10.1.0.{i}"}
        ).status_code
        for i in range(4)
    ]
    assert codes == [200, 200, 200, 429]


def test_every_json_response_forbids_content_sniffing(client, auth):
    # Without nosniff, a browser may render JSON that echoes client text as HTML.
    for method, path, headers in [
        ("GET", "/api/v1/me", auth),
        ("GET", "/api/v1/me", {}),
        ("GET", "/api/v1/links?limit=5", auth),
        ("GET", "/api/v1/links/lnk_none", auth),
        ("POST", "/api/v1/links", auth),
        ("GET", "/api/v1/nothing/<b>x</b>", auth),
        ("DELETE", "/healthz", {}),
        ("GET", "/healthz", {}),
        ("GET", "/api/v1/schema/openapi.json", {}),
        ("GET", "/api/v1/links?x=" + "a" * 9000, auth),
    ]:
        response = client.request(method, path, headers=headers)
        assert response.headers["content-type"].startswith("application/"), (method, path)
        assert response.headers["x-content-type-options"] == "nosniff", (method, path, response.status_code)
