"""GET/HEAD /@<handle> (a bio page, from memory) and /@<handle>/qr.svg|qr.png (its QR code).

Litestar has no route for a path segment that starts with a literal "@", so these
routes take any top-level segment and answer anything else exactly as an unknown route
(404 in the API's envelope), for every method. Lean like the visitor path: the page's
bytes come from `application.bio.Bio`'s cache, and the headers are read in one pass.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from litestar import Request, Response, route
from litestar.enums import HttpMethod
from litestar.exceptions import MethodNotAllowedException, NotFoundException
from litestar.params import FromPath

from shortlink import qr
from shortlink.application.bio import RenderedPage
from shortlink.client_address import address_of
from shortlink.pages.templated import BIO_CONTENT_SECURITY_POLICY
from shortlink.web.qr import etag_matches
from shortlink.web.visitor import Answer, old_short_path

if TYPE_CHECKING:
    from shortlink.web.asgi import Bound

# The buttons lead only to our own short URLs: the full address of the page goes with a
# tap (as Referer), and the click is labelled with the page it came from.
PAGE_HEADERS = [
    (b"content-type", b"text/html; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"content-security-policy", BIO_CONTENT_SECURITY_POLICY.encode()),
    (b"referrer-policy", b"no-referrer-when-downgrade"),
    (b"x-content-type-options", b"nosniff"),
]
QR_FILES = {"qr.svg": "svg", "qr.png": "png"}
QR_SIZE = 512
ALL_METHODS = list(HttpMethod)


class PageAnswer(Answer):
    """A cached page's bytes, sent as the two ASGI messages (no body for HEAD)."""

    __slots__ = ()

    def __init__(self, page: RenderedPage, head: bool):
        self._start = {
            "type": "http.response.start",
            "status": 200,
            "headers": [*PAGE_HEADERS, (b"content-length", str(len(page.body)).encode())],
        }
        self._body = {"type": "http.response.body", "body": b"" if head else page.body, "more_body": False}


# `/<code>` on a custom domain answers as `/l/<code>` (web.visitor.old_short_path).
OLD_PATH_METHODS = frozenset({"GET", "HEAD", "POST"})


def _handle_of(name: str, method: str) -> str:
    """The handle of a "/@handle" segment; anything else is an unknown route."""
    if not name.startswith("@"):
        raise NotFoundException()
    if method not in ("GET", "HEAD"):
        raise MethodNotAllowedException(headers={"Allow": "GET, HEAD"})
    return name[1:]


def bio_handlers(bound: Bound) -> list:
    """The routes, reading the app's current Bio and trusted proxies from `bound` (web.asgi)."""

    def host_of(request: Request) -> str:
        return request.headers.get("host", "").lower()

    @route("/{name:str}", http_method=ALL_METHODS, include_in_schema=False, status_code=200)
    async def bio_page(request: Request, name: FromPath[str]) -> Answer:
        method = request.scope["method"]
        if not name.startswith("@") and method in OLD_PATH_METHODS and bound.services.hosts.is_custom(host_of(request)):
            return await old_short_path(bound, request, name)  # an imported link's old address
        bio = bound.services.bio
        page = bio.public_page(_handle_of(name, method), host_of(request))
        if page is None:
            return Answer(bound.services.visits.not_found(), head=method == "HEAD")
        if method == "GET":
            headers = request.headers
            client = request.scope.get("client")
            bio.count_view(
                page,
                address_of(client[0] if client else "", headers.get("x-forwarded-for"), bound.trusted_proxies)[0],
                headers.get("user-agent", ""),
                headers.get("sec-ch-ua-platform", ""),
                headers.get("sec-ch-ua-mobile", ""),
            )
        return PageAnswer(page, head=method == "HEAD")

    @route("/{name:str}/{file:str}", http_method=ALL_METHODS, include_in_schema=False, status_code=200)
    async def bio_qr(request: Request, name: FromPath[str], file: FromPath[str]) -> Response:
        handle = _handle_of(name, request.scope["method"])
        page = bound.services.bio.public_page(handle, host_of(request)) if file in QR_FILES else None
        if page is None:
            raise NotFoundException()  # the visitor's 404 page (web.errors)
        image = qr.render(page.url, qr.QrOptions(format=QR_FILES[file], size=QR_SIZE))  # type: ignore[arg-type]
        headers = {"ETag": image.etag, "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
        if etag_matches(request.headers.get("if-none-match"), image.etag):
            return Response(content=b"", status_code=304, headers=headers)
        return Response(content=image.content, media_type=image.media_type, headers=headers)

    return [bio_page, bio_qr]
