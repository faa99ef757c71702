"""The public shortening page's POST /shorten: a link, or the reason not, on the form
(shortlink.http.public, which the dashboard's signed-out `GET /` shows). It answers 404 when
`[public] enabled` is false."""

from __future__ import annotations

import hmac
from urllib.parse import parse_qsl

from litestar import Request, Response, post
from litestar.di import NamedDependency
from litestar.exceptions import NotFoundException

from shortlink.application.public import FIELD
from shortlink.errors import RateLimitedError, ValidationError
from shortlink.http.public import form_page, token_of
from shortlink.web.visitor import MAX_FORM_BYTES, read_request
from shortlink.wiring import Services


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
    token = token_of(request)
    if token is None or not hmac.compare_digest(token.encode(), form.get("csrf", "").encode()):
        return form_page(
            request, public, status=403, url=url, error="The form had expired. Please shorten the URL again."
        )
    try:
        link = await public.shorten(url, read_request(request.scope, b"\x00"))
    except ValidationError as exc:
        detail = exc.message.removeprefix(f"{exc.field}: ") if exc.field == FIELD else exc.message
        return form_page(request, public, status=400, url=url, error=f"This URL {detail}.")
    except RateLimitedError as exc:
        return form_page(
            request,
            public,
            status=429,
            url=url,
            error=f"Too many links for now. {exc.message.split(';')[0]}. Try again in {_wait(exc.retry_after)}.",
            headers=exc.headers,
        )
    # A bot or link previewer gets the plain form: no link is made for it.
    return form_page(request, public) if link is None else form_page(request, public, link=link)
