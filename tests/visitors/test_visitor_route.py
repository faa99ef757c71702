"""GET/HEAD/POST /l/<code> through the real app: every response kind."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, quote, unquote, urlsplit

import pytest
from litestar.testing import TestClient

from shortlink.accounts import service as accounts
from shortlink.web.asgi import create_app
from tests.conftest import SHORT_HOST, bearer
from tests.support.helpers import wait_for, wait_for_domain
from tests.support.html_page import Page
from tests.support.visitors import (
    ANDROID_CHROME,
    ANDROID_FIREFOX,
    APP_STORE,
    DESKTOP,
    FACEBOOK_ANDROID,
    FACEBOOK_BOT,
    INSTAGRAM_IOS,
    IPHONE,
    PLAY,
    SAMSUNG,
    YOUTUBE,
    assert_visitor_headers,
    clicks,
    flush,
    make_link,
    page_data,
    visit,
)

pytestmark = pytest.mark.both_backends


def test_desktop_gets_a_302_to_the_destination(client, auth):
    link = make_link(client, auth)
    response = visit(client, link["shortCode"])
    assert response.status_code == 302
    assert response.headers["location"] == "https://example.com/a?b=1#top"
    assert_visitor_headers(response)


def test_utm_parameters_are_forwarded_replacing_same_named_ones(client, auth):
    link = make_link(client, auth, originalUrl="https://example.com/p?utm_source=old&x=1#frag")
    response = visit(client, link["shortCode"], query="utm_source=news&utm_medium=email&other=ignored")
    location = urlsplit(response.headers["location"])
    params = parse_qs(location.query)
    assert params["utm_source"] == ["news"] and params["utm_medium"] == ["email"]
    assert params["x"] == ["1"] and "other" not in params and location.fragment == "frag"


def test_android_chrome_gets_an_intent_with_fallback_and_utm(client, auth):
    link = make_link(client, auth, originalUrl=YOUTUBE)
    response = visit(client, link["shortCode"], ua=ANDROID_CHROME, query="utm_campaign=launch")
    assert response.status_code == 302
    location = response.headers["location"]
    assert location.startswith("intent://www.youtube.com/watch?")
    assert "package=com.google.android.youtube" in location and "scheme=https" in location
    assert "utm_campaign=launch" in location
    fallback = location.split("S.browser_fallback_url=", 1)[1].split(";", 1)[0]
    assert unquote(fallback).startswith("https://www.youtube.com/watch?v=dQw4w9WgXcQ")
    assert "utm_campaign=launch" in unquote(fallback)


def test_android_firefox_gets_the_web_url(client, auth):
    link = make_link(client, auth, originalUrl=YOUTUBE)
    response = visit(client, link["shortCode"], ua=ANDROID_FIREFOX)
    assert response.status_code == 302 and response.headers["location"] == YOUTUBE


def test_android_samsung_internet_gets_the_web_url(client, auth):
    link = make_link(client, auth, originalUrl=YOUTUBE, androidUrl=PLAY)
    response = visit(client, link["shortCode"], ua=SAMSUNG)
    assert response.status_code == 302 and response.headers["location"] == YOUTUBE


def test_iphone_gets_an_interstitial_offering_the_app_and_the_website(client, auth):
    link = make_link(client, auth, originalUrl=YOUTUBE, iosUrl=APP_STORE, androidUrl=PLAY)
    response = visit(client, link["shortCode"], ua=IPHONE, query="utm_source=qr")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert "content-security-policy" in response.headers and "noindex" in response.headers["x-robots-tag"]
    assert_visitor_headers(response)
    page = Page(response.text)
    video = YOUTUBE + "&utm_source=qr"
    # "Open in app" is the https universal link; "Continue to website" the website, not iosUrl,
    # which is where the page goes by itself when the app did not open.
    assert page.anchors == [(video, "Open in app"), (video, "Continue to website")]
    assert page_data(page) == {
        "auto": "youtube://www.youtube.com/watch?v=dQw4w9WgXcQ&utm_source=qr",
        "fallback": APP_STORE + "?utm_source=qr",
        "delay": 2500,
    }


def test_android_in_app_browser_page_through_the_app(client, auth, conn):
    link = make_link(client, auth, originalUrl=YOUTUBE, androidUrl=PLAY)
    code = link["shortCode"]
    response = visit(client, code, ua=FACEBOOK_ANDROID, query="utm_source=fb")
    assert response.status_code == 200 and response.headers["content-type"] == "text/html; charset=utf-8"
    assert_visitor_headers(response)
    play = PLAY + "&utm_source=fb"
    intent = (
        "intent://www.youtube.com/watch?v=dQw4w9WgXcQ&utm_source=fb#Intent;scheme=https;"
        "package=com.google.android.youtube;S.browser_fallback_url=" + quote(play, safe="") + ";end"
    )
    assert Page(response.text).anchors == [
        (intent, "Open in app"),
        (f"intent://sho.rt/l/{code}?utm_source=fb&iab=1#Intent;scheme=https;end", "Open in browser"),
        (YOUTUBE + "&utm_source=fb", "Continue"),
    ]
    # Meta's webviews ignore the intent's fallback: the page goes there itself after a tap.
    assert page_data(Page(response.text)) == {"auto": None, "fallback": play, "delay": 1500}
    flush(client)
    assert len(clicks(conn)) == 1


@pytest.mark.parametrize(
    ("body", "iphone", "android", "samsung"),
    [
        # OTHER: iosUrl/androidUrl are the phone destinations; an App Store one gets the store page.
        (
            {"originalUrl": "https://example.com/app", "iosUrl": APP_STORE, "androidUrl": PLAY},
            ("store", APP_STORE, "https://example.com/app"),
            PLAY,
            PLAY,
        ),
        (
            {"originalUrl": "https://example.com/app", "iosUrl": "https://m.example.com/ios"},
            "https://m.example.com/ios",
            "https://example.com/app",
            "https://example.com/app",
        ),
        (
            {"originalUrl": "https://example.com/app"},
            "https://example.com/app",
            "https://example.com/app",
            "https://example.com/app",
        ),
        # APPSTORE: the store page on iPhones; Android goes to androidUrl, else the App Store's web page.
        ({"originalUrl": APP_STORE, "androidUrl": PLAY}, ("store", APP_STORE, None), PLAY, PLAY),
        ({"originalUrl": APP_STORE}, ("store", APP_STORE, None), APP_STORE, APP_STORE),
        # PLAYSTORE: a plain https redirect on Android; iPhones go to iosUrl, else the Play web page.
        ({"originalUrl": PLAY, "iosUrl": APP_STORE}, ("store", APP_STORE, PLAY), PLAY, PLAY),
        ({"originalUrl": PLAY}, PLAY, PLAY, PLAY),
    ],
)
def test_store_and_other_links_on_phones(client, auth, conn, body, iphone, android, samsung):
    code = make_link(client, auth, **body)["shortCode"]
    response = visit(client, code, ua=IPHONE)
    if isinstance(iphone, tuple):
        _, store, website = iphone
        assert response.status_code == 200 and "location" not in response.headers
        page = Page(response.text)
        assert page.anchors == [(store, "Open in the App Store")] + (
            [(website, "Continue to website")] if website else []
        )
        assert page_data(page) == {"auto": store, "fallback": None, "delay": 2500}
    else:
        assert response.status_code == 302 and response.headers["location"] == iphone
    for ua, expected in ((ANDROID_CHROME, android), (SAMSUNG, samsung)):
        response = visit(client, code, ua=ua)
        assert response.status_code == 302 and response.headers["location"] == expected
    response = visit(client, code)
    assert response.status_code == 302 and response.headers["location"] == body["originalUrl"]
    flush(client)
    assert len(clicks(conn)) == 4  # the store page counts like a redirect


def test_in_app_browsers_are_offered_the_system_browser_for_a_website(client, auth):
    link = make_link(client, auth, originalUrl="https://example.com/a")
    code = link["shortCode"]
    page = Page(visit(client, code, ua=INSTAGRAM_IOS, query="x=a|b").text)
    assert page.anchors == [
        (f"x-safari-https://sho.rt/l/{code}?x=a%7Cb&iab=1", "Open in browser"),
        ("https://example.com/a", "Continue"),
    ]
    back = visit(client, code, ua=INSTAGRAM_IOS, query="x=a|b&iab=1")
    assert back.status_code == 302 and back.headers["location"] == "https://example.com/a"


def test_instagram_424_and_later_escape_through_extbrowser(client, auth):
    code = make_link(client, auth, originalUrl=YOUTUBE)["shortCode"]
    new_instagram = INSTAGRAM_IOS.replace("Instagram 339.0.3.12.91", "Instagram 445.0.0.36.70")
    page = Page(visit(client, code, ua=new_instagram, query="utm_source=a|b").text)
    anchors = {label: href for href, label in page.anchors}
    assert anchors["Open in browser"] == "instagram://extbrowser/?url=" + quote(
        f"https://sho.rt/l/{code}?utm_source=a%7Cb&iab=1", safe=""
    )


def test_in_app_browser_gets_an_escape_to_the_real_browser(client, auth):
    link = make_link(client, auth, originalUrl=YOUTUBE)
    code = link["shortCode"]
    response = visit(client, code, ua=INSTAGRAM_IOS)
    assert response.status_code == 200
    assert Page(response.text).anchors == [
        ("youtube://www.youtube.com/watch?v=dQw4w9WgXcQ", "Open in app"),
        (f"x-safari-https://sho.rt/l/{code}?iab=1", "Open in browser"),
        (YOUTUBE, "Continue"),
    ]
    # Coming back through the escape link: no escape offered again.
    again = visit(client, code, ua=INSTAGRAM_IOS, query="iab=1")
    assert "x-safari-https://" not in again.text


def test_a_repeated_utm_source_is_stored_as_the_one_forwarded(client, auth, conn):
    link = make_link(client, auth)
    response = visit(client, link["shortCode"], query="utm_source=first&utm_source=last")
    assert parse_qs(urlsplit(response.headers["location"]).query)["utm_source"] == ["last"]
    flush(client)
    assert [row["campaign"] for row in clicks(conn)] == ["last"]


def test_previewers_get_the_web_destination_never_an_app_url(client, auth):
    link = make_link(client, auth, originalUrl=YOUTUBE)
    response = visit(client, link["shortCode"], ua=FACEBOOK_BOT)
    assert response.status_code == 302 and response.headers["location"] == YOUTUBE


def test_clicks_are_recorded_with_their_fields_and_head_is_not_counted(client, auth, conn):
    link = make_link(client, auth)
    visit(client, link["shortCode"], query="utm_source=newsletter", Referer="https://www.google.com/search?q=x")
    visit(client, link["shortCode"], ua=FACEBOOK_BOT)
    visit(client, link["shortCode"], ua=IPHONE)
    head = visit(client, link["shortCode"], method="HEAD")
    assert head.status_code == 302 and head.headers["location"] == "https://example.com/a?b=1#top"
    flush(client)
    rows = clicks(conn)
    assert len(rows) == 3
    human, bot, phone = rows
    assert human["is_bot"] == 0 and bot["is_bot"] == 1 and phone["is_bot"] == 0
    assert human["campaign"] == "newsletter" and bot["campaign"] == "None"
    assert human["referrer"] == "www.google.com" and bot["referrer"] == "Direct"
    assert human["user_agent"] == DESKTOP
    assert (human["device"], human["browser"], human["os"]) == ("desktop", "Chrome", "Windows")
    assert (phone["device"], phone["browser"], phone["os"]) == ("mobile", "Mobile Safari", "iOS")
    assert (bot["device"], bot["browser"], bot["os"]) == ("other", "FacebookBot", "Other")
    # The test client's peer is no IP address; countries are tested in test_visit_network.py.
    assert {row["country"] for row in rows} == {"Unknown"}
    assert isinstance(human["visitor"], int) and human["visitor"] != phone["visitor"]
    api = client.get(f"/api/v1/links/{link['id']}", headers=auth).json()["data"]
    assert api["clickCount"] == 3


def test_unknown_code_is_a_404_page(client):
    response = visit(client, "nope12")
    assert response.status_code == 404 and "<html" in response.text.lower()
    assert_visitor_headers(response)


def test_paused_expired_and_deleted_links(client, auth, conn):
    link = make_link(client, auth)
    code = link["shortCode"]
    assert visit(client, code).status_code == 302  # now cached
    client.patch(f"/api/v1/links/{link['id']}", headers=auth, json={"isActive": False})
    paused = visit(client, code)
    assert paused.status_code == 404 and "example.com" not in paused.text
    client.patch(f"/api/v1/links/{link['id']}", headers=auth, json={"isActive": True})
    assert visit(client, code).status_code == 302
    # Expired: make the expiry pass by writing it directly (the API only takes future times).
    soon = datetime.now(UTC) + timedelta(seconds=1)
    client.patch(
        f"/api/v1/links/{link['id']}", headers=auth, json={"expiresAt": soon.isoformat().replace("+00:00", "Z")}
    )
    expired = wait_for(lambda: (answer := visit(client, code)).status_code != 302 and answer, 5, "the expiry")
    assert expired.status_code == 410 and "expired" in expired.text.lower()
    client.delete(f"/api/v1/links/{link['id']}", headers=auth)
    assert visit(client, code).status_code == 404
    flush(client)
    assert clicks(conn) == []


def test_changes_from_another_process_reach_the_cache(client, auth, conn):
    link = make_link(client, auth)
    assert visit(client, link["shortCode"]).status_code == 302
    conn.execute("UPDATE links SET is_active = 0 WHERE public_id = ?", (link["id"],))
    wait_for(lambda: visit(client, link["shortCode"]).status_code != 302, 5, "the cache to hear the change")
    assert visit(client, link["shortCode"]).status_code == 404


def test_password_flow(make_client, new_key, conn):
    client = make_client(limits_password_attempts_per_minute=3)
    # The short host is https, so the remembered-password cookie is Secure: talk https.
    client.base_url = "https://testserver.local"
    auth = bearer(new_key())
    link = make_link(client, auth, password="open sesame", originalUrl=YOUTUBE)
    code = link["shortCode"]

    form = visit(client, code, query="utm_source=qr")
    assert form.status_code == 200 and "<form" in form.text and "password" in form.text
    # Where the password leads (its host) is shown; the path and query are not.
    assert "<strong>youtube.com</strong>" in form.text and "dQw4w9WgXcQ" not in form.text
    assert visit(client, code, ua=FACEBOOK_BOT).status_code == 200  # bots never get past it

    wrong = client.post(
        f"/l/{code}?utm_source=qr", data={"password": "guess"}, headers={"User-Agent": DESKTOP}, follow_redirects=False
    )
    assert wrong.status_code == 403 and "<form" in wrong.text and "dQw4w9WgXcQ" not in wrong.text

    right = client.post(
        f"/l/{code}?utm_source=qr",
        data={"password": "open sesame"},
        headers={"User-Agent": DESKTOP},
        follow_redirects=False,
    )
    assert right.status_code == 303
    assert right.headers["location"].startswith("https://www.youtube.com/watch?v=dQw4w9WgXcQ")
    assert "utm_source=qr" in right.headers["location"]
    cookie = right.headers["set-cookie"]
    assert f"Path=/l/{code}" in cookie and "HttpOnly" in cookie

    # The cookie is remembered (the test client keeps it) and scoped to this link.
    remembered = visit(client, code)
    assert remembered.status_code == 302 and remembered.headers["location"] == YOUTUBE

    # Changing the password forgets every remembered entry.
    client.patch(f"/api/v1/links/{link['id']}", headers=auth, json={"password": "new secret"})
    assert visit(client, code).status_code == 200

    # Attempts are limited per visitor and link: 3 a minute here, and two (wrong, right) were used.
    codes = [
        client.post(
            f"/l/{code}", data={"password": "nope"}, headers={"User-Agent": DESKTOP}, follow_redirects=False
        ).status_code
        for _ in range(3)
    ]
    assert codes == [403, 429, 429]
    flush(client)
    assert len(clicks(conn)) == 2  # the successful entry and the remembered visit; no form page


def test_custom_domain(client, auth, conn, new_key):
    mine = make_link(client, auth)
    other = make_link(client, bearer(new_key("other@example.com")))
    accounts.add_domain(conn, "owner@example.com", "Go.Example.com")
    wait_for_domain(client, "go.example.com")
    assert visit(client, mine["shortCode"], host="go.example.com").status_code == 302
    assert visit(client, other["shortCode"], host="go.example.com").status_code == 404
    assert visit(client, mine["shortCode"]).status_code == 302  # still on the default host
    api = client.get(f"/api/v1/links/{mine['id']}", headers=auth).json()["data"]
    assert api["shortUrl"] == f"https://go.example.com/l/{mine['shortCode']}"
    assert (
        client.get(f"/api/v1/links/{other['id']}", headers=bearer(new_key("other@example.com"))).json()["data"][
            "shortUrl"
        ]
        == f"{SHORT_HOST}/l/{other['shortCode']}"
    )


def test_graceful_stop_writes_every_queued_click(make_config, new_key, conn):
    client = TestClient(app=create_app(make_config(clicks_flush_interval_ms=60_000, clicks_batch_size=100_000)))
    client.__enter__()
    auth = bearer(new_key())
    link = make_link(client, auth)
    for _ in range(50):
        assert visit(client, link["shortCode"]).status_code == 302
    client.__exit__(None, None, None)  # lifespan shutdown: drains the queue
    count = conn.execute("SELECT count(*) FROM clicks").fetchone()[0]
    assert count == 50


@pytest.mark.parametrize("code", ["..%2Fapi", "%2e%2e", "abc%00", "ａｂｃ", "abc/../def"])
def test_path_tricks_never_reach_another_link(client, auth, code):
    make_link(client, auth, customCode="abc")
    response = client.get(f"/l/{code}", headers={"User-Agent": DESKTOP}, follow_redirects=False)
    assert response.status_code == 404


def test_redirects_have_no_body_and_no_content_type(client, auth):
    link = make_link(client, auth)
    for ua in (DESKTOP, ANDROID_CHROME, FACEBOOK_BOT):
        response = visit(client, link["shortCode"], ua=ua)
        assert response.status_code == 302 and response.content == b""
        assert "content-type" not in response.headers and response.headers["content-length"] == "0"


def _expire(conn, link):
    conn.execute("UPDATE links SET expires_at = '2001-01-01T00:00:00.000Z' WHERE public_id = ?", (link["id"],))


# Every response kind of GET /l/<code>: the link, how it is made unavailable, the visitor,
# the status, text of the page (None: a redirect), and whether the GET is counted.
RESPONSE_KINDS = {
    "redirect": ({}, None, DESKTOP, 302, None, True),
    "android intent": ({"originalUrl": YOUTUBE}, None, ANDROID_CHROME, 302, None, True),
    "ios interstitial": ({"originalUrl": YOUTUBE}, None, IPHONE, 200, "Continue to website", True),
    "store page": ({"originalUrl": APP_STORE}, None, IPHONE, 200, "Open in the App Store", True),
    "ios in-app page": ({"originalUrl": YOUTUBE}, None, INSTAGRAM_IOS, 200, "Open in browser", True),
    "android in-app page": ({"originalUrl": YOUTUBE}, None, FACEBOOK_ANDROID, 200, "Open in browser", True),
    "password form": ({"password": "open sesame"}, None, IPHONE, 200, "Password required", False),
    "not found": (None, None, DESKTOP, 404, "Link not found", False),
    "paused": (
        {},
        lambda client, auth, conn, link: client.patch(
            f"/api/v1/links/{link['id']}", headers=auth, json={"isActive": False}
        ),
        DESKTOP,
        404,
        "Link unavailable",
        False,
    ),
    "expired": ({}, lambda client, auth, conn, link: _expire(conn, link), DESKTOP, 410, "Link expired", False),
}


@pytest.mark.parametrize("kind", list(RESPONSE_KINDS))
def test_head_answers_exactly_like_get_without_a_body_and_is_never_counted(client, auth, conn, kind):
    body, close, ua, status, text, counted = RESPONSE_KINDS[kind]
    code = "nope12"
    if body is not None:
        link = make_link(client, auth, **body)
        code = link["shortCode"]
        if close is not None:
            close(client, auth, conn, link)
    head = visit(client, code, ua=ua, method="HEAD")
    get = visit(client, code, ua=ua)
    assert head.status_code == get.status_code == status
    assert head.content == b"" and dict(head.headers) == dict(get.headers)
    assert int(get.headers["content-length"]) == len(get.content)
    assert_visitor_headers(get)
    if text is None:
        assert get.content == b"" and "content-type" not in get.headers and "location" in get.headers
    else:
        assert text in get.text and get.headers["content-type"] == "text/html; charset=utf-8"
    flush(client)
    assert len(clicks(conn)) == (1 if counted else 0)  # the GET's click only


def test_bots_never_get_past_a_password_form(make_client, new_key, conn):
    client = make_client(limits_password_attempts_per_minute=2)
    client.base_url = "https://testserver.local"  # the cookie is Secure
    auth = bearer(new_key())
    code = make_link(client, auth, password="open sesame", originalUrl=YOUTUBE)["shortCode"]
    # The right password from a previewer: the form again, no cookie, nothing revealed or counted.
    for _ in range(5):
        posted = client.post(
            f"/l/{code}", data={"password": "open sesame"}, headers={"User-Agent": FACEBOOK_BOT}, follow_redirects=False
        )
        assert posted.status_code == 200 and "<form" in posted.text
        assert "set-cookie" not in posted.headers and "dQw4w9WgXcQ" not in posted.text
    # Those posts spent none of the attempts of a person at the same address (2 a minute here).
    wrong = client.post(
        f"/l/{code}", data={"password": "guess"}, headers={"User-Agent": DESKTOP}, follow_redirects=False
    )
    right = client.post(
        f"/l/{code}", data={"password": "open sesame"}, headers={"User-Agent": DESKTOP}, follow_redirects=False
    )
    assert (wrong.status_code, right.status_code) == (403, 303)
    # With the remembered-password cookie a person goes on; a previewer still gets the form.
    assert visit(client, code).status_code == 302
    for method in ("GET", "HEAD"):
        bot = visit(client, code, ua=FACEBOOK_BOT, method=method)
        assert bot.status_code == 200 and "location" not in bot.headers
    assert "<form" in visit(client, code, ua=FACEBOOK_BOT).text
    flush(client)
    assert [row["is_bot"] for row in clicks(conn)] == [0, 0]  # the person's entry and visit


def test_a_link_to_its_own_short_url_redirects_to_itself_without_failing(client, auth, conn):
    # Older data may hold such a loop (new links are refused); every visitor gets a plain
    # redirect to it, which browsers end after a few rounds.
    for password in (None, "open sesame"):
        link = make_link(client, auth, **({"password": password} if password else {}))
        code = link["shortCode"]
        own = f"{SHORT_HOST}/l/{code}"
        conn.execute("UPDATE links SET original_url = ?, platform = 'SHORTLINK' WHERE public_id = ?", (own, link["id"]))
        for ua in (DESKTOP, IPHONE, ANDROID_CHROME, SAMSUNG, INSTAGRAM_IOS, FACEBOOK_ANDROID, FACEBOOK_BOT):
            for method in ("GET", "HEAD"):
                response = visit(client, code, ua=ua, method=method)
                if password:
                    assert response.status_code == 200 and "<form" in visit(client, code, ua=ua).text
                else:
                    assert response.status_code == 302 and response.headers["location"] == own, ua
        posted = client.post(
            f"/l/{code}", data={"password": password or ""}, headers={"User-Agent": DESKTOP}, follow_redirects=False
        )
        assert posted.status_code == 303 and posted.headers["location"] == own
