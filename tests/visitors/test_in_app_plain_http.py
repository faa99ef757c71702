"""The in-app page's way out to the browser on a plain-http short host, through the real app:
Android's intent carries scheme=http; iOS, whose x-safari- escape needs https, gets the link to
copy instead, and the page says only what it offers."""

from __future__ import annotations

import base64
import hashlib

import pytest

from tests.support.html_page import Page
from tests.support.visitors import FACEBOOK_ANDROID, INSTAGRAM_IOS, YOUTUBE, make_link, visit

pytestmark = pytest.mark.both_backends

APP = "youtube://www.youtube.com/watch?v=dQw4w9WgXcQ"


def script_hashes(response) -> list[str]:
    policy = dict(part.strip().split(" ", 1) for part in response.headers["content-security-policy"].split(";"))
    return policy["script-src"].split()


def sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def test_ios_in_app_on_http_offers_the_link_to_copy_and_no_browser_it_cannot_open(make_client, auth):
    client = make_client(links_short_host="http://sho.rt")
    code = make_link(client, auth, originalUrl=YOUTUBE)["shortCode"]
    response = visit(client, code, ua=INSTAGRAM_IOS, query="utm_source=a|b")
    assert response.status_code == 200
    page = Page(response.text)
    with_utm = "&utm_source=a%7Cb"
    assert page.anchors == [(APP + with_utm, "Open in app"), (YOUTUBE + with_utm, "Continue")]
    text = " ".join(page.text)
    assert "in your browser, or continue" not in text and "copy the link below" in text
    # The link to press and hold, and a Copy button the script shows where it can copy.
    assert f"http://sho.rt/l/{code}?utm_source=a%7Cb" in page.text
    copy_button = next(attrs for tag, attrs in page.tags if tag == "button")
    assert copy_button["id"] == "copy" and "hidden" in copy_button
    scripts = [source for attrs, source in page.scripts if attrs.get("type") != "application/json"]
    assert len(scripts) == 1 and sha256(scripts[0]) in script_hashes(response)
    assert "x-safari-" not in response.text


def test_android_in_app_on_http_opens_the_browser_with_an_http_intent(make_client, auth):
    client = make_client(links_short_host="http://sho.rt")
    code = make_link(client, auth, originalUrl=YOUTUBE)["shortCode"]
    page = Page(visit(client, code, ua=FACEBOOK_ANDROID).text)
    anchors = {label: href for href, label in page.anchors}
    assert anchors["Open in browser"] == f"intent://sho.rt/l/{code}?iab=1#Intent;scheme=http;end"
    assert 'id="short-url"' not in visit(client, code, ua=FACEBOOK_ANDROID).text


def test_ios_in_app_on_https_keeps_its_safari_escape_and_no_copy(client, auth):
    code = make_link(client, auth, originalUrl=YOUTUBE)["shortCode"]
    response = visit(client, code, ua=INSTAGRAM_IOS)
    assert Page(response.text).anchors == [
        (APP, "Open in app"),
        (f"x-safari-https://sho.rt/l/{code}?iab=1", "Open in browser"),
        (YOUTUBE, "Continue"),
    ]
    assert 'id="short-url"' not in response.text and "<script>" not in response.text
