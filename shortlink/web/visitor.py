"""GET/HEAD /l/<code> and POST /l/<code> (the password form): the hot path.

Kept lean on purpose: no dependency injection, one pass over the raw headers, and
the visit itself in `application.visits.Visits` (resolve → decide → respond → track). This
module only reads the request and sends the reply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import parse_qsl

from litestar import Request, post, route
from litestar.datastructures import Cookie
from litestar.enums import HttpMethod
from litestar.params import FromPath
from litestar.types import HTTPResponseBodyEvent, HTTPResponseStartEvent, Receive, Scope, Send

from shortlink.application.visits import VisitRequest
from shortlink.visits.respond import Reply

if TYPE_CHECKING:
    from shortlink.web.asgi import Bound

MAX_FORM_BYTES = 4096
MAX_USER_AGENT = 512


def read_request(scope: Scope, country_header: bytes) -> VisitRequest:
    """The headers the visitor path reads, picked in one pass."""
    client = scope.get("client")
    request = VisitRequest(client[0] if client else "", scope["query_string"].decode("latin-1"))
    for name, value in scope["headers"]:
        if name == b"user-agent":
            request.user_agent = value.decode("latin-1")[:MAX_USER_AGENT]
        elif name == b"host":
            request.host = value.decode("latin-1").lower()
        elif name == b"referer":
            request.referrer = value.decode("latin-1")[:2048]
        elif name == b"sec-ch-ua-platform":
            request.ch_platform = value.decode("latin-1")
        elif name == b"sec-ch-ua-mobile":
            request.ch_mobile = value.decode("latin-1")
        elif name == b"x-forwarded-for":
            request.forwarded_for = value.decode("latin-1")
        elif name == b"cookie":
            request.cookie = value.decode("latin-1")
        elif name == b"accept-language":
            request.accept_language = value.decode("latin-1")[:MAX_USER_AGENT]
        elif name == country_header:
            request.country = value.decode("latin-1")[:2].upper()
    return request


class Answer:
    """A visitor response, sent as its two ASGI messages.

    Lighter than Litestar's responses, and exact where they are not: a redirect has no
    body and so no Content-Type, and HEAD gets the status and headers GET would get
    (Content-Length included) without the body."""

    __slots__ = ("_body", "_start")

    def __init__(self, reply: Reply, cookie: Cookie | None = None, head: bool = False):
        body = reply.body.encode()
        headers = [(name.lower().encode(), value.encode("latin-1")) for name, value in reply.headers.items()]
        if body:
            headers.append((b"content-type", b"text/html; charset=utf-8"))
        headers.append((b"content-length", str(len(body)).encode()))
        if cookie is not None:
            headers.append(cookie.to_encoded_header())
        self._start: HTTPResponseStartEvent = {
            "type": "http.response.start",
            "status": reply.status,
            "headers": headers,
        }
        self._body: HTTPResponseBodyEvent = {
            "type": "http.response.body",
            "body": b"" if head else body,
            "more_body": False,
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(self._start)
        await send(self._body)


def visitor_handlers(bound: Bound) -> list:
    """The routes, reading the app's current Visits and settings from `bound` (web.asgi)."""

    @route("/l/{code:str}", http_method=[HttpMethod.GET, HttpMethod.HEAD], include_in_schema=False)
    async def visit(request: Request, code: FromPath[str]) -> Answer:
        # The body of answer_visit, inline: the hot path keeps its one await.
        head = request.scope["method"] == "HEAD"
        visitor = read_request(request.scope, bound.country_header)
        return Answer(await bound.services.visits.visit(code, visitor, head=head), head=head)

    @post("/l/{code:str}", include_in_schema=False, status_code=200)
    async def unlock(request: Request, code: FromPath[str]) -> Answer:
        return await answer_unlock(bound, request, code)

    return [visit, unlock]


async def answer_visit(bound: Bound, request: Request, code: str) -> Answer:
    head = request.scope["method"] == "HEAD"
    visitor = read_request(request.scope, bound.country_header)
    return Answer(await bound.services.visits.visit(code, visitor, head=head), head=head)


async def answer_unlock(bound: Bound, request: Request, code: str) -> Answer:
    async def read_password() -> str:
        body = await request.body()
        return dict(parse_qsl(body[:MAX_FORM_BYTES].decode("utf-8", "replace"))).get("password", "")

    visitor = read_request(request.scope, bound.country_header)
    reply, remember = await bound.services.visits.unlock(code, visitor, read_password)
    cookie = None
    if remember is not None:
        cookie = Cookie(
            key=remember.name,
            value=remember.value,
            path=remember.path,
            httponly=True,
            secure=bound.https,
            samesite="lax",
            max_age=remember.max_age,
        )
    return Answer(reply, cookie)


async def old_short_path(bound: Bound, request: Request, code: str) -> Answer:
    """`/<code>` on a connected custom domain: the path other services print
    (bit.ly/CODE, Shlink's and YOURLS' /CODE), answered as `/l/<code>`, so imported links
    keep working once their old domain is connected. Only GET, HEAD and the password form."""
    if request.scope["method"] == "POST":
        return await answer_unlock(bound, request, code)
    return await answer_visit(bound, request, code)
