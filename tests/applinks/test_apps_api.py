"""Apps of an account: /api/v1/apps, `shortlink app`, and the association files each
host serves, byte-exact against the examples of Apple's and Google's documentation."""

from __future__ import annotations

import json

import pytest

from shortlink.accounts import service as accounts
from tests.conftest import bearer, run_cli
from tests.support.helpers import error_of, wait_for_domain

FINGERPRINT = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"
# Google, "Verify Android App Links" (developer.android.com/training/app-links/verify-android-applinks):
# the statement list a site declares, as the page shows it.
GOOGLE_EXAMPLE = """
[{
  "relation": ["delegate_permission/common.handle_all_urls"],
  "target": {
    "namespace": "android_app",
    "package_name": "com.example",
    "sha256_cert_fingerprints":
    ["14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"]
  }
}]
"""
# Apple, "Supporting associated domains" (developer.apple.com/documentation/xcode/supporting-associated-domains):
# the applinks object in the iOS 13+ form (appIDs and components), one app and one path pattern.
APPLE_EXAMPLE = """
{
  "applinks": {
      "details": [
           {
             "appIDs": [ "ABCDE12345.com.example.app" ],
             "components": [
               {
                  "/": "/buy/*"
               }
             ]
           }
       ]
   }
}
"""


def compact(document: str) -> bytes:
    """The documented example without its whitespace: the bytes we serve, key order included."""
    return json.dumps(json.loads(document), separators=(",", ":")).encode()


def app_body(**changes) -> dict:
    body = {
        "name": "Example",
        "ios": {
            "teamId": "ABCDE12345",
            "bundleId": "com.example.app",
            "appStoreId": "id123456789",
            "paths": ["/buy/*"],
        },
        "android": {"package": "com.example", "sha256Fingerprints": [FINGERPRINT.lower()]},
    }
    return body | changes


def ios(**fields) -> dict:
    return app_body(ios={"teamId": "ABCDE12345", "bundleId": "a.b"} | fields)


def android(**fields) -> dict:
    return app_body(android={"package": "a.b", "sha256Fingerprints": [FINGERPRINT]} | fields)


def assert_served(client, host: str, path: str, expected: bytes) -> None:
    response = client.get(path, headers={"host": host}, follow_redirects=False)
    assert response.status_code == 200, (host, path, response.text)
    assert response.headers["content-type"] == "application/json"
    assert "location" not in response.headers and "set-cookie" not in response.headers
    assert response.headers["cache-control"] == "public, max-age=3600"
    assert response.content == expected
    head = client.head(path, headers={"host": host}, follow_redirects=False)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == str(len(expected))


@pytest.mark.both_backends
def test_apps_are_registered_listed_and_named_on_their_hosts(client, auth, conn, new_key, storage):
    created = client.post("/api/v1/apps", json=app_body(), headers=auth)
    assert created.status_code == 201, created.text
    app = created.json()["data"]
    assert app["id"].startswith("app_") and app["name"] == "Example"
    # Normalised as the files want them: the "id" prefix gone, the fingerprint in upper case.
    assert app["ios"] == {
        "teamId": "ABCDE12345",
        "bundleId": "com.example.app",
        "appStoreId": "123456789",
        "paths": ["/buy/*"],
    }
    assert app["android"] == {"package": "com.example", "sha256Fingerprints": [FINGERPRINT], "paths": ["/l/*"]}
    assert client.get("/api/v1/apps", headers=auth).json() == {"data": [app]}
    assert client.get(f"/api/v1/apps/{app['id']}", headers=auth).json() == {"data": app}
    # Another account sees none of it.
    other = bearer(new_key("other@example.com"))
    assert client.get("/api/v1/apps", headers=other).json() == {"data": []}
    assert error_of(client.get(f"/api/v1/apps/{app['id']}", headers=other)) == "NOT_FOUND"
    # The same iOS app id twice in one account is a conflict.
    again = client.post("/api/v1/apps", json=app_body(android=None), headers=auth)
    assert again.status_code == 409 and error_of(again) == "CONFLICT"

    # The account's apps are named on its custom domain, byte-exact to the documentation's examples.
    accounts.add_domain(conn, "owner@example.com", "go.example.com")
    wait_for_domain(client, "go.example.com")
    for path in ("/.well-known/apple-app-site-association", "/apple-app-site-association"):
        assert_served(client, "go.example.com", path, compact(APPLE_EXAMPLE))
    assert_served(client, "go.example.com", "/.well-known/assetlinks.json", compact(GOOGLE_EXAMPLE))
    assert_served(client, "GO.example.com.", "/.well-known/assetlinks.json", compact(GOOGLE_EXAMPLE))
    # Not on the short host, which names the service's own apps (none yet): 404, still JSON, never a redirect.
    missing = client.get("/.well-known/assetlinks.json", headers={"host": "sho.rt"}, follow_redirects=False)
    assert missing.status_code == 404 and missing.headers["content-type"] == "application/json"
    assert error_of(missing) == "NOT_FOUND"

    # The service's own app, from the CLI, is named on the short host (and any host not a custom domain).
    added = run_cli(
        "app", "add", "--ios-team-id", "ZYXWV98765", "--ios-bundle-id", "org.service.app",
        "--ios-path", "/l/*", "--ios-path", "/promo/*", "--json", "--db", storage,
    )  # fmt: skip
    service_app = json.loads(added.stdout)
    assert service_app["ios"]["paths"] == ["/l/*", "/promo/*"] and service_app["android"] is None
    expected = (
        b'{"applinks":{"details":[{"appIDs":["ZYXWV98765.org.service.app"],'
        b'"components":[{"/":"/l/*"},{"/":"/promo/*"}]}]}}'
    )
    assert_served(client, "sho.rt", "/.well-known/apple-app-site-association", expected)
    assert_served(client, "go.example.com", "/.well-known/apple-app-site-association", compact(APPLE_EXAMPLE))
    listed = json.loads(run_cli("app", "list", "--all", "--json", "--db", storage).stdout)["data"]
    assert [(item["id"], item["email"]) for item in listed] == [
        (app["id"], "owner@example.com"),
        (service_app["id"], None),
    ]
    # An account's list and the service's, each in the same envelope as every CLI list.
    owned = json.loads(run_cli("app", "list", "--email", "owner@example.com", "--json", "--db", storage).stdout)
    assert [item["id"] for item in owned["data"]] == [app["id"]] and set(owned) == {"data"}
    service_list = json.loads(run_cli("app", "list", "--json", "--db", storage).stdout)
    assert [item["id"] for item in service_list["data"]] == [service_app["id"]]
    # The account's apps are not the service's: removing one needs its owner.
    refused = run_cli("app", "remove", app["id"], "--db", storage, check=False)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "no app" in refused.stderr
    run_cli("app", "remove", service_app["id"], "--db", storage)
    gone = client.get("/.well-known/apple-app-site-association", headers={"host": "sho.rt"})
    assert gone.status_code == 404

    deleted = client.delete(f"/api/v1/apps/{app['id']}", headers=auth)
    assert deleted.json() == {"data": {"id": app["id"], "deleted": True}}
    assert client.get("/.well-known/assetlinks.json", headers={"host": "go.example.com"}).status_code == 404
    assert error_of(client.delete(f"/api/v1/apps/{app['id']}", headers=auth)) == "NOT_FOUND"


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"name": "nothing"}, "body", "ios part, an android part"),
        (ios(teamId="abcde12345"), "ios.teamId", "10 characters"),
        (ios(teamId="ABCDE1234"), "ios.teamId", "10 characters"),
        (ios(bundleId="example"), "ios.bundleId", "reverse-DNS"),
        (ios(bundleId="com..x"), "ios.bundleId", "reverse-DNS"),
        (ios(appStoreId="x1"), "ios.appStoreId", "numeric"),
        (ios(paths=["buy/*"]), "ios.paths[0]", "start with /"),
        (ios(paths=[]), "ios.paths", "at least one"),
        (android(package="example"), "android.package", "two or more"),
        (android(package="com.1x"), "android.package", "letter"),
        (android(package="com.new.app"), "android.package", "Java keyword"),
        (android(sha256Fingerprints=[]), "android.sha256Fingerprints", "at least one"),
        (android(sha256Fingerprints=[FINGERPRINT[:-3]]), "android.sha256Fingerprints[0]", "32 hex bytes"),
        (android(sha256Fingerprints=[":".join(["AB"] * 20)]), "android.sha256Fingerprints[0]", "SHA-1"),
        (android(shade=1), "android", "unknown field `shade`"),
        (app_body(name="x\u202ey"), "name", "control characters"),
    ],
)  # fmt: skip
def test_bad_apps_are_refused_naming_the_field(client, auth, body, field, words):
    response = client.post("/api/v1/apps", json=body, headers=auth)
    assert response.status_code == 400 and error_of(response) == "VALIDATION_ERROR"
    message = response.json()["error"]["message"]
    assert message.startswith(f"{field}: ") and words in message, message


def test_apps_need_pro_and_a_key_and_the_cli_says_one_line(client, api_key, conn, storage):
    assert error_of(client.get("/api/v1/apps")) == "UNAUTHORIZED"
    accounts.set_subscription(conn, "owner@example.com", False)
    refused = client.post("/api/v1/apps", json=app_body(), headers=bearer(api_key))
    assert refused.status_code == 403 and error_of(refused) == "SUBSCRIPTION_REQUIRED"
    # 64 hex digits without colons are the same fingerprint; a bad one is one clear line.
    result = run_cli(
        "app", "add", "--email", "owner@example.com", "--android-package", "com.example",
        "--android-sha256", FINGERPRINT.replace(":", "").lower(), "--json", "--db", storage,
    )  # fmt: skip
    assert json.loads(result.stdout)["android"]["sha256Fingerprints"] == [FINGERPRINT]
    bad = run_cli(
        "app", "add", "--android-package", "com.example", "--android-sha256", "AB:CD", "--db", storage, check=False
    )
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert bad.stderr == (
        "shortlink: android.sha256Fingerprints[0]: must be a SHA-256 fingerprint:"
        " 32 hex bytes separated by colons (AA:BB:…)\n"
    )
    half = run_cli("app", "add", "--ios-team-id", "ABCDE12345", "--db", storage, check=False)
    assert half.returncode == 1 and "needs both" in half.stderr
