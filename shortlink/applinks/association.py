"""The association documents, built exactly as Apple's and Google's documentation show them.

- `/.well-known/apple-app-site-association` ("Supporting associated domains"): an `applinks`
  object whose `details` name each app as `appIDs: ["TEAM.BUNDLE"]` with the URL `components`
  it opens (`{"/": "/l/*"}`), the iOS 13+ form Apple documents; no `apps` key (only iOS 12 and
  earlier read it, and the `components` form replaces it).
- `/.well-known/assetlinks.json` ("Verify Android App Links"): a list of statements, each
  `delegate_permission/common.handle_all_urls` for an `android_app` target with its
  `package_name` and `sha256_cert_fingerprints`.

Keys come out in the documentation's order, compact: the bytes equal the documented examples
encoded without whitespace. Both files are JSON served as `application/json`, never redirected.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from shortlink.applinks.schema import AndroidApp, IosApp, app_id

CONTENT_TYPE = "application/json"
# Apple's CDN fetches the file itself and keeps it for a while; an hour keeps other clients
# (validators, Android's verifier) close to a change without asking on every request.
CACHE_CONTROL = "public, max-age=3600"
HANDLE_ALL_URLS = "delegate_permission/common.handle_all_urls"


class Component(msgspec.Struct, frozen=True):
    path: str = msgspec.field(name="/")


class Detail(msgspec.Struct, frozen=True, rename="camel"):
    app_ids: list[str] = msgspec.field(name="appIDs")
    components: list[Component] = msgspec.field(default_factory=list)


class AppLinks(msgspec.Struct, frozen=True):
    details: list[Detail]


class AppleAssociation(msgspec.Struct, frozen=True):
    applinks: AppLinks


class Target(msgspec.Struct, frozen=True):
    namespace: str
    package_name: str
    sha256_cert_fingerprints: list[str]


class Statement(msgspec.Struct, frozen=True):
    relation: list[str]
    target: Target


def apple_association(apps: Iterable[IosApp]) -> bytes | None:
    """The apple-app-site-association bytes for these iOS apps; None when there is none."""
    details = [Detail([app_id(app)], [Component(path) for path in app.paths]) for app in apps]
    return msgspec.json.encode(AppleAssociation(AppLinks(details))) if details else None


def asset_links(apps: Iterable[AndroidApp]) -> bytes | None:
    """The assetlinks.json bytes for these Android apps; None when there is none."""
    statements = [
        Statement([HANDLE_ALL_URLS], Target("android_app", app.package, list(app.sha256_fingerprints))) for app in apps
    ]
    return msgspec.json.encode(statements) if statements else None
