"""Where a link goes, changed from the link's page in Debian's Chromium at 375 px: the address
its QR code holds then leads to the new address, the list shows the new destination beside
the one the link was created for, a refused address is said beside the field, and the page
passes axe-core in light and dark; the forms work without a script."""

from __future__ import annotations

import io

import pytest
import zxingcpp
from PIL import Image

from tests.support.accessibility import light_and_dark_problems
from tests.support.browser import (
    PHONE,
    VISIBLE_WITHIN_MS,
    api,
    chromium_and_destination,
    dashboard_server,
    sign_in_with_chromium,
)

EMAIL, PASSWORD = "mover@example.com", "a long enough password"
PRINTED = "https://example.com/printed-menu"
MOVED = "https://www.youtube.com/watch?v=moved"  # the stand-in destination site answers it


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with dashboard_server(tmp_path_factory.mktemp("destination"), EMAIL, PASSWORD) as server:
        yield server


@pytest.fixture(scope="module")
def browser(server):
    with chromium_and_destination() as launched:
        yield launched


def test_everyone_is_sent_elsewhere_from_the_link_page_and_the_qr_code_follows(server, browser):
    key = server.create_key(EMAIL)
    link = api(server, "POST", "/api/v1/links", key, {"originalUrl": PRINTED})
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    sign_in_with_chromium(page, server, EMAIL, PASSWORD)
    page.goto(f"{server.base_url}/links/{link['id']}")
    problems: list = []
    assert "(the address the link was created for)" in page.locator("#destination-now").inner_text()

    # A refused address: said beside the field, nothing changed.
    field = page.get_by_label("Send everyone to another address")
    field.fill(link["shortUrl"])
    page.get_by_role("button", name="Send everyone there").click()
    error = page.locator("#e-destination")
    error.wait_for(timeout=VISIBLE_WITHIN_MS)
    assert "loop" in error.inner_text() or "this link" in error.inner_text(), error.inner_text()
    assert field.get_attribute("aria-invalid") == "true"
    problems += light_and_dark_problems(page, ("refused",), "destination-refused-phone")

    field.fill(MOVED)
    page.get_by_role("button", name="Send everyone there").click()
    page.get_by_role("status").filter(has_text="now lead there").wait_for(timeout=VISIBLE_WITHIN_MS)
    now = page.locator("#destination-now").inner_text()
    assert now.startswith(f"Visitors go to {MOVED} since ") and now.endswith(f"(created for {PRINTED}).")
    assert "through the dashboard" in page.get_by_role("list").filter(has_text=MOVED).inner_text()
    problems += light_and_dark_problems(page, ("moved",), "destination-moved-phone")

    # The QR code the page offers holds the short URL, which now leads to the new address.
    png = page.request.get(f"{server.base_url}/links/{link['id']}/qr?format=png&size=400")
    assert png.ok
    (symbol,) = zxingcpp.read_barcodes(Image.open(io.BytesIO(png.body())))
    assert symbol.text == link["shortUrl"]
    page.goto(symbol.text)
    assert page.url == MOVED and page.locator("#path").inner_text() == "/watch?v=moved"

    # The list shows where the link goes now, beside what it was created for.
    page.goto(f"{server.base_url}/links")
    row = page.get_by_role("table", name="Your links").locator("tbody tr", has_text=link["shortCode"])
    assert f"{MOVED} (now; created for {PRINTED})" in row.inner_text()
    problems += light_and_dark_problems(page, ("list",), "destination-list-phone")

    context.close()

    # And back to the original address, without a script: the forms are plain forms.
    context = browser.new_context(viewport=PHONE, java_script_enabled=False)
    page = context.new_page()
    sign_in_with_chromium(page, server, EMAIL, PASSWORD)
    page.goto(f"{server.base_url}/links/{link['id']}")
    page.get_by_role("button", name="Send them to the original address again").click()
    page.get_by_role("status").filter(has_text="now lead there").wait_for(timeout=VISIBLE_WITHIN_MS)
    assert "(the address the link was created for)" in page.locator("#destination-now").inner_text()
    assert api(server, "GET", f"/api/v1/links/{link['id']}/destination", key)["url"] == PRINTED
    context.close()
    assert problems == [], "\n".join(map(str, problems))
