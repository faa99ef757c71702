"""/login, /signup, /logout and / : signing in and out."""

from __future__ import annotations

from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency

from shortlink.accounts.sessions import SignInFailed
from shortlink.dashboard.guard import (
    FORM_COOKIE,
    SESSION_COOKIE,
    client_address,
    cookie,
    form_token,
    load_session,
    services_of,
)
from shortlink.dashboard.links import links_page
from shortlink.dashboard.render import page, see_other
from shortlink.errors import RateLimitedError, ValidationError
from shortlink.http.public import public_home
from shortlink.wiring import Services

FORM_COOKIE_SECONDS = 3600


def _secure(request: Request) -> bool:
    return services_of(request).config.short_host.startswith("https://")


def signed_in(request: Request, token: str, to: str = "/") -> Response:
    """The new session's cookie (a new id at every sign-in), then the dashboard."""
    services = services_of(request)
    return see_other(
        to,
        cookies=[
            cookie(SESSION_COOKIE, token, _secure(request), services.sessions.max_seconds),
            cookie(FORM_COOKIE, "", _secure(request), 0),
        ],
    )


def credentials_form(request: Request, template: str, status_code: int = 200, **context) -> Response:
    """The sign-in or sign-up form, its CSRF token bound to the form cookie."""
    token = form_token(request)
    services = services_of(request)
    return page(
        request,
        template,
        status_code=status_code,
        csrf=services.sessions.csrf(token),
        signup=services.config.dashboard.signup,
        cookies=[cookie(FORM_COOKIE, token, _secure(request), FORM_COOKIE_SECONDS)],
        **context,
    )


async def _credentials(request: Request) -> tuple[str, str]:
    form = await request.form()
    return str(form.get("email", ""))[:254], str(form.get("password", ""))[:1024]


def signed_out_home(request: Request) -> Response:
    """`/` for a visitor who is not signed in: the public shortening page when
    `[public] enabled`, else the sign-in form."""
    return public_home(services_of(request), request) or see_other("/login")


@get("/", include_in_schema=False)
async def home(request: Request) -> Response:
    elsewhere = services_of(request).hosts.root_redirect(request.headers.get("host", ""))
    if elsewhere is not None:  # a custom domain whose account chose where `/` leads
        return Response(content=b"", status_code=302, headers={"Location": elsewhere, "Cache-Control": "no-store"})
    if load_session(request) is None:
        return signed_out_home(request)
    return await links_page(request)


class SignInController(Controller):
    include_in_schema = False

    @get("/login")
    async def login_form(self, request: Request) -> Response:
        if load_session(request) is not None:
            return see_other("/")
        return credentials_form(request, "login.html")

    @post("/login")
    async def login(self, request: Request, services: NamedDependency[Services]) -> Response:
        email, password = await _credentials(request)
        session = load_session(request)
        try:
            token = await services.sessions.sign_in(
                email, password, client_address(request), None if session is None else session.token
            )
        except (SignInFailed, RateLimitedError) as exc:
            return credentials_form(request, "login.html", exc.status, error=exc.message, email=email)
        return signed_in(request, token)

    @get("/signup")
    async def signup_form(self, request: Request, services: NamedDependency[Services]) -> Response:
        if not services.config.dashboard.signup:
            return see_other("/login")
        return credentials_form(request, "signup.html")

    @post("/signup")
    async def signup(self, request: Request, services: NamedDependency[Services]) -> Response:
        if not services.config.dashboard.signup:
            return see_other("/login")
        email, password = await _credentials(request)
        try:
            token = await services.sessions.sign_up(email, password, client_address(request))
        except ValidationError as exc:
            return credentials_form(request, "signup.html", 400, errors={exc.field: exc.message}, email=email)
        except (SignInFailed, RateLimitedError) as exc:
            return credentials_form(request, "signup.html", exc.status, error=exc.message, email=email)
        return signed_in(request, token)

    @post("/logout")
    async def logout(self, request: Request, services: NamedDependency[Services]) -> Response:
        session = load_session(request)
        if session is not None:
            await services.sessions.sign_out(session.token)
        return see_other("/login", cookies=[cookie(SESSION_COOKIE, "", _secure(request), 0)])
