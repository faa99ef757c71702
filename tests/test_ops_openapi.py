"""The OpenAPI document of the analytics and QR operations: path `{id}`, integer bounds, error envelope."""
from __future__ import annotations

from shortlink import qr
from shortlink.analytics.ranges import DEFAULT_DAYS, MAX_DAYS

OPERATIONS = ["/api/v1/links/{id}/analytics", "/api/v1/analytics", "/api/v1/links/{id}/qr"]


def resolve(document: dict, schema: dict) -> dict:
    return document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]] if "$ref" in schema else schema


def test_analytics_and_qr_operations_document_integer_bounds_and_the_error_envelope(client):
    document = client.get("/api/v1/schema/openapi.json").json()
    for path in OPERATIONS:
        operation = document["paths"][path]["get"]
        parameters = {p["name"]: p for p in operation["parameters"]}
        assert [name for name, p in parameters.items() if p["in"] == "path"] == (["id"] if "{id}" in path else [])
        # A 400 for a bad value is the {"error": {"code", "message"}} envelope, as documented.
        body = resolve(document, operation["responses"]["400"]["content"]["application/json"]["schema"])
        assert {"code", "message"} <= set(resolve(document, body["properties"]["error"])["properties"])
        integers = {"days": (1, MAX_DAYS, DEFAULT_DAYS)} if "analytics" in path else {
            "size": (qr.MIN_SIZE, qr.MAX_SIZE, qr.DEFAULT_SIZE),
            "margin": (qr.MIN_MARGIN, qr.MAX_MARGIN, qr.DEFAULT_MARGIN)}
        for name, (low, high, default) in integers.items():
            schema = parameters[name]["schema"]
            assert (schema["type"], schema["minimum"], schema["maximum"], schema["default"]) == \
                ("integer", low, high, default), (path, name)
            assert "maxLength" not in schema and "oneOf" not in schema
