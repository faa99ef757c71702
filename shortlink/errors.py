"""The errors of the domain, one per error code of the spec.

Domain functions raise these; the web layer turns any of them into the
`{"error": {"code", "message"}}` envelope with the matching status.
"""

from __future__ import annotations

from typing import Literal

# Exactly the spec's error codes: the envelope's `code` is one of these.
ErrorCode = Literal[
    "UNAUTHORIZED", "SUBSCRIPTION_REQUIRED", "VALIDATION_ERROR", "NOT_FOUND", "CONFLICT", "RATE_LIMITED", "INTERNAL"
]


class ShortlinkError(Exception):
    code: ErrorCode = "INTERNAL"
    status = 500

    def __init__(self, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.message = message
        self.headers = headers or {}


class ValidationError(ShortlinkError):
    code: ErrorCode = "VALIDATION_ERROR"
    status = 400

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field


class UnauthorizedError(ShortlinkError):
    code: ErrorCode = "UNAUTHORIZED"
    status = 401

    def __init__(self, message: str):
        # RFC 9110: a 401 names the scheme that would be accepted.
        super().__init__(message, {"WWW-Authenticate": 'Bearer realm="shortlink"'})


class SubscriptionRequiredError(ShortlinkError):
    code: ErrorCode = "SUBSCRIPTION_REQUIRED"
    status = 403


class NotFoundError(ShortlinkError):
    code: ErrorCode = "NOT_FOUND"
    status = 404


class ConflictError(ShortlinkError):
    code: ErrorCode = "CONFLICT"
    status = 409


class RateLimitedError(ShortlinkError):
    code: ErrorCode = "RATE_LIMITED"
    status = 429

    def __init__(self, message: str, retry_after: int, headers: dict[str, str] | None = None):
        super().__init__(message, {**(headers or {}), "Retry-After": str(max(1, retry_after))})
        self.retry_after = max(1, retry_after)


class UnavailableError(ShortlinkError):
    """A shared component (Redis) does not answer: the request may be retried shortly."""

    status = 503

    def __init__(self, message: str):
        super().__init__(message, {"Retry-After": "1"})


def field_error(message: str, whole: str = "body") -> ValidationError:
    """The ValidationError naming the field of a msgspec validation message, for every door
    that decodes with msgspec (API bodies; MCP tool arguments, `whole="arguments"`)."""
    # msgspec: "Expected `bool`, got `str` - at `$.isActive`", "Object contains unknown
    # field `colour`", "Object missing required field `originalUrl`", "Expected `object`, ...".
    text, _, where = message.partition(" - at `$.")
    if where:
        return ValidationError(where.rstrip("`"), text)
    for lead, problem in (
        ("Object contains unknown field `", "unknown field; it cannot be set here"),
        ("Object missing required field `", "is required"),
    ):
        if message.startswith(lead):
            return ValidationError(message[len(lead) :].split("`", 1)[0], problem)
    return ValidationError(whole, f"must be a JSON object ({message.replace(' - at `$`', '')})")
