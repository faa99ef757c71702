"""The spec's error envelope, {"error": {"code", "message"}}, as every HTTP door sends it."""

from __future__ import annotations

import msgspec
from litestar import MediaType, Response

from shortlink.errors import ErrorCode


class ErrorDetail(msgspec.Struct):
    code: ErrorCode
    message: str


class ErrorBody(msgspec.Struct):
    error: ErrorDetail


def envelope_bytes(code: ErrorCode, message: str) -> bytes:
    return msgspec.json.encode(ErrorBody(ErrorDetail(code, message)))


# On every JSON response: a browser must never read it as HTML or script.
NOSNIFF = {"X-Content-Type-Options": "nosniff"}


def error_response(status: int, code: ErrorCode, message: str, headers: dict[str, str] | None = None) -> Response:
    return Response(
        content=envelope_bytes(code, message),
        status_code=status,
        media_type=MediaType.JSON,
        headers={**NOSNIFF, **(headers or {})},
    )
