"""The link-rules editor in Debian's Chromium at 375 px: a person adds a rule with the keyboard,
is told when a split's weights miss 100, fixes it, moves and deletes rules and tries the link as
a visitor; every state of the page is axe-clean in light and dark and no wider than the phone."""

from __future__ import annotations

import pytest

from tests.support.accessibility import light_and_dark_problems
from tests.support.browser import (
    PHONE,
    VISIBLE_WITHIN_MS,
    api,
    chromium_and_destination,
    dashboard_server,
    phone,
    sign_in_with_chromium,
    wait_for_page,
)
from tests.support.visitors import IPHONE

EMAIL, PASSWORD = "rules@example.com", "a long enough password"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with dashboard_server(tmp_path_factory.mktemp("rules-editor"), EMAIL, PASSWORD) as server:
        yield server


@pytest.fixture(scope="module")
def browser(server):
    with chromium_and_destination() as launched:
        yield launched


def test_rules_are_edited_and_tried_at_375_px_with_the_keyboard(server, browser):
    key = server.create_key(EMAIL)
    link = api(server, "POST", "/api/v1/links", key, {"originalUrl": "https://example.com/landing"})
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    sign_in_with_chromium(page, server, EMAIL, PASSWORD)
    page.goto(f"{server.base_url}/links/{link['id']}")
    page.get_by_role("link", name="Link rules").click()
    problems: list = []
    problems += light_and_dark_problems(page, ("empty",), "link-rules-empty-phone")

    # Add a rule with the keyboard alone: type in the fields, Enter saves.
    page.get_by_label("Country codes (DE, FR, …)").focus()
    page.keyboard.type("de")
    page.keyboard.press("Tab")  # to the languages field, left empty
    page.get_by_label("URL (go to a URL)").focus()
    page.keyboard.type("https://example.com/de")
    page.keyboard.press("Enter")
    page.get_by_role("status").filter(has_text="Saved.").wait_for(timeout=VISIBLE_WITHIN_MS)
    assert page.get_by_label("Country codes (DE, FR, …)").first.input_value() == "DE"

    # A split whose weights miss 100: told so, in an alert and beside the rule.
    page.locator("#f-r1-os").fill("android")
    page.locator("#f-r1-action").select_option("split")
    page.locator("#f-r1-split").fill("50 https://example.com/a\n40 https://example.com/b")
    page.get_by_role("button", name="Save rules").first.click()
    alert = page.get_by_role("alert")
    alert.wait_for(timeout=VISIBLE_WITHIN_MS)
    assert "rules[1].split: weights must sum to 100 (they sum to 90)" in alert.inner_text()
    assert page.locator("#e-rule-1").is_visible()
    problems += light_and_dark_problems(page, ("refused",), "link-rules-refused-phone")
    page.locator("#f-r1-split").fill("50 https://example.com/a\n50 https://example.com/b")
    page.get_by_role("button", name="Save rules").first.click()
    page.get_by_role("status").filter(has_text="Saved.").wait_for(timeout=VISIBLE_WITHIN_MS)

    # Move the split up, then try the link as a visitor from Germany on a desktop.
    page.get_by_role("button", name="Move rule 2 up").click()
    page.get_by_role("status").filter(has_text="Saved.").wait_for(timeout=VISIBLE_WITHIN_MS)
    assert page.locator("#f-r0-os").input_value() == "android"
    page.get_by_label("Country code", exact=True).fill("DE")
    page.get_by_role("button", name="Try as a visitor").click()
    tried = page.locator("#test-result")
    tried.wait_for(timeout=VISIBLE_WITHIN_MS)
    assert "Rule 2 holds." in tried.inner_text() and "https://example.com/de" in tried.inner_text()
    problems += light_and_dark_problems(page, ("tried",), "link-rules-tried-phone")

    # Delete the split: the German rule is rule 1 again.
    page.get_by_role("button", name="Delete rule 1").click()
    page.get_by_role("status").filter(has_text="Saved.").wait_for(timeout=VISIBLE_WITHIN_MS)
    assert page.locator("#f-r0-country").input_value() == "DE" and page.locator("#f-r1-os").input_value() == ""
    rules = api(server, "GET", f"/api/v1/links/{link['id']}/rules", key)["rules"]
    assert rules == [
        {
            "conditions": [{"type": "country", "values": ["DE"]}],
            "url": "https://example.com/de",
            "split": None,
            "rewrite": None,
        }
    ]
    context.close()
    assert problems == [], "\n".join(map(str, problems))


def test_the_not_yet_and_capped_pages_are_accessible_on_a_phone(server, browser):
    key = server.create_key(EMAIL)
    later = api(server, "POST", "/api/v1/links", key, {"originalUrl": "https://example.com/later"})
    api(server, "PUT", f"/api/v1/links/{later['id']}/rules", key, {"rules": [], "startsAt": "2999-01-01T00:00:00Z"})
    capped = api(server, "POST", "/api/v1/links", key, {"originalUrl": "https://example.com/once"})
    api(server, "PUT", f"/api/v1/links/{capped['id']}/rules", key, {"rules": [], "maxClicks": 1})
    assert server.request("GET", f"/l/{capped['shortCode']}", headers={"User-Agent": IPHONE})[0] == 302
    context = phone(browser, IPHONE, viewport=PHONE)
    page = context.new_page()
    problems: list = []
    for name, code, heading, status in (
        ("not-yet", later["shortCode"], "Not open yet", 200),
        ("capped", capped["shortCode"], "Link unavailable", 410),
    ):
        response = page.goto(f"{server.base_url}/l/{code}")
        assert response is not None and response.status == status, name
        assert page.get_by_role("heading", name=heading).is_visible(), name
        if name == "not-yet":
            assert "This link opens on 2999-01-01 at 00:00 UTC." in page.inner_text("body")
        problems += light_and_dark_problems(page, (name,), f"link-rules-{name}-phone")
    context.close()
    assert problems == [], "\n".join(map(str, problems))


ACTION_INPUTS = {"url": ("url",), "split": ("split",), "rewrite": ("table", "hosts")}


def shown_inputs(page, index: int) -> set[str]:
    """Which action inputs of card `index` a person sees."""
    names = [name for names in ACTION_INPUTS.values() for name in names]
    return {name for name in names if page.locator(f"#f-r{index}-{name}").is_visible()}


def test_the_testers_answer_comes_into_view_with_focus_at_375_px(server, browser):
    key = server.create_key(EMAIL)
    link = api(server, "POST", "/api/v1/links", key, {"originalUrl": "https://example.com/far"})
    countries = ["FR", "IT", "ES", "NL", "BE", "PL", "SE", "DK", "NO", "FI", "PT", "IE"]
    rules = [{"conditions": [{"type": "country", "values": [c]}], "url": f"https://example.com/{c}"} for c in countries]
    api(server, "PUT", f"/api/v1/links/{link['id']}/rules", key, {"rules": rules})
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    sign_in_with_chromium(page, server, EMAIL, PASSWORD)
    page.goto(f"{server.base_url}/links/{link['id']}/rules")
    page.get_by_label("Country code", exact=True).fill("SE")
    page.get_by_role("button", name="Try as a visitor").click()
    answer = page.locator("#test-result")
    answer.wait_for(timeout=VISIBLE_WITHIN_MS)
    assert page.url.endswith("/rules/try#test-result")
    wait_for_page(page, lambda: page.evaluate("document.activeElement.id") == "test-result", what="focus on the answer")
    top, bottom, height = page.evaluate(
        "(() => { const box = document.getElementById('test-result').getBoundingClientRect();"
        " return [box.top, box.bottom, window.innerHeight]; })()"
    )
    assert top >= 0 and bottom <= height, (top, bottom, height)
    assert page.evaluate("window.scrollY") > 2 * PHONE["height"]  # the answer is far down the page
    text = answer.inner_text()
    assert "Rule 7 holds.\n" in text and "The visitor is sent to https://example.com/SE (HTTP status 302)." in text
    problems = light_and_dark_problems(page, ("answer",), "link-rules-answer-phone")
    context.close()
    assert problems == [], "\n".join(map(str, problems))


def test_each_rule_shows_only_the_inputs_of_its_chosen_action(server, browser):
    key = server.create_key(EMAIL)
    link = api(server, "POST", "/api/v1/links", key, {"originalUrl": "https://www.amazon.com/dp/B0SHOWN"})
    rewrite = {"conditions": [{"type": "country", "values": ["DE"]}], "rewrite": {"table": "amazon"}}
    api(server, "PUT", f"/api/v1/links/{link['id']}/rules", key, {"rules": [rewrite]})
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    sign_in_with_chromium(page, server, EMAIL, PASSWORD)
    page.goto(f"{server.base_url}/links/{link['id']}/rules")
    problems: list = []
    # The saved rewrite shows its inputs; the blank card shows the URL's, its default action.
    wait_for_page(page, lambda: shown_inputs(page, 1) == {"url"}, what="the blank card's URL input alone")
    assert shown_inputs(page, 0) == {"table", "hosts"}
    for action in ("split", "rewrite", "url"):
        page.locator("#f-r1-action").select_option(action)
        assert shown_inputs(page, 1) == set(ACTION_INPUTS[action]), action
        if action == "split":
            problems += light_and_dark_problems(page, ("split chosen",), "link-rules-split-chosen-phone")
    # What is typed in the chosen action's input is saved.
    page.locator("#f-r1-action").select_option("split")
    page.locator("#f-r1-split").fill("70 https://example.com/a\n30 https://example.com/b")
    page.get_by_role("button", name="Save rules").first.click()
    page.get_by_role("status").filter(has_text="Saved.").wait_for(timeout=VISIBLE_WITHIN_MS)
    assert shown_inputs(page, 1) == {"split"} and shown_inputs(page, 0) == {"table", "hosts"}
    saved = api(server, "GET", f"/api/v1/links/{link['id']}/rules", key)["rules"]
    assert [variant["weight"] for variant in saved[1]["split"]] == [70, 30]
    context.close()
    assert problems == [], "\n".join(map(str, problems))


def test_rules_are_saved_without_javascript(server, browser):
    key = server.create_key(EMAIL)
    link = api(server, "POST", "/api/v1/links", key, {"originalUrl": "https://example.com/plain"})
    context = browser.new_context(viewport=PHONE, java_script_enabled=False)
    page = context.new_page()
    sign_in_with_chromium(page, server, EMAIL, PASSWORD)
    page.goto(f"{server.base_url}/links/{link['id']}/rules")
    assert shown_inputs(page, 0) == {"url", "split", "table", "hosts"}  # every action's, without a script
    page.locator("#f-r0-country").fill("fr")
    page.locator("#f-r0-action").select_option("split")
    page.locator("#f-r0-split").fill("50 https://example.com/a\n50 https://example.com/b")
    page.get_by_role("button", name="Save rules").first.click()
    page.get_by_role("status").filter(has_text="Saved.").wait_for(timeout=VISIBLE_WITHIN_MS)
    saved = api(server, "GET", f"/api/v1/links/{link['id']}/rules", key)["rules"]
    assert saved[0]["conditions"] == [{"type": "country", "values": ["FR"]}]
    assert [variant["url"] for variant in saved[0]["split"]] == ["https://example.com/a", "https://example.com/b"]
    context.close()
