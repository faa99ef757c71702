"""User agents and visit helpers shared by the visitor-path test modules."""

from __future__ import annotations

import json

DESKTOP = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
)
IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1"
)
ANDROID_CHROME = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.6778.81 Mobile Safari/537.36"
)
ANDROID_FIREFOX = "Mozilla/5.0 (Android 14; Mobile; rv:132.0) Gecko/132.0 Firefox/132.0"
INSTAGRAM_IOS = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Mobile/15E148 Instagram 339.0.3.12.91 (iPhone14,5; iOS 17_5; "
    "en_US; en; scale=3.00; 1170x2532; 618947271)"
)
SAMSUNG = (
    "Mozilla/5.0 (Linux; Android 12; SM-G991B) AppleWebKit/537.36 (KHTML, like Gecko) "
    "SamsungBrowser/23.0 Chrome/115.0.0.0 Mobile Safari/537.36"
)
FACEBOOK_ANDROID = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240905.003; wv) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Version/4.0 Chrome/130.0.6723.83 Mobile Safari/537.36 "
    "[FB_IAB/FB4A;FBAV/488.0.0.62.79;IABMV/1;]"
)
FACEBOOK_BOT = "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"
YOUTUBE = "https://www.youtube.com/watch?v=dQw4w9WgXcQ"
APP_STORE = "https://apps.apple.com/us/app/youtube/id544007664"
PLAY = "https://play.google.com/store/apps/details?id=com.google.android.youtube"


def make_link(client, auth, **body):
    response = client.post("/api/v1/links", headers=auth, json={"originalUrl": "https://example.com/a?b=1#top", **body})
    assert response.status_code == 201, response.text
    return response.json()["data"]


def visit(client, code, ua=DESKTOP, method="GET", query="", **headers):
    url = f"/l/{code}" + (f"?{query}" if query else "")
    return client.request(method, url, headers={"User-Agent": ua, **headers}, follow_redirects=False)


def services_of(client):
    return client.app.state.services


def flush(client):
    with client.portal() as portal:  # the running app's event loop
        portal.call(services_of(client).recorder.flush)


def clicks(conn):
    return conn.execute("SELECT * FROM clicks ORDER BY id").fetchall()


def page_data(page):
    """The JSON the page gives its script."""
    return json.loads(next(source for attrs, source in page.scripts if attrs.get("type") == "application/json"))


def assert_visitor_headers(response):
    assert response.headers["cache-control"] == "no-store"
    assert "User-Agent" in response.headers["vary"]
