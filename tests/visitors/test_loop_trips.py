"""Requests that need nothing from another thread are answered without yielding to the
event loop. Under full redirect load every yield waits behind the requests queued on the
loop, so a request that yields three times answers several times slower (bench.contention)."""

from __future__ import annotations

import asyncio

from litestar.testing import TestClient

from tests.conftest import bearer
from tests.support.asgi import call_app, http_scope
from tests.support.dashboard import as_browser, csrf_of, signed_in
from tests.support.visitors import DESKTOP, make_link


def loop_trips(client: TestClient, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> tuple:
    """(status, how many times the event loop ran other work before the app answered), the
    request sent straight to the ASGI app on the loop its lifespan runs on."""

    async def call() -> tuple[int, int]:
        loop = asyncio.get_running_loop()
        trips, answered = 0, False

        def tick() -> None:
            nonlocal trips
            if not answered:
                trips += 1
                loop.call_soon(tick)

        named = {"host": "testserver.local", **headers}
        raw_headers = [(name.encode(), value.encode()) for name, value in named.items()]
        loop.call_soon(tick)
        status, _headers, _body = await call_app(client.app, http_scope(method, path, raw_headers), body)
        answered = True
        return status, trips

    return client.blocking_portal.call(call)


def test_me_is_answered_without_yielding(client, api_key):
    status, trips = loop_trips(client, "GET", "/api/v1/me", bearer(api_key))
    assert (status, trips) == (200, 0)


def test_a_cached_link_is_redirected_without_yielding_and_an_uncached_one_waits_one_turn(client, auth):
    """A miss waits for the end of the loop's turn, where it is read with the turn's other
    misses (visits.loader); a cached link never waits."""
    make_link(client, auth, customCode="turns")
    status, trips = loop_trips(client, "GET", "/l/turns", {"user-agent": DESKTOP})
    assert (status, trips) == (302, 2)  # the turn that reads it, then the one that answers
    assert loop_trips(client, "GET", "/l/turns", {"user-agent": DESKTOP}) == (302, 0)


def test_a_signed_in_dashboard_post_is_answered_without_yielding(make_client, conn):
    browser = signed_in(lambda **overrides: as_browser(make_client(**overrides), False), conn)
    form = browser.get("/links/new")
    cookies = "; ".join(f"{name}={value}" for name, value in browser.cookies.items())
    body = f"original_url=not+a+url&csrf={csrf_of(form.text)}".encode()
    headers = {
        "cookie": cookies,
        "content-type": "application/x-www-form-urlencoded",
        "origin": "https://testserver.local",
    }
    status, trips = loop_trips(browser, "POST", "/links", headers, body)
    assert (status, trips) == (400, 0)
