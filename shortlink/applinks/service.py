"""The app rules over a connection: register, list and remove an owner's apps, and the apps
a host names in its association files.

The owner is an account id, or None for the service itself (its apps are named on the
short host and the `[links] domains`; an account's on its connected custom domains).
"""

from __future__ import annotations

import json
from datetime import date, datetime

from shortlink.applinks.schema import (
    MAX_APPS_PER_ACCOUNT,
    AndroidApp,
    App,
    CreateApp,
    DeepLink,
    IosApp,
    LinkApp,
    LinkAppAnalytics,
    OutcomeDay,
    SetLinkApp,
    validate_app,
    validate_deep_path,
)
from shortlink.errors import ConflictError, NotFoundError, ValidationError
from shortlink.ids import new_id
from shortlink.imports.rows import ImportedApp
from shortlink.links.service import owned_row
from shortlink.storage import Connection, Row
from shortlink.storage import applinks as store
from shortlink.times import to_iso


def app_from_row(row: Row) -> App:
    ios = android = None
    if row["ios_bundle_id"] is not None:
        ios = IosApp(
            team_id=row["ios_team_id"],
            bundle_id=row["ios_bundle_id"],
            app_store_id=row["ios_app_store_id"],
            paths=json.loads(row["ios_paths"]),
        )
    if row["android_package"] is not None:
        android = AndroidApp(
            package=row["android_package"],
            sha256_fingerprints=json.loads(row["android_fingerprints"]),
            paths=json.loads(row["android_paths"]),
        )
    return App(id=row["public_id"], name=row["name"], ios=ios, android=android, created_at=row["created_at"])


def create_app(conn: Connection, account_id: int | None, body: CreateApp, now: datetime) -> App:
    app = validate_app(body)
    ios, android = app.ios, app.android
    fields: dict[str, object] = {
        "account_id": account_id,
        "name": app.name,
        "ios_team_id": ios.team_id if ios else None,
        "ios_bundle_id": ios.bundle_id if ios else None,
        "ios_app_store_id": ios.app_store_id if ios else None,
        "ios_paths": json.dumps(ios.paths) if ios else None,
        "android_package": android.package if android else None,
        "android_fingerprints": json.dumps(android.sha256_fingerprints) if android else None,
        "android_paths": json.dumps(android.paths) if android else None,
        "created_at": to_iso(now),
    }
    public_id = new_id("app")
    fields["public_id"] = public_id
    try:
        if not store.insert_app(conn, fields, MAX_APPS_PER_ACCOUNT):
            raise ValidationError("body", f"at most {MAX_APPS_PER_ACCOUNT} apps; remove one first")
    except store.AppTaken:
        raise ConflictError("this iOS app id or Android package is already registered here") from None
    row = store.app_by_public_id(conn, account_id, public_id)
    assert row is not None, "an app just inserted is missing"
    return app_from_row(row)


def list_apps(conn: Connection, account_id: int | None) -> list[App]:
    return [app_from_row(row) for row in store.apps_of(conn, account_id)]


def get_app(conn: Connection, account_id: int | None, app_id: str) -> App:
    row = store.app_by_public_id(conn, account_id, app_id)
    if row is None:
        raise NotFoundError(f"no app with id {app_id} here")
    return app_from_row(row)


def remove_app(conn: Connection, account_id: int | None, app_id: str) -> list[str]:
    """Remove the app; the short codes of the links that opened it."""
    codes = store.delete_app(conn, account_id, app_id)
    if codes is None:
        raise NotFoundError(f"no app with id {app_id} here")
    return codes


def all_apps(conn: Connection) -> list[tuple[str | None, App]]:
    """Every app with its owner's e-mail (None: the service's own)."""
    return [(row["email"], app_from_row(row)) for row in store.all_apps(conn)]


def apps_by_owner(conn: Connection) -> dict[int | None, list[App]]:
    """Every app, by owner (an account id, or None for the service's own)."""
    found: dict[int | None, list[App]] = {}
    for row in store.all_apps(conn):
        found.setdefault(row["account_id"], []).append(app_from_row(row))
    return found


def link_app(conn: Connection, account_id: int, link_id: str) -> LinkApp:
    row = owned_row(conn, account_id, link_id)
    found = store.link_app(conn, row["id"])
    if found is None:
        return LinkApp(link_id=link_id, app_id=None, deep_path=None)
    return LinkApp(link_id=link_id, app_id=found["app_public_id"], deep_path=found["deep_path"])


def set_link_app(conn: Connection, account_id: int, link_id: str, body: SetLinkApp) -> tuple[LinkApp, str]:
    """The link opens this app of the account at the deep path (or no app); returns the
    result and the link's code (whose cache entry must go)."""
    row = owned_row(conn, account_id, link_id)
    if body.app_id is None:
        store.clear_link_app(conn, row["id"])
    else:
        deep_path = validate_deep_path(body.deep_path)
        app_row_id = store.app_row_id(conn, account_id, body.app_id)
        if app_row_id is None:
            raise ValidationError("appId", f"no app {body.app_id} in this account (see GET /api/v1/apps)")
        store.set_link_app(conn, row["id"], app_row_id, deep_path)
    return link_app(conn, account_id, link_id), row["short_code"]


def _open(row: Row | None) -> Row:
    # A password-protected or paused link tells nothing to whoever asks.
    if row is None or row["password_hash"] is not None or not row["is_active"]:
        raise NotFoundError("no deep link here")
    return row


def redeem_deferred(conn: Connection, link_public_id: str, token_hash: str, now: datetime) -> DeepLink:
    """The deep path of a token's link, once: a second redemption is NOT_FOUND."""
    row = _open(store.deep_path_of_link(conn, link_public_id))
    if not store.redeem(conn, token_hash, to_iso(now)):
        raise NotFoundError("this deferred link token was already used")
    return DeepLink(link_id=link_public_id, deep_path=row["deep_path"])


def resolve_code(conn: Connection, code: str) -> DeepLink:
    """The deep path of a short link the app was opened with (a universal link or app link)."""
    row = _open(store.deep_path_of_code(conn, code))
    return DeepLink(link_id=row["public_id"], deep_path=row["deep_path"])


def attach_imported_app(conn: Connection, account_id: int, link_pk: int, imported: ImportedApp) -> bool:
    """An imported link opens the account's app registered with the source's package or bundle
    id, at its deep path; False when the account registered no such app (the link then keeps
    the source's fallbacks only)."""
    for app in list_apps(conn, account_id):
        package = app.android.package if app.android else None
        bundle = app.ios.bundle_id if app.ios else None
        if (imported.android_package and imported.android_package == package) or (
            imported.ios_bundle_id and imported.ios_bundle_id == bundle
        ):
            app_row_id = store.app_row_id(conn, account_id, app.id)
            assert app_row_id is not None, "listed just now"
            store.set_link_app(conn, link_pk, app_row_id, validate_deep_path(imported.deep_path))
            return True
    return False


def app_analytics(conn: Connection, account_id: int, link_id: str, first: date, last: date) -> LinkAppAnalytics:
    row = owned_row(conn, account_id, link_id)
    days = [
        OutcomeDay(day=day, app_opens=app, store_visits=store_visits, web=web)
        for day, app, store_visits, web in store.outcomes_by_day(conn, row["id"], first.isoformat(), last.isoformat())
    ]
    return LinkAppAnalytics(
        link_id=link_id,
        start=first.isoformat(),
        end=last.isoformat(),
        app_opens=sum(day.app_opens for day in days),
        store_visits=sum(day.store_visits for day in days),
        web=sum(day.web for day in days),
        days=days,
    )
