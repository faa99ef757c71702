"""The Apps pages in Chromium: a person adds an app with the keyboard, chooses it for
a link, and every Apps page is axe-clean and fits a 375 px phone in light and dark."""

from __future__ import annotations

import pytest

from shortlink.accounts import service as accounts
from shortlink.storage import connect
from tests.applinks.test_apps_api import FINGERPRINT
from tests.support.accessibility import light_and_dark_problems
from tests.support.browser import (
    DESKTOP,
    PHONE,
    VISIBLE_WITHIN_MS,
    chromium_and_destination,
    dashboard_server,
    sign_in_with_chromium,
)

EMAIL, PASSWORD = "maker@example.com", "a long enough password"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    def prepare(live):
        conn = connect(live.db)
        accounts.add_domain(conn, EMAIL, "go.example.invalid")
        conn.close()

    with dashboard_server(tmp_path_factory.mktemp("dashboard-apps"), EMAIL, PASSWORD, prepare) as live:
        yield live


@pytest.fixture(scope="module")
def browser(server):
    with chromium_and_destination() as launched:
        yield launched


def test_a_person_adds_an_app_with_the_keyboard_and_a_link_opens_it(server, browser):
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    sign_in_with_chromium(page, server, EMAIL, PASSWORD)
    page.goto(server.base_url + "/apps")
    page.get_by_label("Team id").focus()
    page.keyboard.type("ABCDE12345")
    page.keyboard.press("Tab")
    page.keyboard.type("com.example.shop")
    page.keyboard.press("Tab")
    page.keyboard.type("123456789")
    page.get_by_label("Package name").fill("com.example.shop")
    page.get_by_label("SHA-256 signing-certificate fingerprints").fill(FINGERPRINT.lower())
    page.get_by_label("SHA-256 signing-certificate fingerprints").press("Enter")
    page.get_by_text("The app was added").wait_for(timeout=VISIBLE_WITHIN_MS)
    assert page.get_by_text("ABCDE12345.com.example.shop").is_visible()
    # A link chooses it, on its own page.
    page.goto(server.base_url + "/links/new")
    page.get_by_label("Destination URL").fill("https://shop.example/product/42")
    page.get_by_role("button", name="Create link").click()
    page.get_by_role("link", name="Choose an app…").click()
    page.get_by_label("App").select_option(label="com.example.shop")
    page.get_by_label("Deep path").fill("/product/42")
    page.get_by_role("button", name="Save").click()
    page.get_by_role("link", name="Choose an app…").wait_for(timeout=VISIBLE_WITHIN_MS)
    page.goto(page.url.split("?")[0].replace("/links/", "/apps/links/"))
    assert page.get_by_label("Deep path").input_value() == "/product/42"
    context.close()


def test_every_apps_page_is_accessible_and_fits_a_phone_in_light_and_dark(server, browser):
    signed_in = browser.new_context(viewport=DESKTOP)
    page = signed_in.new_page()
    sign_in_with_chromium(page, server, EMAIL, PASSWORD)
    page.goto(server.base_url + "/apps")
    page.get_by_label("Bundle id").fill("org.example.second")
    page.get_by_label("Team id").fill("bad")
    page.get_by_role("button", name="Add the app").click()
    page.get_by_text("must be 10 characters").wait_for(timeout=VISIBLE_WITHIN_MS)
    remove = page.get_by_role("link", name="Remove…").first.get_attribute("href")
    page.goto(server.base_url + "/links")
    link = page.locator("a[href^='/links/lnk_']").first.get_attribute("href")
    state = signed_in.storage_state()
    signed_in.close()
    pages = {"apps": "/apps", "app-remove": remove, "link-app": f"/apps{link}"}
    problems = []
    context = browser.new_context(viewport=PHONE, storage_state=state)
    page = context.new_page()
    for name, path in pages.items():
        page.goto(server.base_url + path)
        assert page.url == server.base_url + path, (name, page.url)
        problems += light_and_dark_problems(page, (name,), f"dashboard-{name}-phone")
    context.close()
    assert problems == [], "\n".join(map(str, problems))
