"""End to end in headless Chromium: a real server, a real browser with phone user agents.

The destination "www.youtube.com" is a real local HTTPS server on 127.0.0.1: Chromium's
host-resolver rules send that name there, so the page's own fallback navigation is
observed without the internet. Screenshots of every visitor page are kept in
test-artifacts/ for people to look at.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

import pytest

from shortlink.accounts import service as accounts
from shortlink.storage import connect
from tests.support.accessibility import light_and_dark_problems
from tests.support.browser import (
    VIDEO,
    VISIBLE_WITHIN_MS,
    api,
    chromium,
    destination_site,
    keep_screenshot,
    phone,
    wait_for_page,
)
from tests.support.helpers import wait_for
from tests.support.visitors import ANDROID_CHROME, FACEBOOK_ANDROID, INSTAGRAM_IOS, IPHONE
from throwaway.live_server import LiveServer

# A server and Chromium for the module, seconds a test.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    with destination_site() as destination_port:
        yield from _serve(tmp_path_factory, destination_port)


def _serve(tmp_path_factory, destination_port):
    server = LiveServer(tmp_path_factory.mktemp("browser"))
    # Short URLs as in production (https): the in-app "Open in browser" escape needs them.
    server.env["SHORTLINK_LINKS_SHORT_HOST"] = f"https://127.0.0.1:{server.port}"
    conn = connect(server.db)
    key = accounts.create_key(conn, "browser@example.com").key
    conn.close()
    server.start()
    expires_at = time.time() + 2
    links = {
        name: create(server, key, **body)
        for name, body in {
            "video": {"originalUrl": VIDEO, "customCode": "video"},
            "locked": {"originalUrl": "https://example.com/secret", "customCode": "locked", "password": "open sesame"},
            "guarded": {
                "originalUrl": "https://example.com/guarded",
                "customCode": "guarded",
                "password": "open sesame",
            },
            "store": {"originalUrl": "https://apps.apple.com/us/app/youtube/id544007664", "customCode": "store"},
            # An internationalised host with a title: the pages show both, and the punycode.
            "titled": {
                "originalUrl": "https://www.xn--mnchen-3ya.de/rathaus",
                "customCode": "titled",
                "title": "Rathaus opening hours",
            },
            # Runs out of password attempts in the accessibility walk.
            "locked-a11y": {
                "originalUrl": "https://example.com/a11y",
                "customCode": "locked-a11y",
                "password": "x y z",
            },
            "paused": {"originalUrl": "https://example.com/p", "customCode": "paused"},
            "expiring": {
                "originalUrl": "https://example.com/e",
                "customCode": "expiring",
                "expiresAt": datetime.fromtimestamp(expires_at, UTC).isoformat(),
            },
        }.items()
    }
    api(server, "PATCH", f"/api/v1/links/{links['paused']['id']}", key, {"isActive": False})
    yield server, destination_port, expires_at
    server.stop()


def create(server, key, **body):
    return api(server, "POST", "/api/v1/links", key, body)


@pytest.fixture(scope="module")
def browser(setup):
    _, destination_port, _ = setup
    with chromium(destination_port) as launched:
        yield launched


def test_iphone_is_offered_the_app_and_falls_back_to_the_website(setup, browser):
    server, _, _ = setup
    # What the visitor sees while the app is being tried (scripts off, so the page stays).
    context = phone(browser, IPHONE, java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{server.base_url}/l/video")
    page.get_by_text("Open in app").wait_for(timeout=VISIBLE_WITHIN_MS)
    # The button is the https universal link; the script tries youtube:// once by itself.
    assert page.get_by_text("Open in app").get_attribute("href") == "https://www.youtube.com/watch?v=dQw4w9WgXcQ"
    assert page.get_by_text("Continue to website").get_attribute("href") == VIDEO
    keep_screenshot(page, "iphone-interstitial")
    context.close()
    # With scripts on: the app is not installed in this browser, so after ~2.5 s the page
    # goes on to the website by itself.
    context = phone(browser, IPHONE)
    page = context.new_page()
    started = time.monotonic()
    page.goto(f"{server.base_url}/l/video", wait_until="commit")
    # Polled: the page's own attempt to open youtube:// aborts a navigation, which
    # Playwright's navigation waits report as an error.
    wait_for_page(page, lambda: page.url == VIDEO, 10, "the website")
    assert time.monotonic() - started >= 2.0
    page.wait_for_load_state()
    assert page.title() == "Destination"
    context.close()


def test_android_chrome_is_sent_to_an_intent_with_the_website_as_fallback(setup, browser):
    server, _, _ = setup
    context = phone(browser, ANDROID_CHROME)
    page = context.new_page()
    redirects = []
    page.on("response", lambda response: redirects.append(response.headers.get("location", "")))
    try:
        page.goto(f"{server.base_url}/l/video", timeout=5_000)
    except Exception:
        pass
    intent = next(location for location in redirects if location)
    assert intent.startswith("intent://www.youtube.com/watch?v=dQw4w9WgXcQ#Intent;")
    assert "package=com.google.android.youtube;" in intent
    assert "S.browser_fallback_url=https%3A%2F%2Fwww.youtube.com%2Fwatch%3Fv%3DdQw4w9WgXcQ;" in intent
    context.close()


def test_in_app_browser_page_offers_the_app_the_browser_and_the_website(setup, browser):
    server, _, _ = setup
    context = phone(browser, INSTAGRAM_IOS)
    page = context.new_page()
    page.goto(f"{server.base_url}/l/video")
    for label in ("Open in app", "Open in browser", "Continue"):
        page.get_by_text(label, exact=True).wait_for(timeout=VISIBLE_WITHIN_MS)
    escape = page.get_by_text("Open in browser").get_attribute("href")
    assert escape == f"x-safari-https://127.0.0.1:{server.port}/l/video?iab=1"
    keep_screenshot(page, "in-app-interstitial")
    page.wait_for_timeout(3_000)  # a pause, not a wait: what must not happen has had its time
    assert page.url.startswith(server.base_url)  # never opens anything by itself
    context.close()


def test_android_in_app_page_offers_the_app_the_browser_and_the_website(setup, browser):
    server, _, _ = setup
    context = phone(browser, FACEBOOK_ANDROID)
    page = context.new_page()
    response = page.goto(f"{server.base_url}/l/video")
    assert response.status == 200
    app = page.get_by_text("Open in app", exact=True).get_attribute("href")
    assert app.startswith("intent://www.youtube.com/watch?v=dQw4w9WgXcQ#Intent;")
    assert "package=com.google.android.youtube;" in app
    escape = page.get_by_text("Open in browser").get_attribute("href")
    assert escape == f"intent://127.0.0.1:{server.port}/l/video?iab=1#Intent;scheme=https;end"
    assert page.get_by_text("Continue", exact=True).get_attribute("href") == VIDEO
    keep_screenshot(page, "android-in-app-interstitial")
    page.wait_for_timeout(2_000)  # a pause, not a wait: what must not happen has had its time
    assert page.url.startswith(server.base_url)  # nothing opens before a tap
    # The app is not installed here: after a tap the page goes on to the fallback itself
    # (Meta's webviews ignore the intent's own fallback).
    page.get_by_text("Open in app", exact=True).click(no_wait_after=True)
    wait_for_page(page, lambda: page.url == VIDEO, 10, "the fallback")
    context.close()


def test_iphone_store_page_keeps_a_button_to_the_app_store(setup, browser):
    server, _, _ = setup
    # Scripts off: with them the page would go on to the App Store at once.
    context = phone(browser, IPHONE, java_script_enabled=False)
    page = context.new_page()
    assert page.goto(f"{server.base_url}/l/store").status == 200
    assert (
        page.get_by_text("Open in the App Store").get_attribute("href")
        == "https://apps.apple.com/us/app/youtube/id544007664"
    )
    keep_screenshot(page, "iphone-store-page")
    context.close()


def test_visitor_pages_are_real_pages_on_a_phone(setup, browser):
    server, _, expires_at = setup
    context = phone(browser, IPHONE)
    page = context.new_page()
    wait_for(lambda: time.time() > expires_at + 0.1, 10, 'the "expiring" link to expire')
    for code, status, text, shot in [
        ("locked", 200, "password", "password"),
        ("paused", 404, "unavailable", "paused"),
        ("expiring", 410, "expired", "expired"),
        ("nothing-here", 404, "not", "not-found"),
    ]:
        response = page.goto(f"{server.base_url}/l/{code}")
        assert response.status == status, code
        assert text in page.inner_text("body").lower(), code
        assert "shortlink" in page.inner_text("body").lower()
        keep_screenshot(page, f"{shot}")
    # The password form works in the browser: wrong, then right, then remembered.
    page.goto(f"{server.base_url}/l/locked")
    page.fill("input[name=password]", "wrong guess")
    page.click("button[type=submit]")
    assert "not right" in page.inner_text("body")
    keep_screenshot(page, "password-wrong")
    page.fill("input[name=password]", "open sesame")
    # The answer redirects to the destination (https://example.com, unreachable here):
    # the browser must follow it, which a too strict form-action policy would block.
    with page.expect_request("https://example.com/secret") as followed:
        page.click("button[type=submit]")
    assert followed.value.redirected_from.response().status == 303
    context.close()


def test_too_many_password_attempts_page(setup, browser):
    server, _, _ = setup
    context = phone(browser, IPHONE)
    page = context.new_page()
    page.goto(f"{server.base_url}/l/guarded")
    statuses = []
    while 429 not in statuses and len(statuses) < 10:  # 5 attempts a minute by default
        page.fill("input[name=password]", "wrong guess")
        with page.expect_response(f"{server.base_url}/l/guarded") as answered:
            page.click("button[type=submit]")
        statuses.append(answered.value.status)
    assert statuses == [403] * 5 + [429]
    assert answered.value.headers["retry-after"].isdigit()
    assert "too many attempts" in page.inner_text("body").lower()
    keep_screenshot(page, "too-many-attempts")
    context.close()


# Every page a visitor can be shown, as (name, user agent, code, status after any wrong
# password posts: 403 after one, 429 after as many as it takes).
VISITOR_PAGES = [
    ("iphone-interstitial", IPHONE, "video", 200),
    ("iphone-store-page", IPHONE, "store", 200),
    ("in-app-interstitial", INSTAGRAM_IOS, "titled", 200),
    ("android-in-app-interstitial", FACEBOOK_ANDROID, "video", 200),
    ("password", IPHONE, "locked-a11y", 200),
    ("password-wrong", IPHONE, "locked-a11y", 403),
    ("too-many-attempts", IPHONE, "locked-a11y", 429),
    ("paused", IPHONE, "paused", 404),
    ("expired", IPHONE, "expiring", 410),
    ("not-found", IPHONE, "nothing-here", 404),
]


def without_page_scripts(route):
    """The response with its CSP's script-src set to 'none'.

    The interstitials move on by themselves (to the app, the store or the website), so
    their script must not run while axe looks at them; axe needs scripts on (its promises),
    and runs anyway: it is injected through the DevTools protocol, which no CSP governs."""
    response = route.fetch()
    policy = re.sub(r"script-src [^;]+", "script-src 'none'", response.headers["content-security-policy"])
    route.fulfill(response=response, headers={**response.headers, "content-security-policy": policy})


def test_every_visitor_page_passes_axe_on_a_375px_phone_light_and_dark(setup, browser):
    server, _, expires_at = setup
    wait_for(lambda: time.time() > expires_at + 0.1, 10, 'the "expiring" link to expire')
    problems = []
    for name, user_agent, code, status in VISITOR_PAGES:
        context = phone(browser, user_agent, viewport={"width": 375, "height": 812})
        page = context.new_page()
        page.route(f"{server.base_url}/**", without_page_scripts)
        url = f"{server.base_url}/l/{code}"
        answered = page.goto(url).status
        while answered != status and answered in (200, 403):
            page.fill("input[name=password]", "wrong guess")
            with page.expect_response(url) as response:
                page.click("button[type=submit]")
            answered = response.value.status
        assert answered == status, name
        # Nothing wider than the phone either: no sideways scrolling.
        problems += light_and_dark_problems(page, (name,), name)
        context.close()
    assert problems == [], "\n".join(map(str, problems))


def test_interstitials_say_where_the_link_leads(setup, browser):
    server, _, _ = setup
    context = phone(browser, INSTAGRAM_IOS)
    page = context.new_page()
    page.goto(f"{server.base_url}/l/titled")
    where = page.locator(".where")
    assert where.locator("strong").inner_text() == "münchen.de"
    text = where.inner_text()
    assert "www.münchen.de" in text and "www.xn--mnchen-3ya.de" in text and "/rathaus" not in text
    assert page.locator("h1").inner_text() == "Rathaus opening hours"
    context.close()
