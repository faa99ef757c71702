"""`shortlink app`: the apps the association files name (deep links into your own app)."""

from __future__ import annotations

import argparse
from typing import Any

import msgspec

from shortlink.accounts import service as accounts
from shortlink.cli.common import Output, command, command_group, with_db
from shortlink.errors import ValidationError
from shortlink.storage import Connection


def register(commands) -> None:
    app = command_group(commands, "app", "apps the association files name (deep links into your own app)")
    add = command(app, "add", run_add, "register an iOS and/or Android app")
    add.add_argument("--email", help="the account (its custom domains); without: the service's app, on the short host")
    add.add_argument("--name")
    add.add_argument("--ios-team-id", help="Apple team id (10 characters A-Z 0-9)")
    add.add_argument("--ios-bundle-id", help="reverse-DNS bundle id")
    add.add_argument("--ios-app-store-id", help="the App Store's numeric id")
    add.add_argument("--ios-path", action="append", help="a path the iOS app opens (repeatable; default /l/*)")
    add.add_argument("--android-package", help="the Android application id")
    add.add_argument(
        "--android-sha256", action="append", metavar="FP", help="a signing-certificate SHA-256 fingerprint (repeatable)"
    )
    add.add_argument("--android-path", action="append", help="a path the Android app opens (repeatable; default /l/*)")
    listing = command(app, "list", run_list, "list the apps of an account, or of the service")
    listing.add_argument("--email", help="the account; without: the service's own apps")
    listing.add_argument("--all", action="store_true", help="every app of every account and of the service")
    remove = command(app, "remove", run_remove, "remove an app by its id")
    remove.add_argument("app_id", metavar="ID")
    remove.add_argument("--email", help="the account; without: the service's own apps")


def _app_owner(conn: Connection, email: str | None) -> int | None:
    return None if email is None else accounts.account_for(conn, email)["id"]


def _app_line(app: Any, owner: str | None = None) -> str:
    parts = [app.id, app.name or "-"]
    if app.ios:
        parts.append(f"ios {app.ios.team_id}.{app.ios.bundle_id} {' '.join(app.ios.paths)}")
    if app.android:
        parts.append(f"android {app.android.package} ({len(app.android.sha256_fingerprints)} fingerprints)")
    if owner is not None:
        parts.append(owner)
    return "  ".join(parts)


def run_add(args: argparse.Namespace) -> Output:
    from shortlink.applinks.schema import AndroidApp, CreateApp, IosApp, validate_app
    from shortlink.applinks.service import create_app
    from shortlink.times import utcnow

    ios = android = None
    if args.ios_team_id is not None or args.ios_bundle_id is not None:
        if args.ios_team_id is None or args.ios_bundle_id is None:
            raise ValidationError("--ios-team-id/--ios-bundle-id", "an iOS app needs both")
        ios = IosApp(team_id=args.ios_team_id, bundle_id=args.ios_bundle_id, app_store_id=args.ios_app_store_id)
        if args.ios_path:
            ios.paths = args.ios_path
    if args.android_package is not None or args.android_sha256:
        if args.android_package is None or not args.android_sha256:
            raise ValidationError("--android-package/--android-sha256", "an Android app needs both")
        android = AndroidApp(package=args.android_package, sha256_fingerprints=args.android_sha256)
        if args.android_path:
            android.paths = args.android_path
    body = validate_app(CreateApp(name=args.name, ios=ios, android=android))
    app = with_db(args, lambda conn: create_app(conn, _app_owner(conn, args.email), body, utcnow()))
    where = f"the custom domains of {args.email}" if args.email else "the short host"
    return msgspec.to_builtins(app), f"registered {_app_line(app)}; named on {where}"


def run_list(args: argparse.Namespace) -> Output:
    from shortlink.applinks import service as apps

    if args.all:
        found = with_db(args, apps.all_apps)
        value = [msgspec.to_builtins(app) | {"email": email} for email, app in found]
        return {"data": value}, "\n".join(_app_line(app, email or "(service)") for email, app in found) or "no apps"
    listed = with_db(args, lambda conn: apps.list_apps(conn, _app_owner(conn, args.email)))
    return {"data": msgspec.to_builtins(listed)}, "\n".join(_app_line(app) for app in listed) or "no apps"


def run_remove(args: argparse.Namespace) -> Output:
    from shortlink.applinks.service import remove_app

    with_db(args, lambda conn: remove_app(conn, _app_owner(conn, args.email), args.app_id))
    return {"id": args.app_id, "deleted": True}, f"removed {args.app_id}"
