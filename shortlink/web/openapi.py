"""What the OpenAPI document says beyond Litestar's defaults.

Errors in the envelope, closed request bodies, non-empty change sets, the
rate-limit headers, and a schema path that answers unknown pages in the envelope.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import msgspec
from litestar import Response, Router

# Litestar exports neither: pyproject.toml pins litestar to 2.25.x for them, and
# tests/api/test_openapi_document.py fails if a release moves or changes them.
from litestar._openapi.schema_generation import SchemaCreator
from litestar._openapi.schema_generation.plugins.struct import StructSchemaPlugin
from litestar.openapi import OpenAPIConfig, ResponseSpec
from litestar.openapi.plugins import JsonRenderPlugin
from litestar.openapi.spec import (
    Components,
    OpenAPI,
    OpenAPIHeader,
    OpenAPIResponse,
    Operation,
    Schema,
    SecurityScheme,
)
from litestar.openapi.spec.enums import OpenAPIType
from litestar.typing import FieldDefinition

from shortlink.http.envelope import ErrorBody, error_response

_DESCRIPTIONS = {
    400: "VALIDATION_ERROR: invalid body or query parameters, or a query string or header block over its size limit",
    401: "UNAUTHORIZED: missing, invalid or revoked API key",
    403: "SUBSCRIPTION_REQUIRED: the key's account has no active Pro subscription",
    404: "NOT_FOUND: no link with this id in the account",
    409: "CONFLICT: customCode is already taken",
    429: "RATE_LIMITED: rate limit exceeded; see Retry-After",
    500: "INTERNAL: unexpected server error",
}

_INTEGER = Schema(type=OpenAPIType.INTEGER)
# On every response to an identified key (all but 401), errors included; not
# promised as required: a request refused for its size never reaches the limiter.
RATE_LIMIT_HEADERS = {
    "X-RateLimit-Limit": OpenAPIHeader(schema=_INTEGER, description="Requests per minute of the key"),
    "X-RateLimit-Remaining": OpenAPIHeader(schema=_INTEGER, description="Requests left now"),
    "X-RateLimit-Reset": OpenAPIHeader(schema=_INTEGER, description="Seconds until the bucket is full again"),
}
RETRY_AFTER = OpenAPIHeader(
    schema=Schema(type=OpenAPIType.INTEGER, minimum=1), required=True, description="Seconds until a retry can succeed"
)


def error_responses(*statuses: int) -> dict[int, ResponseSpec]:
    """The given statuses, plus 400 and the four every endpoint can return.

    400 is always there: every route answers it for an oversized query string
    or header block, and without it Litestar documents its own 400 body (not the
    envelope) for any operation that has parameters.
    """
    return {
        status: ResponseSpec(data_container=ErrorBody, description=_DESCRIPTIONS[status], generate_examples=False)
        for status in sorted({*statuses, 400, 401, 403, 429, 500})
    }


class ClosedStructSchemaPlugin(StructSchemaPlugin):
    """Request structs say what msgspec enforces: `additionalProperties: false` for
    `forbid_unknown_fields`, and `minProperties` for a struct with `min_fields`
    (a change set that must change something).

    Litestar's own struct plugin leaves both out of the document, which then
    promises that extra fields, or none at all, are accepted.
    """

    def to_openapi_schema(self, field_definition: FieldDefinition, schema_creator: SchemaCreator) -> Schema:
        schema = super().to_openapi_schema(field_definition, schema_creator)
        info = msgspec.inspect.type_info(field_definition.type_)
        if isinstance(info, msgspec.inspect.StructType) and info.forbid_unknown_fields:
            schema.additional_properties = False
        schema.min_properties = getattr(field_definition.type_, "min_fields", None)
        return schema


WWW_AUTHENTICATE = OpenAPIHeader(
    schema=Schema(type=OpenAPIType.STRING), required=True, description='Bearer realm="shortlink"'
)


def _with_headers(operation: Operation) -> None:
    for status, response in (operation.responses or {}).items():
        if not isinstance(response, OpenAPIResponse):
            continue
        if status == "401":
            response.headers = {**(response.headers or {}), "WWW-Authenticate": WWW_AUTHENTICATE}
            continue
        # A new dict: a handler's own header dict may be shared between its responses.
        extra = {**RATE_LIMIT_HEADERS, **({"Retry-After": RETRY_AFTER} if status == "429" else {})}
        response.headers = {**(response.headers or {}), **extra}


class _ApiDocument(OpenAPI):
    """The document Litestar builds, plus the response headers it has no place for:
    `ResponseSpec` (the error responses) cannot declare headers."""

    def to_schema(self) -> dict[str, Any]:
        for path_item in (self.paths or {}).values():
            for method in ("get", "put", "post", "delete", "patch"):
                if (operation := getattr(path_item, method)) is not None:
                    _with_headers(operation)
        return super().to_schema()


class _ApiOpenAPIConfig(OpenAPIConfig):
    def to_openapi_schema(self) -> OpenAPI:
        document = super().to_openapi_schema()
        return _ApiDocument(**{field.name: getattr(document, field.name) for field in fields(document)})


def openapi_config(path: str) -> OpenAPIConfig:
    """The OpenAPI document, served at `path`/openapi.json."""

    def not_found_in_the_envelope(response: Response) -> Response:
        # Litestar answers an unknown page under the schema path with an HTML 404 page.
        if response.status_code != 404:
            return response
        return error_response(404, "NOT_FOUND", f"No such page: the OpenAPI document is {path}/openapi.json")

    return _ApiOpenAPIConfig(
        title="shortlink API",
        version="1.0.0",
        path=path,
        components=Components(
            security_schemes={
                "bearerAuth": SecurityScheme(
                    type="http", scheme="bearer", description="Authorization: Bearer sl_live_<32 characters>"
                ),
            }
        ),
        # The JSON document only: the HTML viewers Litestar offers (Redoc, Swagger, Elements,
        # RapiDoc) load their scripts from CDNs, unpinned, and Swagger invites pasting a key.
        render_plugins=[JsonRenderPlugin()],
        openapi_router=Router(
            path, route_handlers=[], include_in_schema=False, after_request=not_found_in_the_envelope
        ),
    )
