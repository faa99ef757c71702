"""The link list in Chromium: a person tags a new link in the form and finds the tags in the
list and on the link's page, sorts the list by a heading and, on a phone, by the Sort field
(no script needed), reads platforms by their names; the pages pass axe-core in light and dark
at phone width; the service's icon loads under the dashboard's Content-Security-Policy."""

from __future__ import annotations

import re

import pytest

from shortlink.storage import connect
from tests.support.accessibility import light_and_dark_problems
from tests.support.browser import (
    DESKTOP,
    PHONE,
    VISIBLE_WITHIN_MS,
    chromium_and_destination,
    dashboard_server,
    keep_screenshot,
    sign_in_with_chromium,
)

pytestmark = pytest.mark.slow

EMAIL, PASSWORD = "tagger@example.com", "a long enough password"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with dashboard_server(tmp_path_factory.mktemp("dashboard-links"), EMAIL, PASSWORD) as server:
        yield server


@pytest.fixture(scope="module")
def browser(server):
    with chromium_and_destination() as launched:
        yield launched


def new_link(page, server, url: str, code: str, tags: str = "") -> str:
    page.goto(server.base_url + "/links/new")
    page.get_by_label("Destination URL").fill(url)
    page.get_by_label("Custom code (optional)").fill(code)
    page.get_by_label("Tags (optional)").fill(tags)
    page.get_by_role("button", name="Create link").click()
    page.get_by_text("The link was created.").wait_for(timeout=VISIBLE_WITHIN_MS)
    return page.url.split("?")[0]


def codes_shown(page) -> list[str]:
    links = page.get_by_role("region", name="Your links").locator('td a[href^="/links/lnk_"]')
    return [text.rsplit("/", 1)[1] for text in links.all_inner_texts()]


def row_of(page, code: str):
    link = page.locator('a[href^="/links/lnk_"]', has_text=re.compile(f"/l/{code}$"))
    return page.get_by_role("table", name="Your links").locator("tbody tr", has=link)


def test_a_person_tags_sorts_and_reads_the_list_on_a_desktop_and_a_phone(server, browser):
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    sign_in_with_chromium(page, server, EMAIL, PASSWORD)

    # A refused tag is told beside its field, with what was typed kept.
    page.goto(server.base_url + "/links/new")
    page.get_by_label("Destination URL").fill("https://www.youtube.com/watch?v=dQw4w9WgXcQ")
    page.get_by_label("Tags (optional)").fill("music; video")
    page.get_by_role("button", name="Create link").click()
    tags_field = page.get_by_label("Tags (optional)")
    assert tags_field.get_attribute("aria-invalid") == "true"
    assert page.get_by_text("tags: a tag name must not contain ; or ,").is_visible()
    assert page.get_by_label("Destination URL").input_value() == "https://www.youtube.com/watch?v=dQw4w9WgXcQ"

    # Tags typed in the form are on the link's page and in the list.
    video = new_link(page, server, "https://www.youtube.com/watch?v=dQw4w9WgXcQ", "video", "music, launch")
    facts = page.locator("dl.facts")
    assert (
        facts.get_by_role("link", name="launch").is_visible() and facts.get_by_role("link", name="music").is_visible()
    )
    assert facts.get_by_text("YouTube", exact=True).is_visible()
    new_link(page, server, "https://apps.apple.com/app/id284882215", "store", "launch")
    new_link(page, server, "https://example.com/article", "article")
    conn = connect(server.db)
    for code, clicks, day in (("video", 7, "03"), ("store", 40, "01"), ("article", 0, "02")):
        conn.execute(
            "UPDATE links SET click_count = ?, created_at = ? WHERE short_code = ?",
            (clicks, f"2026-02-{day}T09:00:00.000Z", code),
        )
    conn.commit()
    conn.close()

    page.goto(server.base_url + "/links")
    assert codes_shown(page) == ["video", "article", "store"]  # newest first
    table = page.get_by_role("table", name="Your links")
    assert table.get_by_role("columnheader", name="Created").get_attribute("aria-sort") == "descending"
    video_row = row_of(page, "video")
    assert video_row.get_by_role("link", name="music").is_visible()
    assert "\tYouTube\t" in video_row.inner_text()  # the Platform cell, between its neighbours
    assert video_row.get_by_text("2026-02-03").is_visible()
    store_row = row_of(page, "store")
    assert "\tApp Store\t" in store_row.inner_text()

    # Sorting by a heading: most clicks first, then the other way round.
    table.get_by_role("link", name="Clicks").click()
    page.wait_for_url("**/links?sort=-clicks")
    assert codes_shown(page) == ["store", "video", "article"]
    clicks_heading = page.get_by_role("columnheader", name="Clicks")
    assert clicks_heading.get_attribute("aria-sort") == "descending"
    assert page.get_by_role("columnheader", name="Created").get_attribute("aria-sort") is None
    clicks_heading.get_by_role("link").click()
    page.wait_for_url("**/links?sort=clicks")
    assert codes_shown(page) == ["article", "video", "store"]
    assert page.get_by_label("Sort").input_value() == "clicks"

    # A tag narrows the list and keeps its order.
    store_tag = page.get_by_role("table", name="Your links").get_by_role("link", name="launch").first
    store_tag.click()
    page.wait_for_url("**/links?tag=launch&sort=clicks")
    assert codes_shown(page) == ["video", "store"]
    keep_screenshot(page, "dashboard-links-tagged-desktop")
    context.close()

    # On a phone the headings are not shown: the Sort field orders the list, without script.
    phone = browser.new_context(viewport=PHONE, java_script_enabled=False, storage_state=context_state(browser, server))
    page = phone.new_page()
    page.goto(server.base_url + "/links")
    page.get_by_label("Sort").select_option("code")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**/links?*sort=code*")
    assert codes_shown(page) == ["article", "store", "video"]
    assert page.get_by_text("Tags: ").first.is_visible() and page.get_by_text("Created: ").first.is_visible()
    assert (
        page.locator("button.copy").count() == 3 and not page.locator("button.copy").first.is_visible()
    )  # needs script
    keep_screenshot(page, "dashboard-links-sorted-phone", full_page=True)
    phone.close()
    assert video


def context_state(browser, server) -> dict:
    """A signed-in browser's cookies, for a context that runs no script."""
    context = browser.new_context(viewport=DESKTOP)
    sign_in_with_chromium(context.new_page(), server, EMAIL, PASSWORD)
    state = context.storage_state()
    context.close()
    return state


def test_the_list_link_page_and_form_are_accessible_on_a_phone_in_light_and_dark(server, browser):
    context = browser.new_context(viewport=PHONE, storage_state=context_state(browser, server))
    page = context.new_page()
    link = new_link(
        page, server, "https://open.spotify.com/track/4cOdK2wGLETKBW3PvgPWqT", "song", "music, a long tag name here"
    )
    problems = []
    for name, path in (
        ("links-sorted", "/links?sort=-clicks&tag=music"),
        ("link-tagged", link.removeprefix(server.base_url)),
        ("link-new", "/links/new"),
    ):
        page.goto(server.base_url + path)
        problems += light_and_dark_problems(page, (name, "phone"), f"dashboard-{name}-phone")
    # The form with a refused tag beside its field.
    page.get_by_label("Destination URL").fill("https://example.com")
    page.get_by_label("Tags (optional)").fill("x" * 41)
    page.get_by_role("button", name="Create link").click()
    page.get_by_text("tags: a tag name must be 1-40 characters").wait_for(timeout=VISIBLE_WITHIN_MS)
    problems += light_and_dark_problems(page, ("link-new-refused", "phone"), "dashboard-link-new-refused-phone")
    assert problems == [], "\n".join(map(str, problems))
    context.close()


def test_the_icon_loads_under_the_pages_policy(server, browser):
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    refused: list[str] = []
    page.on(
        "console", lambda message: refused.append(message.text) if "Content Security Policy" in message.text else None
    )
    page.goto(server.base_url + "/login")
    icon = page.locator('link[rel="icon"]')
    assert icon.get_attribute("href") == "/favicon.svg"
    # As an image of the page (img-src 'self'), both files draw.
    for path in ("/favicon.svg", "/favicon.ico"):
        size = page.evaluate(
            """path => new Promise(done => {
                const image = new Image();
                image.onload = () => done(image.naturalWidth);
                image.onerror = () => done(0);
                image.src = path;
            })""",
            path,
        )
        assert size >= 16, path
    answer = page.request.get(server.base_url + "/favicon.ico")
    assert answer.status == 200 and answer.headers["content-type"] == "image/x-icon"
    assert refused == []
    context.close()
