"""What the OpenAPI document says beyond Litestar's defaults: errors in the envelope, closed request bodies."""
from __future__ import annotations

import msgspec
from litestar._openapi.schema_generation import SchemaCreator
# Not re-exported publicly; litestar is pinned below 3.
from litestar._openapi.schema_generation.plugins.struct import StructSchemaPlugin
from litestar.openapi import ResponseSpec
from litestar.openapi.spec import Schema
from litestar.typing import FieldDefinition

from shortlink.web.errors import ErrorBody

_DESCRIPTIONS = {
    400: "VALIDATION_ERROR: invalid body or query parameters",
    401: "UNAUTHORIZED: missing, invalid or revoked API key",
    403: "SUBSCRIPTION_REQUIRED: the key's account has no active Pro subscription",
    404: "NOT_FOUND: no link with this id in the account",
    409: "CONFLICT: customCode is already taken",
    429: "RATE_LIMITED: rate limit exceeded; see Retry-After",
    500: "INTERNAL: unexpected server error",
}


def error_responses(*statuses: int) -> dict[int, ResponseSpec]:
    """The given statuses plus the four every endpoint can return."""
    return {
        status: ResponseSpec(data_container=ErrorBody, description=_DESCRIPTIONS[status])
        for status in sorted({*statuses, 401, 403, 429, 500})
    }


class ClosedStructSchemaPlugin(StructSchemaPlugin):
    """Request structs that reject unknown fields say so: `additionalProperties: false`.

    Litestar's own struct plugin leaves msgspec's `forbid_unknown_fields` out of
    the document, which then promises that extra fields are accepted.
    """

    def to_openapi_schema(self, field_definition: FieldDefinition, schema_creator: SchemaCreator) -> Schema:
        schema = super().to_openapi_schema(field_definition, schema_creator)
        if msgspec.inspect.type_info(field_definition.type_).forbid_unknown_fields:
            schema.additional_properties = False
        return schema
