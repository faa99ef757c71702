"""Requests that need nothing from another thread are answered without yielding to the
event loop. Under full redirect load every yield waits behind the requests queued on the
loop, so a request that yields three times answers several times slower (bench.contention)."""

from __future__ import annotations

import asyncio

from litestar.testing import TestClient

from tests.conftest import bearer
from tests.dashboard import as_browser, csrf_of, signed_in


def loop_trips(client: TestClient, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> tuple:
    """(status, how many times the event loop ran other work before the app answered), the
    request sent straight to the ASGI app on the loop its lifespan runs on."""

    async def call() -> tuple[int, int]:
        loop = asyncio.get_running_loop()
        trips, answered, sent = 0, False, []

        def tick() -> None:
            nonlocal trips
            if not answered:
                trips += 1
                loop.call_soon(tick)

        async def receive() -> dict:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "scheme": "https",
            "server": ("testserver.local", 443),
            "client": ("127.0.0.1", 50000),
            "method": method,
            "root_path": "",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "headers": [
                (name.encode(), value.encode()) for name, value in {"host": "testserver.local", **headers}.items()
            ],
            "state": {},
        }
        loop.call_soon(tick)
        await client.app(scope, receive, send)
        answered = True
        return sent[0]["status"], trips

    return client.blocking_portal.call(call)


def test_me_is_answered_without_yielding(client, api_key):
    status, trips = loop_trips(client, "GET", "/api/v1/me", bearer(api_key))
    assert (status, trips) == (200, 0)


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
