"""The visitor pages: complete, self-contained, escaped, and allowed by their own CSP."""

from __future__ import annotations

import base64
import hashlib
import json
import re

import pytest

from shortlink.pages import visitor as pages
from shortlink.visits.appurls import Plan
from tests.support.html_page import Page

HOSTILE_TITLES = ["</script><script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "<!-- x", "Tom & Jerry's <b>"]
VIDEO = "https://www.youtube.com/watch?v=dQw4w9WgXcQ"
STORE = "https://apps.apple.com/app/id544007664"
IOS_PLAN = Plan("ios", VIDEO, VIDEO, auto_url="youtube://www.youtube.com/watch?v=dQw4w9WgXcQ", fallback=STORE)
STORE_PLAN = Plan("store", "https://example.com/", STORE, auto_url=STORE)
IN_APP_PLAN = Plan(
    "in_app", VIDEO, "youtube://www.youtube.com/watch?v=dQw4w9WgXcQ", escape_url="x-safari-https://sho.rt/l/abc?iab=1"
)
ANDROID_IN_APP_PLAN = Plan(
    "in_app",
    VIDEO,
    "intent://www.youtube.com/watch?v=dQw4w9WgXcQ#Intent;scheme=https;"
    "package=com.google.android.youtube;S.browser_fallback_url=https%3A%2F%2Fx.test;end",
    escape_url="intent://sho.rt/l/abc?iab=1#Intent;scheme=https;end",
    fallback="https://x.test",
)


def all_pages(title: str | None = "A title") -> dict[str, str]:
    return {
        "not_found": pages.not_found_page(),
        "paused": pages.paused_page(),
        "expired": pages.expired_page(),
        "password": pages.password_page(VIDEO, title),
        "password_error": pages.password_page(VIDEO, title, "Wrong <password>"),
        "too_many": pages.too_many_attempts_page(42),
        "ios": pages.ios_page(IOS_PLAN, title, IOS_PLAN.location),
        "store": pages.store_page(STORE_PLAN, title, STORE_PLAN.location),
        "in_app": pages.in_app_page(IN_APP_PLAN, title, IN_APP_PLAN.location),
        "android_in_app": pages.in_app_page(ANDROID_IN_APP_PLAN, title, ANDROID_IN_APP_PLAN.location),
    }


def csp_sources(directive: str) -> list[str]:
    policy = dict(part.strip().split(" ", 1) for part in pages.PAGE_HEADERS["Content-Security-Policy"].split(";"))
    return policy[directive].split()


def sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


@pytest.mark.parametrize("name", list(all_pages()))
def test_every_page_is_a_complete_self_contained_document(name):
    document = all_pages()[name]
    assert document.startswith('<!doctype html><html lang="en">') and document.endswith("</html>")
    page = Page(document)
    assert page.stack == []  # every element closed
    tags = [tag for tag, _ in page.tags]
    assert tags[:3] == ["html", "head", "meta"] and tags.count("title") == 1 and "body" in tags
    assert any(tag == "meta" and attrs.get("name") == "viewport" for tag, attrs in page.tags)
    assert "shortlink" in "".join(page.text)
    # No external assets: nothing loads from anywhere, every script is inline.
    assert not any(tag in ("link", "img", "iframe") or "src" in attrs for tag, attrs in page.tags)
    # Everything inline is allowed by the policy's hashes, and nothing else is.
    assert [sha256(style) for style in page.styles] == csp_sources("style-src")
    for attrs, source in page.scripts:
        if attrs.get("type") != "application/json":
            assert sha256(source) in csp_sources("script-src")
    assert not any(name.startswith("on") for _, attrs in page.tags for name in attrs)
    assert "style=" not in document


def test_headers_forbid_caching_indexing_framing_and_foreign_content():
    headers = pages.PAGE_HEADERS
    assert headers["Cache-Control"] == "no-store" and headers["X-Robots-Tag"] == "noindex"
    assert "User-Agent" in headers["Vary"]
    policy = headers["Content-Security-Policy"]
    for directive in (
        "default-src 'none'",
        "form-action 'self' https: http: intent:",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    ):
        assert directive in policy
    assert "unsafe-inline" not in csp_sources("script-src") and "Referrer-Policy" in headers


@pytest.mark.parametrize("title", HOSTILE_TITLES)
def test_hostile_titles_are_escaped(title):
    for name, scripts in (("ios", 2), ("store", 2), ("in_app", 0), ("android_in_app", 2)):
        document = all_pages(title)[name]
        assert title not in document
        page = Page(document)
        assert title in "".join(page.text)  # shown as text, not markup
        assert [tag for tag, _ in page.tags].count("script") == scripts
        assert not any(tag == "img" for tag, _ in page.tags)


def test_hostile_urls_cannot_leave_the_json_block_or_an_attribute():
    hostile = 'https://example.com/</script><script>alert(1)</script>?a="b"&c=<d>'
    document = pages.ios_page(
        Plan("ios", hostile, hostile, auto_url="youtube://x/</script>", fallback=hostile), None, hostile
    )
    page = Page(document)
    data_blocks = [source for attrs, source in page.scripts if attrs.get("type") == "application/json"]
    assert len(data_blocks) == 1 and "<" not in data_blocks[0] and "&" not in data_blocks[0]
    assert json.loads(data_blocks[0]) == {
        "auto": "youtube://x/</script>",
        "fallback": hostile,
        "delay": pages.FALLBACK_DELAY_MS,
    }
    assert [href for href, _ in page.anchors] == [hostile, hostile]
    assert pages.script_json({"u": "</script>&"}) == '{"u": "\\u003c/script\\u003e\\u0026"}'


def the_script(page: Page) -> tuple[dict, str]:
    data = next(source for attrs, source in page.scripts if attrs.get("type") == "application/json")
    return json.loads(data), next(source for attrs, source in page.scripts if "type" not in attrs)


def test_ios_page_tries_the_app_once_and_falls_back_unless_hidden():
    page = Page(pages.ios_page(IOS_PLAN, "Rick", VIDEO))
    # The button is the https universal link; the website link is the website, never iosUrl.
    assert page.anchors == [(VIDEO, "Open in app"), (VIDEO, "Continue to website")]
    data, script = the_script(page)
    assert data == {"auto": IOS_PLAN.auto_url, "fallback": STORE, "delay": 2500}
    assert "visibilitychange" in script and "pagehide" in script and "location.replace" in script
    assert script.count("location.href=") == 1 and "setInterval" not in script
    assert pages.FALLBACK_DELAY_MS == 2500


def test_store_page_opens_the_store_once_and_keeps_a_button():
    page = Page(pages.store_page(STORE_PLAN, None, STORE_PLAN.location))
    assert page.anchors == [(STORE, "Open in the App Store"), ("https://example.com/", "Continue to website")]
    assert the_script(page)[0] == {"auto": STORE, "fallback": None, "delay": 2500}
    # An App Store link itself: no second button to the same place.
    alone = Page(pages.store_page(Plan("store", STORE, STORE, auto_url=STORE), None, STORE))
    assert alone.anchors == [(STORE, "Open in the App Store")]


def test_in_app_page_offers_app_browser_and_continue():
    page = Page(pages.in_app_page(IN_APP_PLAN, None, IN_APP_PLAN.location))
    assert page.anchors == [
        (IN_APP_PLAN.app_url, "Open in app"),
        (IN_APP_PLAN.escape_url, "Open in browser"),
        (IN_APP_PLAN.location, "Continue"),
    ]
    assert page.scripts == []  # iOS in-app pages never open anything by themselves
    without_escape = Page(pages.in_app_page(Plan("in_app", IN_APP_PLAN.location, IN_APP_PLAN.app_url), None, VIDEO))
    assert without_escape.anchors == [(IN_APP_PLAN.app_url, "Open in app"), (IN_APP_PLAN.location, "Continue")]
    no_app = Page(
        pages.in_app_page(Plan("in_app", "https://example.com/", escape_url=IN_APP_PLAN.escape_url), None, VIDEO)
    )
    assert no_app.anchors == [(IN_APP_PLAN.escape_url, "Open in browser"), ("https://example.com/", "Continue")]
    assert "its app" not in "".join(no_app.text)


def test_android_in_app_page_arms_the_fallback_on_the_app_button_only():
    page = Page(pages.in_app_page(ANDROID_IN_APP_PLAN, None, ANDROID_IN_APP_PLAN.location))
    app_button = next(attrs for tag, attrs in page.tags if tag == "a" and attrs.get("id") == "app")
    assert app_button["href"] == ANDROID_IN_APP_PLAN.app_url
    data, script = the_script(page)
    assert data == {"auto": None, "fallback": "https://x.test", "delay": 1500}
    assert "getElementById('app').addEventListener('click'" in script


def test_password_page_posts_to_the_same_url_and_reveals_only_the_host():
    page = Page(pages.password_page(VIDEO, None, "That password is not right <b>"))
    form = next(attrs for tag, attrs in page.tags if tag == "form")
    assert form == {"method": "post"}  # same URL, query (utm) included
    field = next(attrs for tag, attrs in page.tags if tag == "input")
    assert field["name"] == "password" and field["type"] == "password"
    assert "That password is not right <b>" in page.text
    assert not any(tag == "b" for tag, _ in page.tags)
    assert "youtube.com" in "".join(page.text) and "dQw4w9WgXcQ" not in "".join(page.text)
    assert 'role="alert"' not in pages.password_page(VIDEO, None)


def test_too_many_attempts_says_when_to_retry():
    assert "42 seconds" in pages.too_many_attempts_page(42)
    assert "3 minutes" in pages.too_many_attempts_page(150)


def test_pages_are_small():
    assert all(len(document.encode()) < 4096 for document in all_pages().values())
    assert re.search(r"<title>Link not found · shortlink</title>", pages.not_found_page())


@pytest.mark.parametrize("name", ["password", "ios", "store", "in_app", "android_in_app"])
def test_pages_that_lead_somewhere_say_where(name):
    page = Page(all_pages("Never gonna give you up")[name])
    text = "".join(page.text)
    assert "This link leads to" in text and "Never gonna give you up" in text
    registrable = "example.com" if name == "store" else "youtube.com"
    # The registrable host in bold, its subdomains beside it in plain text.
    assert ("strong", {}) in page.tags and registrable in page.text


def test_a_look_alike_host_shows_its_punycode_and_plain_http_is_flagged():
    cyrillic = "https://www.\u0430pple.com/login"  # а is Cyrillic
    page = Page(pages.in_app_page(Plan("in_app", cyrillic), None, cyrillic))
    text = "".join(page.text)
    assert "\u0430pple.com" in page.text and "www.xn--pple-43d.com" in text
    assert "Not encrypted" not in text
    plain = "".join(Page(pages.password_page("http://example.com:8080/x", None)).text)
    assert "Not encrypted (http)" in plain and "example.com:8080" in plain and "Spelled" not in plain


def test_hostile_hosts_are_escaped():
    document = pages.password_page('https://ex<b>"ample.com/', "<i>title</i>")
    assert "<b>" not in document and "<i>" not in document
