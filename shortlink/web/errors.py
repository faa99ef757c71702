"""The one exception handler: every error leaves in the error envelope (shortlink.http.envelope)."""

from __future__ import annotations

import logging

from litestar import MediaType, Request, Response
from litestar.exceptions import (
    HTTPException,
    MethodNotAllowedException,
    NotFoundException,
    ValidationException,
)

from shortlink.errors import ShortlinkError
from shortlink.http.envelope import error_response

log = logging.getLogger("shortlink")


def _visitor_not_found(request: Request) -> Response:
    """A visitor path that is no short code (/l/a/b) or bio page gets the visitor's 404 page,
    which names nothing from the request, rather than the API's JSON echoing the path."""
    reply = request.app.state.services.visits.not_found()
    return Response(content=reply.body, status_code=reply.status, media_type=MediaType.HTML, headers=reply.headers)


def _wants_a_page(request: Request) -> bool:
    """Visitor paths always get a page; any other path outside the API and MCP gets one
    when a browser asks for HTML (a mistyped dashboard address), and JSON otherwise."""
    path = request.scope["path"]
    if path == "/l" or path.startswith(("/l/", "/@")):
        return True
    if path.startswith(("/api/", "/mcp")):
        return False
    return "text/html" in request.headers.get("accept", "")


def _camel(name: str) -> str:
    # The API's names are camelCase; Litestar reports the Python parameter name.
    head, *rest = str(name).split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _validation_message(exc: ValidationException) -> str:
    """Litestar lists the failures of query and path parameters in `extra`; name each.
    (Bodies are checked before Litestar reads them: http.bounds.check_json_body.)"""
    parts = [
        f"{_camel(item['key'])}: {item.get('message', 'invalid value')}"
        if item.get("key")
        else str(item.get("message", "invalid value"))
        for item in (exc.extra if isinstance(exc.extra, list) else [])
        if isinstance(item, dict)
    ]
    detail = exc.detail if exc.detail and not exc.detail.startswith("Validation failed") else ""
    return "; ".join(parts) or detail or "Invalid request"


def handle_exception(request: Request, exc: Exception) -> Response:
    if isinstance(exc, ShortlinkError):
        return error_response(exc.status, exc.code, exc.message, exc.headers)
    if isinstance(exc, ValidationException):
        return error_response(400, "VALIDATION_ERROR", _validation_message(exc))
    if isinstance(exc, NotFoundException):
        if _wants_a_page(request):
            return _visitor_not_found(request)
        # The path is not repeated: a reply echoing what anyone can put in a link is a
        # place to plant text under this service's name.
        return error_response(404, "NOT_FOUND", f"Nothing at this {request.method} address")
    if isinstance(exc, MethodNotAllowedException):
        return error_response(405, "NOT_FOUND", f"{request.method} is not allowed at this address", exc.headers)
    if isinstance(exc, HTTPException) and 400 <= exc.status_code < 500:
        message = exc.detail or "Invalid request"
        if exc.status_code == 413:
            limit = request.route_handler.resolve_request_max_body_size()
            message = f"Request body too large: at most {(limit or 0) // 1024} KiB"
        return error_response(exc.status_code, "VALIDATION_ERROR", message, exc.headers)
    # The scope's path, not request.url: building that parses the Host header, which may be
    # what failed in the first place.
    log.exception("unhandled error on %s %s", request.method, request.scope["path"])
    return error_response(500, "INTERNAL", "Unexpected server error; it has been logged")
