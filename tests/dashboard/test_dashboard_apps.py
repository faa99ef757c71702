"""The dashboard's Apps page: add an app with its errors beside the fields, remove it
after a confirmation, the association files listed and checked, the app a link opens."""

from __future__ import annotations

import re

import pytest

from shortlink.accounts import service as accounts
from tests.applinks.test_apps_api import FINGERPRINT
from tests.support.dashboard import as_browser, csrf_of, field_error, signed_in
from tests.support.helpers import wait_for_domain
from tests.support.visitors import ANDROID_CHROME, visit


@pytest.fixture
def make_client(make_client):
    """The app as a browser on the https short host sees it (the cookies are Secure there)."""
    return lambda **overrides: as_browser(make_client(**overrides), False)


def post_form(client, path: str, page_path: str, **fields):
    csrf = csrf_of(client.get(page_path).text)
    return client.post(path, data={"csrf": csrf, **fields}, follow_redirects=False)


def test_apps_are_added_checked_chosen_for_a_link_and_removed(make_client, conn):
    client = signed_in(make_client, conn)
    page = client.get("/apps")
    assert page.status_code == 200 and "No apps yet." in page.text and 'href="/apps"' in page.text
    # Each mistake is said beside its field, the form keeps what was typed.
    bad = post_form(client, "/apps", "/apps", ios_team_id="abc", ios_bundle_id="com.example.shop")
    assert bad.status_code == 400
    assert field_error(bad.text, "ios_team_id") == "must be 10 characters, upper-case letters A-Z and digits"
    assert 'value="com.example.shop"' in bad.text
    bad = post_form(client, "/apps", "/apps", android_package="com.example.shop", android_sha256="AB:CD")
    assert "32 hex bytes" in field_error(bad.text, "android_sha256")
    added = post_form(
        client, "/apps", "/apps", name="Shop", ios_team_id="ABCDE12345", ios_bundle_id="com.example.shop",
        ios_app_store_id="123456789", android_package="com.example.shop",
        android_sha256=f"{FINGERPRINT}, {FINGERPRINT.replace('AB', 'AB')}",
    )  # fmt: skip
    assert added.status_code == 303 and added.headers["location"] == "/apps?done=added"
    listed = client.get("/apps?done=added").text
    assert "ABCDE12345.com.example.shop" in listed and "1 fingerprint<" in listed and "The app was added" in listed
    again = post_form(client, "/apps", "/apps", ios_team_id="ABCDE12345", ios_bundle_id="com.example.shop")
    assert again.status_code == 409 and "already registered" in field_error(again.text, "ios_bundle_id")

    # The files are listed per custom domain and checked over https, one line per mistake
    # (this test's domain resolves nowhere: the check says it could not fetch them).
    accounts.add_domain(conn, "owner@example.com", "go.example.invalid")
    wait_for_domain(client, "go.example.invalid")
    listed = client.get("/apps").text
    assert "go.example.invalid/.well-known/assetlinks.json" in listed
    checked = post_form(client, "/apps/check", "/apps")
    assert checked.status_code == 200
    mistakes = re.findall(r"<li>(https://go\.example\.invalid/[^<]+)</li>", checked.text)
    assert len(mistakes) == 2 and all("could not be fetched" in line for line in mistakes), checked.text

    # A link opens the app at a deep path, chosen on the link's own page.
    app_id = re.search(r'href="/apps/(app_\w+)/remove"', listed).group(1)
    created = client.post(
        "/links", data={"csrf": csrf_of(client.get("/links/new").text), "originalUrl": "https://shop.example/p/42"},
        follow_redirects=False,
    )  # fmt: skip
    link_id = created.headers["location"].split("/")[-1].split("?")[0]
    assert f'href="/apps/links/{link_id}"' in client.get(f"/links/{link_id}").text
    refused = post_form(client, f"/apps/links/{link_id}", f"/apps/links/{link_id}", app_id=app_id, deep_path="p/42")
    assert refused.status_code == 400 and "must start with /" in field_error(refused.text, "deep_path")
    saved = post_form(client, f"/apps/links/{link_id}", f"/apps/links/{link_id}", app_id=app_id, deep_path="/p/42")
    assert saved.status_code == 303
    assert "selected>Shop</option>" in client.get(f"/apps/links/{link_id}").text
    code = client.get(f"/links/{link_id}").text.split("/l/", 1)[1].split('"', 1)[0]
    assert visit(client, code, ANDROID_CHROME).headers["location"].startswith("intent://")
    counts = client.get(f"/apps/links/{link_id}").text
    assert "<td>The app</td><td>1</td>" in counts and "not proof that the app opened" in counts

    # Removing asks first, then the link is ordinary again.
    confirm = client.get(f"/apps/{app_id}/remove")
    assert confirm.status_code == 200 and "Remove Shop?" in confirm.text
    removed = post_form(client, f"/apps/{app_id}/remove", f"/apps/{app_id}/remove")
    assert removed.status_code == 303 and removed.headers["location"] == "/apps?done=removed"
    assert visit(client, code, ANDROID_CHROME).headers["location"] == "https://shop.example/p/42"
