"""Links into the account's own app in headless Chromium with phone user agents: Android Chrome
is sent to the intent (Play Store fallback with the install-referrer token), Android in-app
browsers and iPhones get the app page (375 px, light and dark, axe-clean, keyboard), desktops
the website; the tokens each carries redeem once on the live server."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from shortlink.accounts import service as accounts
from shortlink.storage import connect
from tests.applinks.test_apps_api import FINGERPRINT
from tests.support.accessibility import light_and_dark_problems
from tests.support.browser import VIDEO, VISIBLE_WITHIN_MS, api, chromium, destination_site, phone
from tests.support.visitors import ANDROID_CHROME, DESKTOP, FACEBOOK_ANDROID, IPHONE
from throwaway.live_server import LiveServer

# Chromium comes from this module's own fixture, not the `browser` one conftest marks by.
pytestmark = pytest.mark.browser

DEEP_PATH = "/product/42"


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    with destination_site() as destination_port:
        server = LiveServer(tmp_path_factory.mktemp("applinks-browser"))
        conn = connect(server.db)
        key = accounts.create_key(conn, "maker@example.com").key
        conn.close()
        server.start()
        try:
            app = api(server, "POST", "/api/v1/apps", key, {
                "name": "Shop",
                "ios": {"teamId": "ABCDE12345", "bundleId": "com.example.shop", "appStoreId": "123456789"},
                "android": {"package": "com.example.shop", "sha256Fingerprints": [FINGERPRINT]},
            })  # fmt: skip
            link = api(server, "POST", "/api/v1/links", key, {"originalUrl": VIDEO, "customCode": "shop"})
            api(server, "PUT", f"/api/v1/links/{link['id']}/app", key, {"appId": app["id"], "deepPath": DEEP_PATH})
            with chromium(destination_port) as browser:
                yield server, browser, link["id"]
        finally:
            server.stop()


def redeem(server: LiveServer, token: str) -> tuple[int, dict]:
    request = urllib.request.Request(f"{server.base_url}/app/deferred/{token}", data=b"", method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def token_of(store_url: str) -> str:
    (referrer,) = parse_qs(urlsplit(store_url).query)["referrer"]
    return referrer.removeprefix("shortlink_token=")


def test_android_chrome_gets_the_intent_and_the_play_store_carries_the_token(setup):
    server, browser, link_id = setup
    context = phone(browser, ANDROID_CHROME)
    page = context.new_page()
    locations: list[str] = []
    page.on("response", lambda response: locations.append(response.headers.get("location", "")))
    try:
        page.goto(f"{server.base_url}/l/shop", timeout=5_000)
    except Exception:  # Chromium on Linux cannot open an intent:// URL; the redirect is what counts
        pass
    intent = next(location for location in locations if location)
    host = f"127.0.0.1:{server.port}"
    match = re.fullmatch(
        rf"intent://{re.escape(host)}/product/42#Intent;scheme=http;package=com\.example\.shop;"
        r"S\.browser_fallback_url=([^;]+);end",
        intent,
    )
    assert match, intent
    store = unquote(match.group(1))
    assert store.startswith("https://play.google.com/store/apps/details?id=com.example.shop&referrer=")
    # The app's first start after install: the deep path, once.
    token = token_of(store)
    assert redeem(server, token) == (200, {"data": {"linkId": link_id, "deepPath": DEEP_PATH}})
    assert redeem(server, token)[0] == 404
    context.close()


def test_desktop_goes_to_the_website(setup):
    server, browser, _ = setup
    context = browser.new_context(user_agent=DESKTOP)
    page = context.new_page()
    page.goto(f"{server.base_url}/l/shop")
    assert page.url == VIDEO and page.title() == "Destination"
    context.close()


@pytest.mark.parametrize("agent", ["android-in-app", "iphone"])
def test_the_app_page_at_375_px_is_accessible_and_its_ways_lead_where_they_say(setup, agent):
    server, browser, link_id = setup
    user_agent = FACEBOOK_ANDROID if agent == "android-in-app" else IPHONE
    context = phone(browser, user_agent, viewport={"width": 375, "height": 812})
    page = context.new_page()
    response = page.goto(f"{server.base_url}/l/shop")
    assert response is not None and response.status == 200
    page.get_by_text("Get the app", exact=True).wait_for(timeout=VISIBLE_WITHIN_MS)
    assert page.get_by_text("This link opens in Shop.").is_visible()
    assert light_and_dark_problems(page, (agent,), f"app-link-{agent}") == []  # axe, nothing wider than the phone
    store = page.get_by_text("Get the app", exact=True).get_attribute("href")
    assert page.get_by_text("Continue to website").get_attribute("href") == VIDEO
    # The keyboard reaches every way out, the first one first.
    page.keyboard.press("Tab")
    first = page.evaluate("document.activeElement.textContent")
    if agent == "android-in-app":
        assert first == "Open in app"
        assert (
            page.get_by_text("Open in app")
            .get_attribute("href")
            .startswith(f"intent://127.0.0.1:{server.port}/product/42#")
        )
        token = token_of(store)
    else:
        assert first == "Get the app" and store == "https://apps.apple.com/app/id123456789"
        assert page.get_by_text("Open in app").count() == 0
        # The code to carry into the app by hand: selectable, labelled, redeemable once.
        token = page.get_by_label(re.compile("copy this code")).input_value()
    assert redeem(server, token) == (200, {"data": {"linkId": link_id, "deepPath": DEEP_PATH}})
    context.close()
