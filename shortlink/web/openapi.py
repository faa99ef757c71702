"""What the OpenAPI document says about errors: every route can fail in the envelope."""
from __future__ import annotations

from litestar.openapi import ResponseSpec

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
