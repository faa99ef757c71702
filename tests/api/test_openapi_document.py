"""The served OpenAPI document says what the spec says: operations, error envelope, headers, field types."""

from __future__ import annotations

import pytest

from shortlink import qr
from shortlink.analytics.ranges import DEFAULT_DAYS, MAX_DAYS

# The spec's error codes, exactly (Errors part).
SPEC_ERROR_CODES = [
    "UNAUTHORIZED",
    "SUBSCRIPTION_REQUIRED",
    "VALIDATION_ERROR",
    "NOT_FOUND",
    "CONFLICT",
    "RATE_LIMITED",
    "INTERNAL",
]
RATE_LIMIT_HEADERS = {"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"}
# Every operation's documented statuses: the spec's own per endpoint, the four that apply
# everywhere (401, 403, 429, 500), and 400 for an oversized query string or header block.
OPERATIONS = {
    ("GET", "/api/v1/me"): {"200", "400", "401", "403", "429", "500"},
    ("POST", "/api/v1/links"): {"201", "400", "401", "403", "409", "429", "500"},
    ("GET", "/api/v1/links"): {"200", "400", "401", "403", "429", "500"},
    ("GET", "/api/v1/links/{id}"): {"200", "400", "401", "403", "404", "429", "500"},
    ("PATCH", "/api/v1/links/{id}"): {"200", "400", "401", "403", "404", "429", "500"},
    ("DELETE", "/api/v1/links/{id}"): {"200", "400", "401", "403", "404", "429", "500"},
    ("GET", "/api/v1/links/{id}/analytics"): {"200", "400", "401", "403", "404", "429", "500"},
    ("GET", "/api/v1/analytics"): {"200", "400", "401", "403", "429", "500"},  # "No 404 is defined"
    ("GET", "/api/v1/links/{id}/qr"): {"200", "304", "400", "401", "403", "404", "429", "500"},
    # Extensions beside the spec's operations (bulk create, tags).
    ("POST", "/api/v1/links/bulk"): {"200", "400", "401", "403", "429", "500"},
    ("POST", "/api/v1/links/bulk/actions"): {"200", "400", "401", "403", "429", "500"},
    ("GET", "/api/v1/links/{id}/analytics/csv"): {"200", "400", "401", "403", "404", "429", "500"},
    ("GET", "/api/v1/analytics/csv"): {"200", "400", "401", "403", "429", "500"},
    # The raw clicks of a range, as JSON lines.
    ("GET", "/api/v1/analytics/clicks"): {"200", "400", "401", "403", "429", "500"},
    ("GET", "/api/v1/links/{id}/tags"): {"200", "400", "401", "403", "404", "429", "500"},
    ("PUT", "/api/v1/links/{id}/tags"): {"200", "400", "401", "403", "404", "429", "500"},
    # Link rules.
    ("GET", "/api/v1/links/{id}/rules"): {"200", "400", "401", "403", "404", "429", "500"},
    ("PUT", "/api/v1/links/{id}/rules"): {"200", "400", "401", "403", "404", "429", "500"},
    ("POST", "/api/v1/links/{id}/rules/test"): {"200", "400", "401", "403", "404", "429", "500"},
    ("GET", "/api/v1/links/{id}/destination"): {"200", "400", "401", "403", "404", "429", "500"},
    ("PUT", "/api/v1/links/{id}/destination"): {"200", "400", "401", "403", "404", "429", "500"},
    ("DELETE", "/api/v1/links/{id}/destination"): {"200", "400", "401", "403", "404", "429", "500"},
    ("GET", "/api/v1/links/{id}/rules/analytics"): {"200", "400", "401", "403", "404", "429", "500"},
    # App links: the account's apps, the app a link opens, what the visitor path decided.
    ("GET", "/api/v1/apps"): {"200", "400", "401", "403", "429", "500"},
    ("POST", "/api/v1/apps"): {"201", "400", "401", "403", "409", "429", "500"},
    ("GET", "/api/v1/apps/{id}"): {"200", "400", "401", "403", "404", "429", "500"},
    ("DELETE", "/api/v1/apps/{id}"): {"200", "400", "401", "403", "404", "429", "500"},
    ("GET", "/api/v1/links/{id}/app"): {"200", "400", "401", "403", "404", "429", "500"},
    ("PUT", "/api/v1/links/{id}/app"): {"200", "400", "401", "403", "404", "429", "500"},
    ("GET", "/api/v1/links/{id}/app/analytics"): {"200", "400", "401", "403", "404", "429", "500"},
    # Webhooks.
    ("POST", "/api/v1/webhooks"): {"201", "400", "401", "403", "429", "500"},
    ("GET", "/api/v1/webhooks"): {"200", "400", "401", "403", "429", "500"},
    ("GET", "/api/v1/webhooks/{id}"): {"200", "400", "401", "403", "404", "429", "500"},
    ("PATCH", "/api/v1/webhooks/{id}"): {"200", "400", "401", "403", "404", "429", "500"},
    ("DELETE", "/api/v1/webhooks/{id}"): {"200", "400", "401", "403", "404", "429", "500"},
    ("POST", "/api/v1/webhooks/{id}/rotate"): {"200", "400", "401", "403", "404", "429", "500"},
    ("GET", "/api/v1/webhooks/{id}/deliveries"): {"200", "400", "401", "403", "404", "429", "500"},
    ("POST", "/api/v1/webhooks/{id}/replay"): {"200", "400", "401", "403", "404", "429", "500"},
    ("POST", "/api/v1/webhooks/{id}/test"): {"202", "400", "401", "403", "404", "429", "500"},
    ("POST", "/api/v1/domains"): {"201", "400", "401", "403", "409", "429", "500"},
    ("GET", "/api/v1/domains"): {"200", "400", "401", "403", "429", "500"},
    ("GET", "/api/v1/domains/{id}"): {"200", "400", "401", "403", "404", "429", "500"},
    ("PATCH", "/api/v1/domains/{id}"): {"200", "400", "401", "403", "404", "429", "500"},
    ("DELETE", "/api/v1/domains/{id}"): {"200", "400", "401", "403", "404", "429", "500"},
    ("POST", "/api/v1/domains/{id}/verify"): {"200", "400", "401", "403", "404", "429", "500"},
}
METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


@pytest.fixture
def document(client) -> dict:
    response = client.get("/api/v1/schema/openapi.json")
    assert response.status_code == 200
    return response.json()


def operations(document: dict) -> dict[tuple[str, str], dict]:
    return {
        (method.upper(), path): operation
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    }


def resolve(document: dict, schema: dict) -> dict:
    ref = schema.get("$ref")
    return document["components"]["schemas"][ref.removeprefix("#/components/schemas/")] if ref else schema


def test_exactly_the_spec_operations_and_the_documented_extensions_with_their_statuses(document):
    found = operations(document)
    assert set(found) == set(OPERATIONS)
    assert all(path.startswith("/api/v1/") for _, path in found)
    for key, operation in found.items():
        assert set(operation["responses"]) == OPERATIONS[key], key
        assert operation["security"] == [{"bearerAuth": []}], key


def test_every_error_response_is_the_envelope(document):
    for key, operation in operations(document).items():
        for status, response in operation["responses"].items():
            if int(status) < 400:
                continue
            assert set(response["content"]) == {"application/json"}, (key, status)
            schema = response["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/ErrorBody"}, (key, status)
            assert response["description"].startswith(
                (
                    "VALIDATION_ERROR",
                    "UNAUTHORIZED",
                    "SUBSCRIPTION_REQUIRED",
                    "NOT_FOUND",
                    "CONFLICT",
                    "RATE_LIMITED",
                    "INTERNAL",
                )
            )
    body = resolve(document, {"$ref": "#/components/schemas/ErrorBody"})
    assert body["type"] == "object" and body["required"] == ["error"] and set(body["properties"]) == {"error"}
    detail = resolve(document, body["properties"]["error"])
    assert sorted(detail["required"]) == ["code", "message"] and set(detail["properties"]) == {"code", "message"}
    assert detail["properties"]["message"]["type"] == "string"
    code = detail["properties"]["code"]
    assert code["type"] == "string" and code["enum"] == SPEC_ERROR_CODES


def test_the_error_codes_in_the_document_are_the_ones_the_api_answers_with(client, auth):
    answered = {
        client.get("/api/v1/me").json()["error"]["code"],
        client.get("/api/v1/links/lnk_missing", headers=auth).json()["error"]["code"],
        client.get("/api/v1/links?limit=0", headers=auth).json()["error"]["code"],
    }
    assert answered == {"UNAUTHORIZED", "NOT_FOUND", "VALIDATION_ERROR"}
    assert answered <= set(SPEC_ERROR_CODES)


def test_rate_limit_headers_and_retry_after_are_documented(document):
    for key, operation in operations(document).items():
        responses = operation["responses"]
        assert {"401", "429"} <= set(responses), key
        retry_after = responses["429"]["headers"]["Retry-After"]
        assert retry_after["required"] is True, key
        assert retry_after["schema"]["type"] == "integer" and retry_after["schema"]["minimum"] == 1
        for status, response in responses.items():
            headers = response.get("headers", {})
            if status == "401":  # no key identified: no bucket to report, the scheme named
                assert not RATE_LIMIT_HEADERS & set(headers), key
                assert headers["WWW-Authenticate"]["required"] is True, key
                continue
            assert set(headers) >= RATE_LIMIT_HEADERS, (key, status)
            for name in RATE_LIMIT_HEADERS:
                assert headers[name]["schema"]["type"] == "integer" and headers[name]["required"] is False
            if status != "429":
                assert "Retry-After" not in headers, (key, status)


def test_the_documented_headers_are_the_ones_sent(client, auth):
    response = client.get("/api/v1/me", headers=auth)
    assert {name.lower() for name in RATE_LIMIT_HEADERS} <= set(response.headers.keys())
    assert "x-ratelimit-limit" not in client.get("/api/v1/me").headers


def test_link_fields_have_the_spec_types(document):
    link = resolve(document, {"$ref": "#/components/schemas/Link"})["properties"]
    assert [value for value in link["source"]["enum"] if value is not None] == [
        "DASHBOARD",
        "API",
        "MCP",
        "PUBLIC",
        "BIO",
    ]
    assert None in link["source"]["enum"]  # "string or null"
    for name in ("createdAt", "updatedAt", "expiresAt"):
        assert link[name]["format"] == "date-time", name
    for name in ("shortUrl", "originalUrl"):
        assert link[name] == {"type": "string", "format": "uri"}, name
    assert {"type": "null"} in link["expiresAt"]["oneOf"]
    update = resolve(document, {"$ref": "#/components/schemas/UpdateLink"})
    assert update["minProperties"] == 1 and update["additionalProperties"] is False
    assert set(update["properties"]) == {"title", "isActive", "expiresAt", "password"}
    create = resolve(document, {"$ref": "#/components/schemas/CreateLink"})
    assert "minProperties" not in create and create["required"] == ["originalUrl"]
    deleted = resolve(document, {"$ref": "#/components/schemas/DeletedLink"})
    assert deleted["properties"]["deleted"] == {"type": "boolean", "const": True}
    assert sorted(deleted["required"]) == ["deleted", "id"]


def test_per_link_paths_name_their_parameter_id(document):
    assert "link_id" not in str(document["paths"])
    for (method, path), operation in operations(document).items():
        names = [parameter["name"] for parameter in operation.get("parameters", []) if parameter["in"] == "path"]
        assert names == (["id"] if "/{id}" in path else []), (method, path)
        if names:
            assert path.startswith(
                ("/api/v1/links/{id}", "/api/v1/apps/{id}", "/api/v1/webhooks/{id}", "/api/v1/domains/{id}")
            )


def test_analytics_times_and_days_carry_their_formats(document):
    schemas = document["components"]["schemas"]
    formats = {
        ("RangeOut", "from"): "date-time",
        ("RangeOut", "to"): "date-time",
        ("DayClicks", "date"): "date",
        ("HourClicks", "hour"): "date-time",
        ("RecentClick", "createdAt"): "date-time",
        ("TopUrl", "createdAt"): "date-time",
        ("UrlSummary", "createdAt"): "date-time",
    }
    for (schema, field), wanted in formats.items():
        assert schemas[schema]["properties"][field].get("format") == wanted, (schema, field)
    # The spec's AccountAnalytics: LinkAnalytics without url and clicksByHour, plus three fields.
    link = set(schemas["LinkAnalytics"]["properties"])
    account = set(schemas["AccountAnalytics"]["properties"])
    assert account == link - {"url", "clicksByHour"} | {"totalUrls", "activeUrls", "topUrls"}


def test_integer_query_parameters_read_as_text_are_documented_as_integers(document):
    # days, size and margin are parsed from text (so "7.0" and "1e3" are refused),
    # yet the document gives their integer type, bounds and default.
    integers = {
        ("GET", "/api/v1/links/{id}/analytics"): {"days": (1, MAX_DAYS, DEFAULT_DAYS)},
        ("GET", "/api/v1/analytics"): {"days": (1, MAX_DAYS, DEFAULT_DAYS)},
        ("GET", "/api/v1/links/{id}/qr"): {
            "size": (qr.MIN_SIZE, qr.MAX_SIZE, qr.DEFAULT_SIZE),
            "margin": (qr.MIN_MARGIN, qr.MAX_MARGIN, qr.DEFAULT_MARGIN),
        },
    }
    for key, wanted in integers.items():
        parameters = {p["name"]: p for p in operations(document)[key]["parameters"]}
        for name, (low, high, default) in wanted.items():
            schema = parameters[name]["schema"]
            assert (schema["type"], schema["minimum"], schema["maximum"], schema["default"]) == (
                "integer",
                low,
                high,
                default,
            ), (key, name)
            assert "maxLength" not in schema and "oneOf" not in schema
