"""Bio pages and public shortening end to end: real servers, real Chromium.

The bio page is built through the application layer from this process, on the live
server's database file, as the dashboard's editor will (the server notices the other
process's commits). Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta

import pytest

from shortlink.accounts import service as accounts
from shortlink.application.bio import Bio
from shortlink.application.hosts import Hosts
from shortlink.application.links import Links
from shortlink.bio import service
from shortlink.bio.schema import SavePage
from shortlink.links.schema import CreateLink
from shortlink.storage import connect
from shortlink.storage.sqlite import SqliteDatabase
from tests.support.accessibility import axe_violations, light_and_dark_problems
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
from tests.support.visitors import ANDROID_CHROME, FACEBOOK_BOT, INSTAGRAM_IOS, IPHONE
from throwaway.live_server import LiveServer

pytestmark = pytest.mark.slow

CREATOR = "creator@example.com"
OPERATOR = "operator@example.com"
HOURLY = 3


def _account(server: LiveServer, email: str) -> tuple[str, int]:
    conn = connect(server.db)
    try:
        key = accounts.create_key(conn, email).key
        return key, accounts.account_for(conn, email)["id"]
    finally:
        conn.close()


def bio_of(server: LiveServer) -> Bio:
    """The application layer over the live server's file, as another process."""
    db = SqliteDatabase(server.db)
    hosts = Hosts(server.base_url)
    return Bio(db=db, hosts=hosts, links=Links(db=db, hosts=hosts, daily_limit=1000, fetch_titles=False))


async def _build_page(server: LiveServer, account_id: int, key: str) -> dict:
    bio = bio_of(server)
    try:
        await bio.save(
            account_id,
            SavePage(handle="creator", title="Creator's links", description="Videos and more", is_published=True),
        )
        _, video = await bio.create_button(account_id, CreateLink(original_url=VIDEO, title="My new video"))
        existing = api(server, "POST", "/api/v1/links", key, {"originalUrl": "https://example.com/shop"})
        await bio.add_button(account_id, existing["id"], "Shop")
        hidden = api(server, "POST", "/api/v1/links", key, {"originalUrl": "https://example.com/draft"})
        await bio.add_button(account_id, hidden["id"], "Draft")
        await bio.update_button(account_id, hidden["id"], is_hidden=True)
        return {"video": video.id, "shop": existing["id"]}
    finally:
        bio.db.close()


def _stats(server: LiveServer, account_id: int):
    """The page's figures as the editor shows them (read with the rule function on a plain
    connection: Playwright's own event loop runs in this thread)."""
    conn = connect(server.db)
    try:
        today = datetime.now(UTC).date()
        return service.stats(conn, account_id, today - timedelta(days=29), today)
    finally:
        conn.close()


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """A server as shipped (public shortening off) holding the bio page, and one with public
    shortening on; the stand-in destination site."""
    with destination_site() as destination_port:
        bio_server = LiveServer(tmp_path_factory.mktemp("bio"))
        creator_key, creator = _account(bio_server, CREATOR)
        public_server = LiveServer(
            tmp_path_factory.mktemp("public"),
            public_enabled="true",
            public_account=OPERATOR,
            public_links_per_hour=str(HOURLY),
            public_blocked_hosts="blocked.example",
        )
        operator_key, _ = _account(public_server, OPERATOR)
        bio_server.start()
        public_server.start()
        links = asyncio.run(_build_page(bio_server, creator, creator_key))
        yield {
            "bio": bio_server,
            "public": public_server,
            "creator": creator,
            "creator_key": creator_key,
            "operator_key": operator_key,
            "links": links,
            "destination_port": destination_port,
        }
        bio_server.stop()
        public_server.stop()


@pytest.fixture(scope="module")
def browser(servers):
    with chromium(servers["destination_port"]) as launched:
        yield launched


def open_bio_page(browser, server, user_agent, **options):
    context = phone(browser, user_agent, **options)
    page = context.new_page()
    response = page.goto(f"{server.base_url}/@creator")
    assert response.status == 200
    buttons = page.locator("a.button")
    assert buttons.all_inner_texts() == ["My new video", "Shop"]  # the hidden one is not shown
    return context, page


def test_phones_tap_a_button_and_land_on_the_app_opening_path(servers, browser):
    server = servers["bio"]
    # iPhone (scripts off, so the page that tries the app stays to be looked at).
    context, page = open_bio_page(browser, server, IPHONE, java_script_enabled=False)
    keep_screenshot(page, "bio-iphone")
    page.get_by_text("My new video").click()
    assert page.url == f"{server.base_url}/l/{page_code(servers)}"
    page.get_by_text("Open in app").wait_for(timeout=VISIBLE_WITHIN_MS)
    assert page.get_by_text("Continue to website").get_attribute("href") == VIDEO
    context.close()
    # Instagram's in-app browser: the in-app page, with the app first. ("Open in browser"
    # needs https short URLs, which this plain-http server cannot have; tests/test_browser_e2e.)
    context, page = open_bio_page(browser, server, INSTAGRAM_IOS, java_script_enabled=False)
    page.get_by_text("My new video").click()
    assert (
        page.get_by_text("Open in app", exact=True).get_attribute("href")
        == "youtube://www.youtube.com/watch?v=dQw4w9WgXcQ"
    )
    for label in ("Open in app", "Continue"):
        page.get_by_text(label, exact=True).wait_for(timeout=VISIBLE_WITHIN_MS)
    keep_screenshot(page, "bio-instagram-tapped")
    context.close()
    # Android Chrome: the tap is answered with an intent for the YouTube app.
    context, page = open_bio_page(browser, server, ANDROID_CHROME)
    locations = []
    page.on("response", lambda response: locations.append(response.headers.get("location", "")))
    try:
        page.get_by_text("My new video").click(timeout=5_000)
    except Exception:  # the intent:// navigation itself fails in a browser without the app
        pass
    wait_for_page(page, lambda: any(locations), 5, "the answer to the tap")
    intent = next(location for location in locations if location)
    assert intent.startswith("intent://www.youtube.com/watch?v=dQw4w9WgXcQ#Intent;")
    assert "package=com.google.android.youtube;" in intent
    context.close()
    # Three views and three clicks through the page, as the dashboard will show them.
    stats = None

    def counted() -> bool:
        nonlocal stats
        stats = _stats(server, servers["creator"])
        return stats.total_views >= 3 and stats.buttons[0].clicks >= 3

    wait_for(counted, timeout=15, what="the views and clicks to be written")
    assert stats is not None
    assert (stats.total_views, [(b.label, b.clicks) for b in stats.buttons]) == (
        3,
        [("My new video", 3), ("Shop", 0), ("Draft", 0)],
    )
    analytics = api(server, "GET", f"/api/v1/links/{servers['links']['video']}/analytics", servers["creator_key"])
    assert {item["referrer"]: item["clicks"] for item in analytics["referrerBreakdown"]} == {"127.0.0.1/@creator": 3}


def page_code(servers) -> str:
    link = api(servers["bio"], "GET", f"/api/v1/links/{servers['links']['video']}", servers["creator_key"])
    return link["shortCode"]


def test_a_link_made_from_the_bio_editor_has_source_bio(servers):
    link = api(servers["bio"], "GET", f"/api/v1/links/{servers['links']['video']}", servers["creator_key"])
    assert (link["source"], link["originalUrl"]) == ("BIO", VIDEO)
    shop = api(servers["bio"], "GET", f"/api/v1/links/{servers['links']['shop']}", servers["creator_key"])
    assert shop["source"] == "API"  # an existing link added to the page keeps its own


def test_the_pages_are_accessible_at_375_px_in_light_and_dark(servers, browser):
    context = browser.new_context(user_agent=IPHONE, viewport={"width": 375, "height": 812}, is_mobile=True)
    page = context.new_page()
    problems = []
    for name, url in [
        ("bio", f"{servers['bio'].base_url}/@creator"),
        ("public-form", f"{servers['public'].base_url}/"),
    ]:
        page.goto(url)
        problems += light_and_dark_problems(page, (name,), name)
    context.close()
    assert problems == [], "\n".join(map(str, problems))


def test_public_shortening_is_off_by_default(servers, browser):
    context = phone(browser, IPHONE)
    page = context.new_page()
    page.goto(f"{servers['bio'].base_url}/")  # the dashboard's sign-in instead
    assert page.url == f"{servers['bio'].base_url}/login"
    assert page.locator("form[action='/shorten']").count() == 0
    context.close()


def shorten(browser, server, url, user_agent=IPHONE, scheme="light"):
    """Fill the form and submit it; returns the context, the page and the POST's response."""
    context = phone(browser, user_agent, color_scheme=scheme, permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.goto(f"{server.base_url}/")
    page.get_by_label("Long URL").fill(url)
    with page.expect_response(lambda response: response.url.endswith("/shorten")) as posted:
        page.get_by_role("button", name="Shorten").click()
    page.wait_for_load_state()
    return context, page, posted.value


def public_links(servers) -> list[dict]:
    return api(servers["public"], "GET", "/api/v1/links?limit=100", servers["operator_key"])


def test_the_public_form_makes_a_link_with_source_public(servers, browser):
    context, page, response = shorten(browser, servers["public"], "https://example.com/a/very/long/path")
    assert response.status == 200
    short_url = page.get_by_label("Short URL").input_value()
    page.get_by_role("button", name="Copy").click()
    wait_for(lambda: page.get_by_role("status").inner_text() == "Copied.", what="the copy button")
    assert page.evaluate("navigator.clipboard.readText()") == short_url
    assert page.get_by_role("img", name=f"QR code of {short_url}").is_visible()
    assert axe_violations(page) == []
    keep_screenshot(page, "public-result", full_page=True)
    context.close()
    [link] = [link for link in public_links(servers) if link["shortUrl"] == short_url]
    data = api(servers["public"], "GET", f"/api/v1/links/{link['id']}", servers["operator_key"])
    assert (data["source"], data["originalUrl"], data["isPasswordProtected"]) == (
        "PUBLIC",
        "https://example.com/a/very/long/path",
        False,
    )
    assert data["expiresAt"] is not None


def test_a_blocked_host_is_refused_with_the_reason(servers, browser):
    before = len(public_links(servers))
    context, page, response = shorten(browser, servers["public"], "https://www.blocked.example/page", scheme="dark")
    assert response.status == 400
    assert "leads to blocked.example, which this service does not link to" in page.get_by_role("alert").inner_text()
    assert page.get_by_label("Long URL").get_attribute("aria-invalid") == "true"
    keep_screenshot(page, "public-refused-dark", full_page=True)
    context.close()
    assert len(public_links(servers)) == before


def test_a_bot_agent_gets_the_form_and_makes_no_link(servers, browser):
    before = len(public_links(servers))
    context, page, response = shorten(browser, servers["public"], "https://example.com/bot", user_agent=FACEBOOK_BOT)
    assert response.status == 200
    assert page.get_by_label("Long URL").is_visible() and page.get_by_text("Your short link").count() == 0
    context.close()
    assert len(public_links(servers)) == before


def test_the_hourly_limit_answers_429_with_retry_after(servers, browser):
    # Every public link of this module came from 127.0.0.1: spend what is left of its bucket.
    made = len(public_links(servers))
    for n in range(HOURLY - made):
        context, _, response = shorten(browser, servers["public"], f"https://example.com/{n}")
        assert response.status == 200
        context.close()
    started = time.monotonic()
    context, page, response = shorten(browser, servers["public"], "https://example.com/one-too-many")
    assert response.status == 429
    retry_after = int(response.headers["retry-after"])
    assert 1 <= retry_after <= 3600 // HOURLY + int(time.monotonic() - started) + 1
    assert "Too many links for now" in page.get_by_role("alert").inner_text()
    keep_screenshot(page, "public-too-many", full_page=True)
    context.close()
    assert len(public_links(servers)) == HOURLY
