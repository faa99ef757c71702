"""The iOS in-app page on a plain-http short host, in headless Chromium against a real server:
the short URL is there as text to press and hold, and "Copy link" copies it where scripts run.

Two origins, since browsers let a page write the clipboard through `navigator.clipboard` only in
a secure context: 127.0.0.1 counts as one even over http (a server on one's own machine), a
plain-http host of the internet does not. The second is `http://sho.rt`: Playwright's routing
hands Chromium the real server's answers under that name, so the page runs in the insecure
context a real plain-http short host gives it.
"""

from __future__ import annotations

import re

import pytest

from shortlink.accounts import service as accounts
from shortlink.storage import connect
from tests.support.accessibility import light_and_dark_problems
from tests.support.browser import (
    PHONE,
    VIDEO,
    VISIBLE_WITHIN_MS,
    api,
    chromium_and_destination,
    keep_screenshot,
    phone,
)
from tests.support.visitors import INSTAGRAM_IOS
from throwaway.live_server import LiveServer

# A server and Chromium for the module, seconds a test.
pytestmark = pytest.mark.slow

SHORT_HOST = "http://sho.rt"
SHORT_URL = f"{SHORT_HOST}/l/video"
CLIPBOARD = ["clipboard-read", "clipboard-write"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = LiveServer(tmp_path_factory.mktemp("plain-http"))
    server.env["SHORTLINK_LINKS_SHORT_HOST"] = SHORT_HOST
    conn = connect(server.db)
    key = accounts.create_key(conn, "plain-http@example.com").key
    conn.close()
    server.start()
    api(server, "POST", "/api/v1/links", key, {"originalUrl": VIDEO, "customCode": "video"})
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser(server):
    with chromium_and_destination() as launched:
        yield launched


def on_short_host(server: LiveServer, page, scripts: bool = True) -> None:
    """Requests for the short host are answered by the real server: the page's origin is
    http://sho.rt, an insecure context. `scripts=False`: the answer's script-src is 'none', so
    the page runs as with scripts off while axe, injected through the DevTools protocol, which
    no policy governs, still can (it does not run in a context without JavaScript)."""

    def answer(route):
        response = route.fetch(url=route.request.url.replace(SHORT_HOST, server.base_url))
        headers = response.headers
        if not scripts:
            policy = re.sub(r"script-src [^;]+", "script-src 'none'", headers["content-security-policy"])
            headers = {**headers, "content-security-policy": policy}
        route.fulfill(response=response, headers=headers)

    page.route(f"{SHORT_HOST}/**", answer)


def clipboard(context, server: LiveServer, write: str | None = None) -> str:
    """What the browser's clipboard holds (after writing `write` to it), through a page of a
    secure origin (the server's own /healthz on 127.0.0.1), the only kind allowed to read it.
    The clipboard is the browser's, shared by every context."""
    page = context.new_page()
    page.goto(f"{server.base_url}/healthz")
    page.bring_to_front()
    if write is not None:
        page.evaluate("text => navigator.clipboard.writeText(text)", write)
    text = page.evaluate("navigator.clipboard.readText()")
    page.close()
    return text


@pytest.mark.parametrize("origin", ["loopback", "plain-http host"])
def test_copy_link_copies_the_short_url(server, browser, origin):
    context = phone(browser, INSTAGRAM_IOS, permissions=CLIPBOARD)
    page = context.new_page()
    if origin == "loopback":
        url = f"{server.base_url}/l/video"
    else:
        on_short_host(server, page)
        url = SHORT_URL
    assert page.goto(url).status == 200
    assert page.evaluate("window.isSecureContext") == (origin == "loopback")
    assert page.locator("#short-url").inner_text() == SHORT_URL
    copy = page.get_by_role("button", name="Copy link")
    copy.wait_for(state="visible", timeout=VISIBLE_WITHIN_MS)
    assert clipboard(context, server, write="something else") == "something else"
    page.bring_to_front()
    copy.click()
    page.get_by_text("Copied. Paste it in your browser.").wait_for(timeout=VISIBLE_WITHIN_MS)
    assert clipboard(context, server) == SHORT_URL
    # No way out that iOS cannot take from plain http: the app, this page's website, the link.
    assert [page.get_by_role("link").nth(i).inner_text() for i in range(2)] == ["Open in app", "Continue"]
    assert page.get_by_role("link").count() == 2
    keep_screenshot(page, f"in-app-plain-http-copied-{origin.replace(' ', '-')}")
    context.close()


def test_without_scripts_the_link_stays_to_copy_by_hand(server, browser):
    context = phone(browser, INSTAGRAM_IOS, java_script_enabled=False)
    page = context.new_page()
    on_short_host(server, page)
    assert page.goto(SHORT_URL).status == 200
    page.get_by_text(SHORT_URL, exact=True).wait_for(timeout=VISIBLE_WITHIN_MS)
    assert page.get_by_role("button", name="Copy link", include_hidden=True).is_hidden()
    assert "copy the link below" in page.inner_text("main")
    context.close()


@pytest.mark.parametrize("scripts", [True, False], ids=["scripts", "no-scripts"])
def test_the_page_passes_axe_on_a_375px_phone_light_and_dark(server, browser, scripts):
    context = phone(browser, INSTAGRAM_IOS, viewport=PHONE, permissions=CLIPBOARD)
    page = context.new_page()
    on_short_host(server, page, scripts=scripts)
    page.goto(SHORT_URL)
    copy = page.get_by_role("button", name="Copy link", include_hidden=True)
    if scripts:
        # As it looks once copied: the button and the status line shown.
        copy.click()
        page.get_by_text("Copied. Paste it in your browser.").wait_for(timeout=VISIBLE_WITHIN_MS)
    else:
        assert copy.is_hidden()
    name = "in-app-plain-http" + ("" if scripts else "-no-scripts")
    problems = light_and_dark_problems(page, (name,), name)
    assert problems == [], "\n".join(map(str, problems))
    context.close()
