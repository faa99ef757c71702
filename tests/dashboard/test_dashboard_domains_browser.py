"""The Domains pages in Chromium against a live server that asks a real DNS server on 127.0.0.1:
a person adds a domain, copies the record it shows, creates it (on the test DNS server), and
"Check now" makes it verified; every Domains page is axe-clean and fits a 375 px phone in light
and dark."""

from __future__ import annotations

import pytest

from tests.support.accessibility import light_and_dark_problems
from tests.support.browser import (
    DESKTOP,
    PHONE,
    VISIBLE_WITHIN_MS,
    chromium_and_destination,
    dashboard_server,
    sign_in_with_chromium,
)
from throwaway.dns_server import DnsServer

EMAIL, PASSWORD = "brand@example.com", "a long enough password"


@pytest.fixture(scope="module")
def dns():
    with DnsServer() as server:
        yield server


@pytest.fixture(scope="module")
def server(tmp_path_factory, dns):
    directory = tmp_path_factory.mktemp("dashboard-domains")
    with dashboard_server(directory, EMAIL, PASSWORD, domains_nameservers=dns.address) as live:
        yield live


@pytest.fixture(scope="module")
def browser(server):
    with chromium_and_destination() as launched:
        yield launched


def test_a_person_adds_a_domain_creates_its_record_and_checks_it_verified(server, browser, dns):
    context = browser.new_context(viewport=PHONE)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.base_url)
    page = context.new_page()
    sign_in_with_chromium(page, server, EMAIL, PASSWORD)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Domains").click()
    page.get_by_label("Domain name").fill("go.brand.example")
    page.get_by_role("button", name="Add the domain").click()
    page.get_by_text("The domain was added").wait_for(timeout=VISIBLE_WITHIN_MS)
    assert page.get_by_text("waiting for the DNS record").is_visible()
    record = page.locator("dl.record code")
    kind, name, value = (record.nth(index).inner_text() for index in range(3))
    assert (kind, name) == ("TXT", "_shortlink-verify.go.brand.example") and value.startswith("shortlink-verify=")
    page.get_by_role("button", name="Copy value").click()
    assert page.evaluate("navigator.clipboard.readText()") == value

    dns.set_txt(name, value)
    page.get_by_role("button", name="Check now").click()
    page.get_by_text("the record was found").wait_for(timeout=VISIBLE_WITHIN_MS)
    assert page.locator(".badge", has_text="verified").first.is_visible()
    page.get_by_role("link", name="← Domains").click()
    assert page.get_by_role("link", name="go.brand.example").is_visible()
    context.close()


def test_every_domains_page_is_accessible_and_fits_a_phone_in_light_and_dark(server, browser):
    signed_in = browser.new_context(viewport=DESKTOP)
    page = signed_in.new_page()
    sign_in_with_chromium(page, server, EMAIL, PASSWORD)
    page.goto(server.base_url + "/domains")
    page.get_by_label("Domain name").fill("links.other-brand.example")
    page.get_by_role("button", name="Add the domain").click()
    page.get_by_text("The domain was added").wait_for(timeout=VISIBLE_WITHIN_MS)
    domain = page.url.split("?")[0].removeprefix(server.base_url)
    page.get_by_role("button", name="Check now").click()  # a check that found nothing: its error shown
    page.get_by_text("the record was not found yet").wait_for(timeout=VISIBLE_WITHIN_MS)
    state = signed_in.storage_state()
    signed_in.close()
    pages = {"domains": "/domains", "domain": domain, "domain-remove": f"{domain}/remove"}
    problems = []
    context = browser.new_context(viewport=PHONE, storage_state=state)
    page = context.new_page()
    for name, path in pages.items():
        page.goto(server.base_url + path)
        assert page.url == server.base_url + path, (name, page.url)
        problems += light_and_dark_problems(page, (name,), f"dashboard-{name}-phone")
    # A refused name, its error beside the field.
    page.goto(server.base_url + "/domains")
    page.get_by_label("Domain name").fill("https://bad.example/path")
    page.get_by_role("button", name="Add the domain").click()
    page.get_by_text("no scheme, port or path").wait_for(timeout=VISIBLE_WITHIN_MS)
    problems += light_and_dark_problems(page, ("domains-error",), "dashboard-domains-error-phone")
    context.close()
    assert problems == [], "\n".join(map(str, problems))
