"""Moving in and out from the dashboard in Debian's Chromium: a person imports a file
with the keyboard (check, read the report, confirm), ticks links and acts on them, filters by
tag, downloads a chart's CSV and every link; the new pages are axe-clean and fit a 375 px phone,
light and dark (screenshots in test-artifacts/).

One server and one browser for the module; the second test only reads what the first made.
"""

from __future__ import annotations

import csv
import io

import pytest

from tests.support.accessibility import axe_violations, light_and_dark_problems
from tests.support.browser import (
    DESKTOP,
    PHONE,
    VISIBLE_WITHIN_MS,
    chromium_and_destination,
    dashboard_server,
    keep_screenshot,
    sign_in_with_chromium,
)
from tests.support.paths import FIXTURES

EMAIL, PASSWORD = "mover@example.com", "a long enough password"
YOURLS = FIXTURES / "imports" / "yourls.sql"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with dashboard_server(tmp_path_factory.mktemp("moving"), EMAIL, PASSWORD) as server:
        yield server


@pytest.fixture(scope="module")
def browser(server):
    with chromium_and_destination() as launched:
        yield launched


def test_a_person_imports_with_the_keyboard_then_acts_on_ticked_links(server, browser):
    context = browser.new_context(viewport=PHONE, accept_downloads=True)
    page = context.new_page()
    sign_in_with_chromium(page, server, EMAIL, PASSWORD)
    page.get_by_role("link", name="Import", exact=True).click()
    page.get_by_role("heading", name="Import links").wait_for(timeout=VISIBLE_WITHIN_MS)

    # The file chooser is the one step a keyboard cannot script in a headless browser; the
    # rest is Tab, arrow keys and Enter.
    page.get_by_label("Export file").set_input_files(YOURLS)
    page.get_by_label("Export file").focus()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "f-source"
    page.get_by_label("From").select_option("yourls")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "f-on_conflict"
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.get_by_role("heading", name="What the import would do").wait_for(timeout=VISIBLE_WITHIN_MS)
    plan = page.get_by_role("status").first.inner_text()
    assert "Nothing has changed yet" in plan
    rows = page.locator("table.report tbody tr")
    assert rows.count() >= 3
    assert page.locator("table.report .badge.outcome-create").count() >= 2
    assert page.locator("table.report .badge.outcome-skip").first.is_visible()  # the reserved code
    problems = [(v["id"], v["targets"][:3]) for v in axe_violations(page)]
    assert problems == [], problems
    keep_screenshot(page, "dashboard-import-plan-phone-light", full_page=True)

    confirm = page.get_by_role("button", name="Import ")
    confirm.focus()
    page.keyboard.press("Enter")
    page.get_by_text("Imported:").wait_for(timeout=VISIBLE_WITHIN_MS)
    created = page.locator("table.report .badge.outcome-create").count()
    assert f"{created} link" in page.get_by_role("status").first.inner_text()

    # Tick two links with the keyboard (Space), pause them, and the list says so.
    page.goto(server.base_url + "/links")
    boxes = page.locator("input[name=ids]")
    assert boxes.count() == created
    for index in range(2):
        boxes.nth(index).focus()
        page.keyboard.press("Space")
    page.get_by_label("Action").select_option("pause")
    page.get_by_role("button", name="Apply").click()
    page.get_by_text("2 links paused.").wait_for(timeout=VISIBLE_WITHIN_MS)

    # Tick every link of the page at once (the script's box), tag them, filter by the tag.
    page.get_by_label("Tick every link on this page").check()
    assert all(boxes.nth(index).is_checked() for index in range(boxes.count()))
    page.get_by_label("Action").select_option("tag")
    page.get_by_label("Tag (to add or remove)").fill("moved")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**bulk=tag*")
    assert page.get_by_role("status").first.inner_text() == f"{created} links tagged."
    page.get_by_label("Tag", exact=True).select_option("moved")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**tag=moved*")
    assert page.locator("input[name=ids]").count() == created

    # Every link as CSV, and one chart's figures.
    with page.expect_download() as download:
        page.get_by_role("link", name="Export all links (CSV)").click()
    records = list(csv.DictReader(io.StringIO(download.value.path().read_text(encoding="utf-8"))))
    assert len(records) == created and all(record["tags"].startswith("moved") for record in records)
    page.goto(server.base_url + "/analytics?days=365")
    with page.expect_download() as download:
        page.get_by_role("link", name="Download CSV of Clicks by day").click()
    assert download.value.suggested_filename == "analytics.csv"
    sections = {row["section"] for row in csv.DictReader(io.StringIO(download.value.path().read_text()))}
    assert sections == {"summary", "clicksByDay"}
    context.close()


def test_the_new_pages_are_accessible_and_fit_a_phone_light_and_dark(server, browser):
    problems = []

    for width_name, viewport in (("phone", PHONE), ("desktop", DESKTOP)):
        context = browser.new_context(viewport=viewport)
        page = context.new_page()
        sign_in_with_chromium(page, server, EMAIL, PASSWORD)
        for name, path in (("import", "/import"), ("links-bulk", "/links"), ("analytics-csv", "/analytics")):
            page.goto(server.base_url + path)
            problems += light_and_dark_problems(page, (name, width_name), f"dashboard-{name}-{width_name}")
        # The bulk delete's confirmation page, reached by ticking one link.
        page.goto(server.base_url + "/links")
        page.locator("input[name=ids]").first.check()
        page.get_by_label("Action").select_option("delete")
        page.get_by_role("button", name="Apply").click()
        page.get_by_role("heading", name="Delete 1 link?").wait_for(timeout=VISIBLE_WITHIN_MS)
        problems += light_and_dark_problems(page, ("bulk-delete", width_name), f"dashboard-bulk-delete-{width_name}")
        context.close()
    assert problems == [], "\n".join(map(str, problems))
