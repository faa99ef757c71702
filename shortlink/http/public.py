"""The public shortening form, which two doors answer with: the dashboard's `GET /` for a
signed-out visitor (`public_home`) and the ASGI app's `POST /shorten` (web.public).

The form is protected from cross-site posts by a double-submit token: a random value in a
SameSite=Strict, HttpOnly cookie and the same value in the form; a post whose two differ
gets the form again.
"""

from __future__ import annotations

import base64
import re
import secrets

from litestar import MediaType, Request, Response
from litestar.datastructures import Cookie

from shortlink import qr
from shortlink.application.public import PublicShortener
from shortlink.links.schema import Link
from shortlink.pages.templated import CONTENT_SECURITY_POLICY, render
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


def token_of(request: Request) -> str | None:
    token = request.cookies.get(CSRF_COOKIE, "")
    return token if _TOKEN.fullmatch(token) else None


def _qr_data_uri(short_url: str) -> str:
    image = qr.render(short_url, qr.QrOptions(format="svg", size=QR_SIZE))
    return "data:image/svg+xml;base64," + base64.b64encode(image.content).decode()


def form_page(
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
    token = token_of(request)
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
    return form_page(request, services.public) if services.public.enabled else None
