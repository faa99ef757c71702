"""The bio editor end to end: a real server process, Debian's Chromium through Playwright.

A person signs in, makes a bio page and a button from the editor, an iPhone opens the
page and taps the button, and the view and the click show in the editor's statistics.
Then every editor page at 375 px in light and dark: axe-core finds no serious or
critical violation, nothing is wider than the phone, and screenshots go to test-artifacts/.
"""

from __future__ import annotations

import pytest
import zxingcpp
from PIL import Image

from tests.support.accessibility import light_and_dark_problems
from tests.support.browser import (
    ARTIFACTS,
    DESKTOP,
    PHONE,
    VIDEO,
    VISIBLE_WITHIN_MS,
    chromium_and_destination,
    dashboard_server,
    keep_screenshot,
    phone,
    sign_in_with_chromium,
    wait_for_text,
)
from tests.support.visitors import IPHONE

# A server and Chromium for the module, seconds a test.
pytestmark = pytest.mark.slow

EMAIL, PASSWORD = "creator@example.com", "a long enough password"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with dashboard_server(tmp_path_factory.mktemp("bio-editor"), EMAIL, PASSWORD) as server:
        yield server


@pytest.fixture(scope="module")
def browser(server):
    with chromium_and_destination() as launched:
        yield launched


@pytest.fixture(scope="module")
def signed_in(server, browser) -> dict:
    """The storage state of a signed-in browser (module scope: the story test runs first)."""
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    sign_in_with_chromium(page, server, EMAIL, PASSWORD)
    state = context.storage_state()
    context.close()
    return state


def test_a_page_made_in_the_editor_is_tapped_on_an_iphone_and_counted(server, browser, signed_in):
    context = browser.new_context(viewport=DESKTOP, storage_state=signed_in, accept_downloads=True)
    page = context.new_page()
    page.goto(server.base_url + "/links")
    page.get_by_role("link", name="Bio page").click()
    page.get_by_label("Handle").fill("creator")
    page.get_by_label("Title").fill("Creator's links")
    page.get_by_label("Description (optional)").fill("Videos and more")
    page.get_by_label("Published: visitors can open the page").check()
    page.get_by_role("button", name="Create the page").click()
    page.get_by_text("The page was saved.").wait_for(timeout=VISIBLE_WITHIN_MS)
    page_url = f"{server.base_url}/@creator"
    assert page.get_by_role("link", name=page_url).is_visible()

    page.get_by_role("link", name="New link as a button").click()
    page.get_by_label("Destination URL").fill(VIDEO)
    page.get_by_label("Button text (optional)").fill("My new video")
    page.get_by_role("button", name="Create the button").click()
    page.get_by_text("The link was created and added as a button at the end.").wait_for(timeout=VISIBLE_WITHIN_MS)
    short_url = page.locator(".buttons-list .url a").inner_text()
    assert short_url.startswith(f"{server.base_url}/l/")

    # The QR code of the page, previewed and downloaded, reads as its address.
    assert page.locator("img.qr-preview").evaluate("image => image.naturalWidth") > 0
    with page.expect_download() as download:
        page.get_by_role("link", name="Download PNG").click()
    saved = ARTIFACTS / "bio-editor-qr.png"
    download.value.save_as(saved)
    assert [found.text for found in zxingcpp.read_barcodes(Image.open(saved))] == [page_url]

    # An iPhone (scripts off, so the page that offers the app stays to be looked at).
    iphone = phone(browser, IPHONE, java_script_enabled=False)
    visitor = iphone.new_page()
    assert visitor.goto(page_url).status == 200
    visitor.get_by_text("My new video").click()
    assert visitor.url == short_url
    visitor.get_by_text("Open in app").wait_for(timeout=VISIBLE_WITHIN_MS)  # the click returns once the address commits
    iphone.close()

    wait_for_text(page, server.base_url + "/bio/stats", "1 views in total")
    table = page.get_by_role("region", name="Click-through per button")
    code = short_url.rsplit("/", 1)[1]
    assert table.locator("tbody td").all_text_contents() == [
        "My new video",
        f"Link: {code}",
        "Clicks: 1",
        "Of views: 100%",
    ]
    keep_screenshot(page, "bio-editor-stats-desktop", full_page=True)
    context.close()


def test_the_editor_pages_are_accessible_at_375_px_light_and_dark(server, browser, signed_in):
    context = browser.new_context(viewport=PHONE, storage_state=signed_in)
    page = context.new_page()
    page.goto(server.base_url + "/bio")
    link_id = page.locator(".buttons-list .url a").first.get_attribute("href").removeprefix("/links/")
    problems = []
    for name, path in {
        "editor": "/bio",
        "editor-error": "/bio?find=nothing-matches",
        "button-new": "/bio/buttons/new",
        "button-label": f"/bio/buttons/{link_id}/label",
        "button-remove": f"/bio/buttons/{link_id}/remove",
        "delete": "/bio/delete",
        "stats": "/bio/stats?days=7",
    }.items():
        page.goto(server.base_url + path)
        assert page.url == server.base_url + path, name
        problems += light_and_dark_problems(page, (name,), f"bio-editor-{name}-phone")
    # A refused handle, with its message beside the field.
    page.goto(server.base_url + "/bio")
    page.get_by_label("Handle").fill("admin")
    page.get_by_role("button", name="Save the page").click()
    page.get_by_text("handle: 'admin' is a reserved word").wait_for(timeout=VISIBLE_WITHIN_MS)
    problems += light_and_dark_problems(page, ("refused",), "bio-editor-refused-phone")
    context.close()
    assert problems == [], "\n".join(map(str, problems))
