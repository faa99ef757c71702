"""Firebase Dynamic Links long links, with every parameter Firebase documented ("Manually
constructing a Dynamic Link URL"), imported as links that behave the same: pasted as text."""

from __future__ import annotations

import json
from urllib.parse import quote

from shortlink.accounts import service as accounts
from tests.applinks.test_apps_api import FINGERPRINT
from tests.conftest import run_cli
from tests.support.helpers import wait_for_domain
from tests.support.visitors import ANDROID_CHROME, DESKTOP, IPHONE, visit

DEEP = "https://example.com/app/promo?item=42"
# Every parameter of the documented long link, in the documentation's order.
PARAMETERS = [
    ("link", DEEP),
    ("apn", "com.example.android"),
    ("afl", "https://example.com/android"),
    ("amv", "12"),
    ("ibi", "com.example.ios"),
    ("ifl", "https://example.com/ios"),
    ("ius", "examplescheme"),
    ("ipfl", "https://example.com/ipad"),
    ("ipbi", "com.example.ipad"),
    ("isi", "123456789"),
    ("imv", "2.0"),
    ("efr", "1"),
    ("ofl", "https://example.com/desktop"),
    ("st", "Promo ✨"),
    ("sd", "Spring promo"),
    ("si", "https://example.com/promo.png"),
    ("utm_source", "newsletter"),
    ("utm_medium", "email"),
    ("utm_campaign", "spring"),
    ("utm_term", "shoes"),
    ("utm_content", "banner"),
    ("at", "affiliate"),
    ("ct", "campaign-token"),
    ("mt", "8"),
    ("pt", "provider"),
]
LONG = "https://example.page.link/?" + "&".join(f"{name}={quote(value, safe=':/')}" for name, value in PARAMETERS)


def test_a_pasted_long_link_with_every_parameter_behaves_as_it_did(client, auth, storage, conn, tmp_path):
    app = {
        "ios": {"teamId": "ABCDE12345", "bundleId": "com.example.ios", "appStoreId": "123456789"},
        "android": {"package": "com.example.android", "sha256Fingerprints": [FINGERPRINT]},
    }
    assert client.post("/api/v1/apps", json=app, headers=auth).status_code == 201
    pasted = tmp_path / "pasted.txt"
    pasted.write_text(
        f"https://example.page.link/spring {LONG}\n{LONG.replace('apn=', 'xapn=').replace('ibi=', 'xibi=')}\n"
    )
    report = json.loads(
        run_cli("import", "fdl", str(pasted), "--email", "owner@example.com", "--json", "--db", storage).stdout
    )
    assert report["created"] == 2, report
    links = {link["shortCode"]: link for link in client.get("/api/v1/links", headers=auth).json()["data"]}
    spring = links["spring"]  # the old short path, kept
    utm = "utm_source=newsletter&utm_medium=email&utm_campaign=spring&utm_term=shoes&utm_content=banner"
    assert spring["originalUrl"] == f"https://example.com/desktop?{utm}"
    assert (spring["title"], spring["description"]) == ("Promo ✨", "Spring promo")
    assert (spring["androidUrl"], spring["iosUrl"]) == ("https://example.com/android", "https://example.com/ios")
    assert client.get(f"/api/v1/links/{spring['id']}/app", headers=auth).json()["data"]["deepPath"] == (
        "/app/promo?item=42"
    )
    # Desktops: ofl with the campaign. Android: the app at the link's path, else the Play Store.
    assert visit(client, "spring", DESKTOP).headers["location"] == f"https://example.com/desktop?{utm}"
    intent = visit(client, "spring", ANDROID_CHROME).headers["location"]
    assert intent.startswith("intent://sho.rt/app/promo?item=42#Intent;scheme=https;package=com.example.android;")
    assert "play.google.com%2Fstore%2Fapps%2Fdetails%3Fid%3Dcom.example.android" in intent
    # iPhones without the app: the App Store.
    assert "https://apps.apple.com/app/id123456789" in visit(client, "spring", IPHONE).text
    # The old domain connected: its short path /spring answers as before, and only there.
    accounts.add_domain(conn, "owner@example.com", "example.page.link")
    wait_for_domain(client, "example.page.link")
    old = client.get("/spring", headers={"host": "example.page.link", "User-Agent": DESKTOP}, follow_redirects=False)
    assert old.status_code == 302 and old.headers["location"] == f"https://example.com/desktop?{utm}"
    assert client.get("/spring", headers={"User-Agent": DESKTOP}, follow_redirects=False).status_code == 404
    # A long link naming no app is an ordinary link with its per-platform destinations.
    (other,) = (link for code, link in links.items() if code != "spring")
    assert client.get(f"/api/v1/links/{other['id']}/app", headers=auth).json()["data"]["appId"] is None
    assert visit(client, other["shortCode"], IPHONE).headers["location"] == "https://example.com/ios"
