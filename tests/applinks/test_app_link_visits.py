"""Links into the account's own app: PUT/GET /links/{id}/app, what each phone gets on the
visitor path, and the deferred deep link (Android install referrer, iOS code) redeemed once."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from tests.applinks.test_apps_api import FINGERPRINT
from tests.support.helpers import error_of
from tests.support.visitors import (
    ANDROID_CHROME,
    DESKTOP,
    FACEBOOK_ANDROID,
    FACEBOOK_BOT,
    INSTAGRAM_IOS,
    IPHONE,
    make_link,
    visit,
)

APP = {
    "name": "Shop",
    "ios": {"teamId": "ABCDE12345", "bundleId": "com.example.shop", "appStoreId": "123456789"},
    "android": {"package": "com.example.shop", "sha256Fingerprints": [FINGERPRINT]},
}


def own_app_link(client, auth, app=APP, deep_path="/product/42?ref=promo", **link) -> tuple[dict, dict]:
    created = client.post("/api/v1/apps", json=app, headers=auth).json()["data"]
    made = make_link(client, auth, originalUrl="https://shop.example/product/42", **link)
    body = {"appId": created["id"], "deepPath": deep_path}
    response = client.put(f"/api/v1/links/{made['id']}/app", json=body, headers=auth)
    assert response.status_code == 200, response.text
    assert response.json() == {"data": {"linkId": made["id"], "appId": created["id"], "deepPath": deep_path}}
    return created, made


def referrer_token(store_url: str) -> str:
    """The token the Play Store hands the app through the Install Referrer API."""
    query = parse_qs(urlsplit(store_url).query)
    assert query["id"] == ["com.example.shop"]
    (referrer,) = query["referrer"]
    key, _, token = referrer.partition("=")
    assert key == "shortlink_token" and token
    return token


def redeem(client, token: str):
    return client.post(f"/app/deferred/{token}")


@pytest.mark.both_backends
def test_each_phone_gets_its_way_into_the_app_and_the_deferred_link_lands_once(client, auth):
    app, link = own_app_link(client, auth)
    code = link["shortCode"]
    assert client.get(f"/api/v1/links/{link['id']}/app", headers=auth).json()["data"]["appId"] == app["id"]
    # The spec's Link object is unchanged.
    assert "app" not in client.get(f"/api/v1/links/{link['id']}", headers=auth).json()["data"]

    # Desktops and bots: the website, utm parameters forwarded as for any link.
    for agent in (DESKTOP, FACEBOOK_BOT):
        response = visit(client, code, agent, query="utm_source=mail")
        assert response.status_code == 302
        assert response.headers["location"] == "https://shop.example/product/42?utm_source=mail"

    # Android Chrome: an intent into the app at the deep path, the Play Store as fallback with the token.
    response = visit(client, code, ANDROID_CHROME)
    assert response.status_code == 302
    intent = response.headers["location"]
    match = re.fullmatch(
        r"intent://sho\.rt/product/42\?ref=promo#Intent;scheme=https;package=com\.example\.shop;"
        r"S\.browser_fallback_url=([^;]+);end",
        intent,
    )
    assert match, intent
    store = unquote(match.group(1))
    assert store.startswith("https://play.google.com/store/apps/details?id=com.example.shop&referrer=")
    token = referrer_token(store)
    # The app's first start: the deep path, once.
    first = redeem(client, token)
    assert first.status_code == 200, first.text
    assert first.json() == {"data": {"linkId": link["id"], "deepPath": "/product/42?ref=promo"}}
    again = redeem(client, token)
    assert again.status_code == 404 and error_of(again) == "NOT_FOUND"
    forged = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
    assert error_of(redeem(client, forged)) == "NOT_FOUND"

    # Android in-app browsers (which ignore intent fallbacks): the app page, both ways offered.
    page = visit(client, code, FACEBOOK_ANDROID)
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    hrefs = [unescape(href) for href in re.findall(r'href="([^"]+)"', page.text)]
    labels = re.findall(r">(Open in app|Get the app|Continue to website)<", page.text)
    assert labels == ["Open in app", "Get the app", "Continue to website"]
    assert hrefs[0].startswith("intent://sho.rt/product/42") and hrefs[1].startswith("https://play.google.com/")
    assert hrefs[2] == "https://shop.example/product/42"
    assert redeem(client, referrer_token(hrefs[1])).status_code == 200

    # iPhones (Safari or an in-app browser) reach us only when the app did not open: the App
    # Store, and a code to carry by hand, which redeems like the referrer's.
    for agent in (IPHONE, INSTAGRAM_IOS):
        page = visit(client, code, agent)
        assert page.status_code == 200
        assert 'href="https://apps.apple.com/app/id123456789"' in page.text and ">Get the app<" in page.text
        assert "Open in app" not in page.text
        carried = re.search(r'<input id="code" readonly value="([^"]+)">', page.text)
        assert carried, page.text
        assert redeem(client, unescape(carried.group(1))).json()["data"]["deepPath"] == "/product/42?ref=promo"

    # An app opened by the universal link itself asks what the short link means.
    assert client.get(f"/app/links/{code}").json() == {
        "data": {"linkId": link["id"], "deepPath": "/product/42?ref=promo"}
    }
    assert error_of(client.get("/app/links/nosuchcode")) == "NOT_FOUND"

    # What the visitor path decided, per link and day: the bot and the HEAD request are not counted.
    visit(client, code, ANDROID_CHROME, method="HEAD")
    counted = client.get(f"/api/v1/links/{link['id']}/app/analytics", params={"days": 7}, headers=auth).json()
    data = counted["data"]
    assert (data["appOpens"], data["storeVisits"], data["web"]) == (2, 2, 1)
    assert [(day["appOpens"], day["storeVisits"], day["web"]) for day in data["days"]] == [(2, 2, 1)]
    assert data["to"] == data["days"][0]["day"] and "not proof that the app opened" in data["note"]
    bad = client.get(f"/api/v1/links/{link['id']}/app/analytics", params={"days": 400}, headers=auth)
    assert bad.status_code == 400 and error_of(bad) == "VALIDATION_ERROR"

    # The app removed: the link is an ordinary link again, at once.
    assert client.delete(f"/api/v1/apps/{app['id']}", headers=auth).status_code == 200
    assert visit(client, code, ANDROID_CHROME).headers["location"] == "https://shop.example/product/42"
    assert client.get(f"/api/v1/links/{link['id']}/app", headers=auth).json()["data"]["appId"] is None


def test_an_app_without_the_phones_platform_leaves_the_link_as_it_was(client, auth):
    android_only = {"android": APP["android"]}
    _, link = own_app_link(client, auth, app=android_only, deep_path="/p")
    assert visit(client, link["shortCode"], IPHONE).headers["location"] == "https://shop.example/product/42"
    # A password-protected link tells the app nothing, and its visitors still get the form first.
    client.patch(f"/api/v1/links/{link['id']}", json={"password": "correct horse"}, headers=auth)
    assert visit(client, link["shortCode"], ANDROID_CHROME).status_code == 200
    assert error_of(client.get(f"/app/links/{link['shortCode']}")) == "NOT_FOUND"
    # No app: an ordinary link.
    client.put(f"/api/v1/links/{link['id']}/app", json={"appId": None}, headers=auth)
    assert client.get(f"/api/v1/links/{link['id']}/app", headers=auth).json()["data"]["deepPath"] is None


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"appId": "app_nothing", "deepPath": "/x"}, "appId"),
        ({"appId": "APP", "deepPath": "product"}, "deepPath"),
        ({"appId": "APP"}, "deepPath"),
        ({"appId": "APP", "deepPath": "/a b"}, "deepPath"),
        ({"appId": "APP", "deepPath": "/x", "colour": 1}, "colour"),
    ],
)
def test_bad_link_apps_are_refused_naming_the_field(client, auth, body, field):
    app = client.post("/api/v1/apps", json=APP, headers=auth).json()["data"]
    link = make_link(client, auth)
    body = {key: app["id"] if value == "APP" else value for key, value in body.items()}
    response = client.put(f"/api/v1/links/{link['id']}/app", json=body, headers=auth)
    assert response.status_code == 400 and error_of(response) == "VALIDATION_ERROR"
    assert response.json()["error"]["message"].startswith(f"{field}: ")
    assert error_of(client.put("/api/v1/links/lnk_nothing/app", json={"appId": None}, headers=auth)) == "NOT_FOUND"
