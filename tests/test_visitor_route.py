"""GET/HEAD/POST /l/<code> through the real app: every response kind."""
from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from litestar.testing import TestClient

from shortlink import accounts
from shortlink.web.app import create_app
from tests.conftest import SHORT_HOST, bearer

DESKTOP = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
           "Chrome/131.0.0.0 Safari/537.36")
IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 "
          "(KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1")
ANDROID_CHROME = ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
                  "Chrome/131.0.6778.81 Mobile Safari/537.36")
ANDROID_FIREFOX = "Mozilla/5.0 (Android 14; Mobile; rv:132.0) Gecko/132.0 Firefox/132.0"
INSTAGRAM_IOS = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
                 "(KHTML, like Gecko) Mobile/15E148 Instagram 339.0.3.12.91 (iPhone14,5; iOS 17_5; "
                 "en_US; en; scale=3.00; 1170x2532; 618947271)")
FACEBOOK_BOT = "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"
YOUTUBE = "https://www.youtube.com/watch?v=dQw4w9WgXcQ"


def make_link(client, auth, **body):
    response = client.post("/api/v1/links", headers=auth, json={"originalUrl": "https://example.com/a?b=1#top",
                                                                 **body})
    assert response.status_code == 201, response.text
    return response.json()["data"]


def visit(client, code, ua=DESKTOP, method="GET", query="", **headers):
    url = f"/l/{code}" + (f"?{query}" if query else "")
    return client.request(method, url, headers={"User-Agent": ua, **headers}, follow_redirects=False)


def services_of(client):
    return client.app.state.services


def flush(client):
    with client.portal() as portal:     # the running app's event loop
        portal.call(services_of(client).recorder.flush)


def clicks(conn):
    return conn.execute("SELECT * FROM clicks ORDER BY id").fetchall()


def assert_visitor_headers(response):
    assert response.headers["cache-control"] == "no-store"
    assert "User-Agent" in response.headers["vary"]


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


def test_iphone_gets_an_interstitial_offering_the_app_and_the_website(client, auth):
    link = make_link(client, auth, originalUrl=YOUTUBE)
    response = visit(client, link["shortCode"], ua=IPHONE)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "content-security-policy" in response.headers and "noindex" in response.headers["x-robots-tag"]
    assert_visitor_headers(response)
    assert "youtube" in response.text and "dQw4w9WgXcQ" in response.text


def test_in_app_browser_gets_an_escape_to_the_real_browser(client, auth):
    link = make_link(client, auth, originalUrl=YOUTUBE)
    response = visit(client, link["shortCode"], ua=INSTAGRAM_IOS)
    assert response.status_code == 200
    assert "x-safari-https://" in response.text and "iab=1" in response.text
    # Coming back through the escape link: no escape offered again.
    again = visit(client, link["shortCode"], ua=INSTAGRAM_IOS, query="iab=1")
    assert "x-safari-https://" not in again.text


def test_previewers_get_the_web_destination_never_an_app_url(client, auth):
    link = make_link(client, auth, originalUrl=YOUTUBE)
    response = visit(client, link["shortCode"], ua=FACEBOOK_BOT)
    assert response.status_code == 302 and response.headers["location"] == YOUTUBE


def test_clicks_are_recorded_with_their_fields_and_head_is_not_counted(client, auth, conn):
    link = make_link(client, auth)
    visit(client, link["shortCode"], query="utm_source=newsletter", Referer="https://www.google.com/search?q=x")
    visit(client, link["shortCode"], ua=FACEBOOK_BOT)
    head = visit(client, link["shortCode"], method="HEAD")
    assert head.status_code == 302 and head.headers["location"] == "https://example.com/a?b=1#top"
    flush(client)
    rows = clicks(conn)
    assert len(rows) == 2
    human, bot = rows
    assert human["is_bot"] == 0 and bot["is_bot"] == 1
    assert human["campaign"] == "newsletter"
    assert "google" in human["referrer"]
    assert human["user_agent"] == DESKTOP
    assert "testclient" not in human["visitor_hash"] and len(human["visitor_hash"]) >= 16
    api = client.get(f"/api/v1/links/{link['id']}", headers=auth).json()["data"]
    assert api["clickCount"] == 2


def test_unknown_code_is_a_404_page(client):
    response = visit(client, "nope12")
    assert response.status_code == 404 and "<html" in response.text.lower()
    assert_visitor_headers(response)


def test_paused_expired_and_deleted_links(client, auth, conn):
    link = make_link(client, auth)
    code = link["shortCode"]
    assert visit(client, code).status_code == 302            # now cached
    client.patch(f"/api/v1/links/{link['id']}", headers=auth, json={"isActive": False})
    paused = visit(client, code)
    assert paused.status_code == 404 and "example.com" not in paused.text
    client.patch(f"/api/v1/links/{link['id']}", headers=auth, json={"isActive": True})
    assert visit(client, code).status_code == 302
    # Expired: make the expiry pass by writing it directly (the API only takes future times).
    soon = datetime.now(UTC) + timedelta(seconds=1)
    client.patch(f"/api/v1/links/{link['id']}", headers=auth,
                 json={"expiresAt": soon.isoformat().replace("+00:00", "Z")})
    time.sleep(1.1)
    expired = visit(client, code)
    assert expired.status_code == 410 and "expired" in expired.text.lower()
    client.delete(f"/api/v1/links/{link['id']}", headers=auth)
    assert visit(client, code).status_code == 404
    flush(client)
    assert clicks(conn) == []


def test_changes_from_another_process_reach_the_cache(client, auth, conn):
    link = make_link(client, auth)
    assert visit(client, link["shortCode"]).status_code == 302
    conn.execute("UPDATE links SET is_active = 0 WHERE public_id = ?", (link["id"],))
    deadline = time.time() + 5
    while visit(client, link["shortCode"]).status_code == 302 and time.time() < deadline:
        time.sleep(0.2)
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
    assert "youtube" not in form.text.lower() and "dQw4w9WgXcQ" not in form.text
    assert visit(client, code, ua=FACEBOOK_BOT).status_code == 200   # bots never get past it

    wrong = client.post(f"/l/{code}?utm_source=qr", data={"password": "guess"},
                        headers={"User-Agent": DESKTOP}, follow_redirects=False)
    assert wrong.status_code == 403 and "<form" in wrong.text and "dQw4w9WgXcQ" not in wrong.text

    right = client.post(f"/l/{code}?utm_source=qr", data={"password": "open sesame"},
                        headers={"User-Agent": DESKTOP}, follow_redirects=False)
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
    codes = [client.post(f"/l/{code}", data={"password": "nope"}, headers={"User-Agent": DESKTOP},
                         follow_redirects=False).status_code for _ in range(3)]
    assert codes == [403, 429, 429]
    flush(client)
    assert len(clicks(conn)) == 2          # the successful entry and the remembered visit; no form page


def test_custom_domain(client, auth, conn, new_key):
    mine = make_link(client, auth)
    other = make_link(client, bearer(new_key("other@example.com")))
    accounts.add_domain(conn, "owner@example.com", "Go.Example.com")
    deadline = time.time() + 5
    while "go.example.com" not in services_of(client).domains and time.time() < deadline:
        time.sleep(0.1)
    assert visit(client, mine["shortCode"], host="go.example.com").status_code == 302
    assert visit(client, other["shortCode"], host="go.example.com").status_code == 404
    assert visit(client, mine["shortCode"]).status_code == 302   # still on the default host
    api = client.get(f"/api/v1/links/{mine['id']}", headers=auth).json()["data"]
    assert api["shortUrl"] == f"https://go.example.com/l/{mine['shortCode']}"
    assert client.get(f"/api/v1/links/{other['id']}", headers=bearer(new_key("other@example.com"))) \
        .json()["data"]["shortUrl"] == f"{SHORT_HOST}/l/{other['shortCode']}"


def test_graceful_stop_writes_every_queued_click(make_config, new_key, db_path):
    client = TestClient(app=create_app(make_config(clicks_flush_interval_ms=60_000,
                                                   clicks_batch_size=100_000)))
    client.__enter__()
    auth = bearer(new_key())
    link = make_link(client, auth)
    for _ in range(50):
        assert visit(client, link["shortCode"]).status_code == 302
    client.__exit__(None, None, None)   # lifespan shutdown: drains the queue
    import sqlite3
    count = sqlite3.connect(db_path).execute("SELECT count(*) FROM clicks").fetchone()[0]
    assert count == 50


@pytest.mark.parametrize("code", ["..%2Fapi", "%2e%2e", "abc%00", "ａｂｃ", "abc/../def"])
def test_path_tricks_never_reach_another_link(client, auth, code):
    make_link(client, auth, customCode="abc")
    response = client.get(f"/l/{code}", headers={"User-Agent": DESKTOP}, follow_redirects=False)
    assert response.status_code == 404
