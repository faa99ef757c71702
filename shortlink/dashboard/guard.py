"""The dashboard's session: the cookie, the guard that loads its account, CSRF, the client address."""

from __future__ import annotations

from urllib.parse import SplitResult, urlsplit

from litestar import Controller, Request
from litestar.connection import ASGIConnection
from litestar.datastructures import Cookie
from litestar.di import NamedDependency, Provide
from litestar.handlers import BaseRouteHandler

from shortlink.accounts.schema import SessionAccount
from shortlink.client_address import address_of
from shortlink.wiring import Services

SESSION_COOKIE = "sl_session"
# Before sign-in, the sign-in and sign-up forms' CSRF tokens are bound to this cookie.
FORM_COOKIE = "sl_form"
SESSION = "dashboard_session"
CSRF_FIELD = "csrf"
SAFE_METHODS = frozenset({"GET", "HEAD"})


class SignInRequired(Exception):
    """No live session: the browser is sent to /login."""


class CrossSiteRequest(Exception):
    """A state-changing request without this page's CSRF token, or from another origin."""


class WrongScheme(CrossSiteRequest):
    """A form of ours sent from our own host over the other scheme (an https dashboard reached
    over http): its Secure cookies never reached the browser, so no sign-in could work there."""

    def __init__(self, address: str):
        super().__init__(address)
        self.address = address


def services_of(connection: ASGIConnection) -> Services:
    return connection.app.state.services


def load_session(connection: ASGIConnection) -> SessionAccount | None:
    """The request's live session, looked up once per request and kept in its state."""
    state = connection.scope["state"]
    if SESSION not in state:
        state[SESSION] = services_of(connection).sessions.load(connection.cookies.get(SESSION_COOKIE))
    return state[SESSION]


async def session_guard(connection: ASGIConnection, _: BaseRouteHandler) -> None:
    if load_session(connection) is None:
        raise SignInRequired()


def provide_session(request: Request, services: NamedDependency[Services]) -> SessionAccount:
    """The session session_guard let in. It takes `services` only to be resolved after it (see web.asgi)."""
    session = load_session(request)
    assert session is not None, "session_guard runs first"
    return session


async def check_csrf(request: Request) -> None:
    """Before every dashboard handler: a POST must come from one of our own pages, with
    the token bound to this browser's session (or, before sign-in, its form cookie)."""
    if request.method in SAFE_METHODS:
        return
    origin = request.headers.get("origin")
    if origin is not None and not _same_origin(urlsplit(origin), request):
        raise _refusal(urlsplit(origin), request)
    session = load_session(request)
    bound_to = session.token if session is not None else request.cookies.get(FORM_COOKIE, "")
    sent = (await request.form()).get(CSRF_FIELD, "")
    if not isinstance(sent, str) or not services_of(request).sessions.csrf_matches(bound_to, sent):
        raise CrossSiteRequest()


def _same_origin(origin: SplitResult, request: Request) -> bool:
    """Scheme and host: every host of ours is served with the short host's scheme, so an
    http:// page on our own name (a network in the middle) is another origin."""
    scheme = services_of(request).hosts.scheme
    return origin.scheme == scheme and origin.netloc.lower() == request.headers.get("host", "").lower()


def _refusal(origin: SplitResult, request: Request) -> CrossSiteRequest:
    """The page's own host over the other scheme is named as such, with the address to open
    (this host when it is ours, else the short host), not as another site."""
    hosts = services_of(request).hosts
    host = request.headers.get("host", "")
    if origin.scheme != hosts.scheme and origin.netloc.lower() == host.lower():
        return WrongScheme(hosts.base_for_visitor(host))
    return CrossSiteRequest()


def form_token(request: Request) -> str:
    """The form cookie's value (a new one when the browser has none yet)."""
    value = request.cookies.get(FORM_COOKIE, "")
    if 20 <= len(value) <= 100 and value.isascii():
        return value
    return services_of(request).sessions.new_form_token()


def cookie(name: str, value: str, secure: bool, max_age: int | None) -> Cookie:
    return Cookie(key=name, value=value, path="/", httponly=True, secure=secure, samesite="lax", max_age=max_age)


def client_address(request: Request) -> str:
    """The client address as the visitor path computes it ([network] trusted_proxies)."""
    services = services_of(request)
    client = request.scope.get("client")
    peer = client[0] if client else ""
    return address_of(peer, request.headers.get("x-forwarded-for"), services.config.trusted_networks)[0]


class SignedInController(Controller):
    """A dashboard resource: every route needs a live session, given to handlers as `session`."""

    include_in_schema = False
    guards = [session_guard]
    dependencies = {"session": Provide(provide_session, sync_to_thread=False)}
