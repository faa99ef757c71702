"""The dashboard end to end: a real server process, Debian's Chromium through Playwright.

One server and one browser for the module. The first test walks the whole story a person
would (sign in, make a key and use it, make a link, see a phone's click in the analytics,
pause, download the QR code, revoke the key, sign out); the second looks at every page
at phone and desktop width, light and dark: axe-core finds no serious or critical
violation, nothing is wider than the phone, and a screenshot of each is kept in
test-artifacts/.
"""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request

import pytest
import zxingcpp
from PIL import Image

from shortlink.accounts import service as accounts
from shortlink.cli.demo_data import seed
from shortlink.config import load_config
from shortlink.storage import connect
from tests.support.accessibility import light_and_dark_problems
from tests.support.browser import (
    ARTIFACTS,
    DESKTOP,
    PHONE,
    VISIBLE_WITHIN_MS,
    api,
    chromium_and_destination,
    dashboard_server,
    phone,
    sign_in_with_chromium,
    wait_for_text,
)
from tests.support.visitors import IPHONE
from throwaway.live_server import LiveServer

# A server and Chromium for the module, seconds a test.
pytestmark = pytest.mark.slow

EMAIL, PASSWORD = "person@example.com", "a long enough password"


def seed_demo(server: LiveServer) -> None:
    """Demo links and clicks, through the real recorder: charts with something to show."""
    asyncio.run(seed(load_config(server.config, environ={}, storage_path=str(server.db)), EMAIL, 24, 3000))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with dashboard_server(tmp_path_factory.mktemp("dashboard"), EMAIL, PASSWORD, seed_demo) as server:
        yield server


@pytest.fixture(scope="module")
def browser(server):
    with chromium_and_destination() as launched:
        yield launched


def api_status(server, path: str, key: str) -> int:
    request = urllib.request.Request(server.base_url + path, headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_a_person_manages_keys_and_links_and_sees_their_clicks(server, browser):
    context = browser.new_context(viewport=DESKTOP, accept_downloads=True)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.base_url)
    page = context.new_page()
    sign_in_with_chromium(page, server, EMAIL, PASSWORD)
    assert page.get_by_role("heading", name="Links").is_visible()

    # An API key, shown once, works against the JSON API.
    page.get_by_role("link", name="API keys").click()
    page.get_by_label("Name (optional)").fill("laptop script")
    page.get_by_role("button", name="Create a key").click()
    key = page.get_by_label("API key", exact=True).input_value()
    page.get_by_text("it will not be shown again").wait_for(timeout=VISIBLE_WITHIN_MS)
    page.get_by_role("button", name="Copy key").click()
    assert page.evaluate("navigator.clipboard.readText()") == key
    assert api_status(server, "/api/v1/me", key) == 200

    # A link made here is a DASHBOARD link for the API.
    page.get_by_role("link", name="Links").click()
    page.get_by_role("link", name="New link").click()
    page.get_by_label("Destination URL").fill("https://www.youtube.com/watch?v=dQw4w9WgXcQ")
    page.get_by_label("Custom code (optional)").fill("e2e")
    page.get_by_role("button", name="Create link").click()
    page.get_by_text("The link was created.").wait_for(timeout=VISIBLE_WITHIN_MS)
    link_url = page.url.split("?")[0]
    listing = api(server, "GET", "/api/v1/links?shortCode=e2e", key)
    assert listing[0]["source"] == "DASHBOARD"
    short_url = listing[0]["shortUrl"]

    # A phone's visit shows in the link's analytics.
    iphone = phone(browser, IPHONE)
    assert iphone.request.get(short_url, max_redirects=0).status == 200  # the page offering the app
    wait_for_text(page, link_url + "/analytics", "1 clicks in total")
    assert page.get_by_role("table", name="Operating systems").get_by_text("iOS").is_visible()

    # Paused: the visitor gets the unavailable page.
    page.goto(link_url)
    page.get_by_role("button", name="Pause").click()
    page.locator("h1 .badge.paused").wait_for(timeout=VISIBLE_WITHIN_MS)
    visitor = iphone.new_page()
    visitor.goto(short_url)
    assert visitor.get_by_text("This link is currently unavailable.").is_visible()

    # The QR code downloads and decodes to the short URL.
    page.get_by_label("Size in pixels").fill("400")
    page.get_by_role("button", name="Preview").click()
    with page.expect_download() as download:
        page.get_by_role("link", name="Download PNG").click()
    saved = ARTIFACTS / "dashboard-download.png"
    download.value.save_as(saved)
    assert download.value.suggested_filename == "e2e.png"
    image = Image.open(saved)
    assert image.size == (400, 400)
    assert [found.text for found in zxingcpp.read_barcodes(image)] == [short_url]

    # Revoked: the very next API request is refused.
    page.get_by_role("link", name="API keys").click()
    page.get_by_role("link", name="Revoke…").click()
    page.get_by_role("button", name="Revoke the key").click()
    page.get_by_text("The key was revoked.").wait_for(timeout=VISIBLE_WITHIN_MS)
    assert api_status(server, "/api/v1/me", key) == 401

    # Signed out: the dashboard is behind the sign-in form again.
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(server.base_url + "/login")
    page.goto(server.base_url + "/keys")
    assert page.url == server.base_url + "/login"
    iphone.close()
    context.close()


def test_every_page_is_accessible_and_fits_a_phone_in_light_and_dark(server, browser):
    conn = connect(server.db)
    key_id = accounts.create_key(conn, EMAIL, "screenshots").key_id
    conn.close()
    signed_in = browser.new_context(viewport=DESKTOP)
    page = signed_in.new_page()
    sign_in_with_chromium(page, server, EMAIL, PASSWORD)
    page.goto(server.base_url + "/links/new")
    page.get_by_label("Destination URL").fill("https://open.spotify.com/track/4cOdK2wGLETKBW3PvgPWqT")
    page.get_by_label("Title (optional)").fill("A song worth sharing")
    page.get_by_role("button", name="Create link").click()
    link_path = page.url.split("?")[0].removeprefix(server.base_url)
    # A click, so that the analytics pages show their tables (each in a region of its own name).
    code = page.locator("h1.code").inner_text().split()[0]
    visitor = phone(browser, IPHONE)
    assert visitor.request.get(f"{server.base_url}/l/{code}", max_redirects=0).status < 400
    visitor.close()
    wait_for_text(page, server.base_url + link_path + "/analytics", "1 clicks in total")
    assert page.get_by_role("region", name="Table of recent clicks").is_visible()
    state = signed_in.storage_state()
    signed_in.close()
    pages = {
        "login": ("/login", False),
        "links": ("/links", True),
        "link-new": ("/links/new", True),
        "link": (link_path, True),
        "link-delete": (f"{link_path}/delete", True),
        "link-analytics": (f"{link_path}/analytics", True),
        "analytics": ("/analytics?days=7", True),
        "keys": ("/keys", True),
        "key-revoke": (f"/keys/{key_id}/revoke", True),
        "account": ("/account", True),
        "not-found": ("/links/lnk_missing", True),
    }
    problems = []
    for width_name, viewport in (("phone", PHONE), ("desktop", DESKTOP)):
        signed_out = browser.new_context(viewport=viewport).new_page()
        signed_in = browser.new_context(viewport=viewport, storage_state=state).new_page()
        for name, (path, needs_session) in pages.items():
            page = signed_in if needs_session else signed_out
            page.goto(server.base_url + path)
            assert page.url.startswith(server.base_url + path.split("?")[0]), (name, page.url)
            problems += light_and_dark_problems(page, (name, width_name), f"dashboard-{name}-{width_name}")
        signed_out.context.close()
        signed_in.context.close()
    assert problems == [], "\n".join(map(str, problems))


def test_the_state_filter_stays_chosen_and_paging_keeps_it(server, browser):
    """The list's State filter: a template macro of the same name once hid the chosen value."""
    conn = connect(server.db)
    conn.execute("UPDATE links SET is_active = 0")  # every link paused: more than one page of them
    paused = conn.execute("SELECT count(*) FROM links").fetchone()[0]
    conn.close()
    assert paused > 20
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    sign_in_with_chromium(page, server, EMAIL, PASSWORD)
    page.goto(server.base_url + "/links")
    page.get_by_label("State").select_option("paused")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**/links?*state=paused*")
    assert page.get_by_label("State").input_value() == "paused"
    page.get_by_text(f"{paused} links").wait_for(timeout=VISIBLE_WITHIN_MS)
    next_page = page.get_by_role("link", name="Next")
    assert "state=paused" in (next_page.get_attribute("href") or "")
    next_page.click()
    page.wait_for_url("**page=2*")
    assert page.get_by_label("State").input_value() == "paused"
    page.get_by_text("Page 2 of").wait_for(timeout=VISIBLE_WITHIN_MS)
    context.close()
