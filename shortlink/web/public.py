"""The public shortening page: GET / (the form) and POST /shorten (a link, or the reason not).

Both answer 404 when `[public] enabled` is false. The form is protected from cross-site
posts by a double-submit token: a random value in a SameSite=Strict, HttpOnly cookie
and the same value in the form; a post whose two differ gets the form again.
"""

from __future__ import annotations

import base64
import hmac
import re
import secrets
from urllib.parse import parse_qsl

from litestar import MediaType, Request, Response, post
from litestar.datastructures import Cookie
from litestar.di import NamedDependency
from litestar.exceptions import NotFoundException

from shortlink import qr
from shortlink.application.public import FIELD, PublicShortener
from shortlink.errors import RateLimitedError, ValidationError
from shortlink.links.schema import Link
from shortlink.pages.templated import CONTENT_SECURITY_POLICY, render
from shortlink.web.visitor import MAX_FORM_BYTES, read_request
from shortlink.wiring import Services

CSRF_COOKIE = "shortlink_form"
_TOKEN = re.compile(r"[A-Za-z0-9_-]{43}")  # secrets.token_urlsafe(32)
QR_SIZE = 200
HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
}


def _token_of(request: Request) -> str | None:
    token = request.cookies.get(CSRF_COOKIE, "")
    return token if _TOKEN.fullmatch(token) else None


def _qr_data_uri(short_url: str) -> str:
    image = qr.render(short_url, qr.QrOptions(format="svg", size=QR_SIZE))
    return "data:image/svg+xml;base64," + base64.b64encode(image.content).decode()


def _page(
    request: Request,
    public: PublicShortener,
    *,
    status: int = 200,
    url: str = "",
    error: str = "",
    link: Link | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    """The form (with a result or an error); sets the form's cookie when the visitor has none."""
    token = _token_of(request)
    cookie = None
    if token is None:
        token = secrets.token_urlsafe(32)
        secure = request.url.scheme == "https" or public.hosts.scheme == "https"
        cookie = Cookie(key=CSRF_COOKIE, value=token, path="/", httponly=True, secure=secure, samesite="strict")
    html = render(
        "public.html",
        csrf=token,
        url=url,
        error=error,
        link=link,
        qr=_qr_data_uri(link.short_url) if link else "",
        expires=(link.expires_at or "")[:10] if link else "",
        expire_days=public.expire_days,
    )
    return Response(
        content=html,
        status_code=status,
        media_type=MediaType.HTML,
        headers={**HEADERS, **(headers or {})},
        cookies=[cookie] if cookie else [],
    )


def public_home(services: Services, request: Request) -> Response | None:
    """The signed-out home page when public shortening is on; None when it is off. The
    dashboard's `GET /` can answer with this for signed-out visitors."""
    return _page(request, services.public) if services.public.enabled else None


def _wait(seconds: int) -> str:
    return f"{seconds} seconds" if seconds < 120 else f"{-(-seconds // 60)} minutes"


@post("/shorten", include_in_schema=False, status_code=200)
async def shorten(request: Request, services: NamedDependency[Services]) -> Response:
    public = services.public
    if not public.enabled:
        raise NotFoundException()
    body = await request.body()
    form = dict(parse_qsl(body[:MAX_FORM_BYTES].decode("utf-8", "replace")))
    url = form.get("url", "").strip()
    token = _token_of(request)
    if token is None or not hmac.compare_digest(token.encode(), form.get("csrf", "").encode()):
        return _page(request, public, status=403, url=url, error="The form had expired. Please shorten the URL again.")
    try:
        link = await public.shorten(url, read_request(request.scope, b"\x00"))
    except ValidationError as exc:
        detail = exc.message.removeprefix(f"{exc.field}: ") if exc.field == FIELD else exc.message
        return _page(request, public, status=400, url=url, error=f"This URL {detail}.")
    except RateLimitedError as exc:
        return _page(
            request,
            public,
            status=429,
            url=url,
            error=f"Too many links for now. {exc.message.split(';')[0]}. Try again in {_wait(exc.retry_after)}.",
            headers=exc.headers,
        )
    # A bot or link previewer gets the plain form: no link is made for it.
    return _page(request, public) if link is None else _page(request, public, link=link)
