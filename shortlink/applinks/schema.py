"""The app records (msgspec Structs, the API's shapes) and the rules that validate them.

An app has an iOS part (team id, bundle id, App Store id, paths), an Android part (package
name, signing-certificate SHA-256 fingerprints, paths), or both. Every rule raises the
spec's ValidationError naming the field, so each door says exactly what is wrong.
"""

from __future__ import annotations

import re
from typing import Annotated

import msgspec
from msgspec import Meta

from shortlink.controls import CONTROL_CHARACTERS
from shortlink.errors import ValidationError

MAX_APPS_PER_ACCOUNT = 20
MAX_PATHS = 20
MAX_FINGERPRINTS = 10
# The short links' own paths: what an app claims unless told otherwise.
DEFAULT_PATHS = ("/l/*",)

# Apple: the team id (the app id prefix) is 10 characters, upper-case letters and digits.
TEAM_ID = re.compile(r"[A-Z0-9]{10}")
# Reverse-DNS: at least two labels of letters, digits and hyphens (Apple's bundle id
# characters), none empty.
BUNDLE_ID = re.compile(r"[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+")
# Android (the manifest's package attribute): two or more segments, each starting with a
# letter, then letters, digits or underscores.
PACKAGE = re.compile(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+")
# Java keywords cannot be a segment of a package name.
_JAVA_KEYWORDS = frozenset(
    [
        "abstract",
        "assert",
        "boolean",
        "break",
        "byte",
        "case",
        "catch",
        "char",
        "class",
        "const",
        "continue",
        "default",
        "do",
        "double",
        "else",
        "enum",
        "extends",
        "final",
        "finally",
        "float",
        "for",
        "goto",
        "if",
        "implements",
        "import",
        "instanceof",
        "int",
        "interface",
        "long",
        "native",
        "new",
        "package",
        "private",
        "protected",
        "public",
        "return",
        "short",
        "static",
        "strictfp",
        "super",
        "switch",
        "synchronized",
        "this",
        "throw",
        "throws",
        "transient",
        "try",
        "void",
        "volatile",
        "while",
        "true",
        "false",
        "null",
    ]
)
# keytool's and Play Console's form: 32 bytes as upper-case hex pairs separated by colons.
FINGERPRINT = re.compile(r"[0-9A-F]{2}(:[0-9A-F]{2}){31}")
APP_STORE_ID = re.compile(r"[0-9]{1,12}")
# A path pattern as both stores' files take it: starts with "/", may hold "*" and "?".
PATH = re.compile(r"/[A-Za-z0-9\-._~!$&'()*+,;=:@/%?]*")

ShortText = Annotated[str, Meta(max_length=200)]


class IosApp(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    team_id: Annotated[str, Meta(description="Apple team id (app id prefix): 10 characters A-Z 0-9")]
    bundle_id: Annotated[str, Meta(description="reverse-DNS bundle id, e.g. com.example.app")]
    app_store_id: Annotated[str | None, Meta(description="the App Store's numeric id (apps.apple.com/app/id…)")] = None
    paths: Annotated[list[str], Meta(description="path patterns the app handles")] = msgspec.field(
        default_factory=lambda: list(DEFAULT_PATHS)
    )


class AndroidApp(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    package: Annotated[str, Meta(description="the application id, e.g. com.example.app")]
    sha256_fingerprints: Annotated[
        list[str], Meta(description="signing-certificate SHA-256 fingerprints, 32 colon-separated hex bytes each")
    ]
    paths: Annotated[list[str], Meta(description="path patterns the app handles")] = msgspec.field(
        default_factory=lambda: list(DEFAULT_PATHS)
    )


class CreateApp(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    name: ShortText | None = None
    ios: IosApp | None = None
    android: AndroidApp | None = None


class App(msgspec.Struct, rename="camel", kw_only=True):
    id: str
    name: str | None
    ios: IosApp | None
    android: AndroidApp | None
    created_at: str


class AppResponse(msgspec.Struct):
    data: App


class AppListResponse(msgspec.Struct):
    data: list[App]


class DeletedApp(msgspec.Struct):
    id: str
    deleted: bool = True


class DeletedAppResponse(msgspec.Struct):
    data: DeletedApp


def normalise_fingerprint(value: str, field: str) -> str:
    """A fingerprint as keytool prints it; lower case and surrounding space are accepted."""
    text = value.strip().upper()
    if not FINGERPRINT.fullmatch(text):
        hex_digits = re.sub(r"[^0-9A-Fa-f]", "", value)
        if re.fullmatch(r"[0-9A-Fa-f]{64}", value.strip()):
            # 64 hex digits without colons: the same 32 bytes, written as the files want them.
            return ":".join(hex_digits[i : i + 2] for i in range(0, 64, 2)).upper()
        if len(hex_digits) == 40:
            raise ValidationError(field, "is a SHA-1 fingerprint (20 bytes); the SHA-256 one (32 bytes) is needed")
        raise ValidationError(field, "must be a SHA-256 fingerprint: 32 hex bytes separated by colons (AA:BB:…)")
    return text


def validate_paths(paths: list[str], field: str) -> list[str]:
    if not paths:
        raise ValidationError(field, "must name at least one path (e.g. /l/*)")
    if len(paths) > MAX_PATHS:
        raise ValidationError(field, f"at most {MAX_PATHS} paths")
    cleaned = []
    for index, path in enumerate(paths):
        path = path.strip()
        if len(path) > 200 or not PATH.fullmatch(path):
            raise ValidationError(f"{field}[{index}]", "must start with / and hold only URL path characters, * and ?")
        if path.startswith("/.well-known"):
            raise ValidationError(f"{field}[{index}]", "the association files themselves cannot open an app")
        if path not in cleaned:
            cleaned.append(path)
    return cleaned


def validate_ios(ios: IosApp, field: str = "ios") -> IosApp:
    team = ios.team_id.strip()
    if not TEAM_ID.fullmatch(team):
        raise ValidationError(f"{field}.teamId", "must be 10 characters, upper-case letters A-Z and digits")
    bundle = ios.bundle_id.strip()
    if len(bundle) > 155 or not BUNDLE_ID.fullmatch(bundle):
        raise ValidationError(
            f"{field}.bundleId", "must be a reverse-DNS bundle id (letters, digits, hyphens, dots: com.example.app)"
        )
    store_id = ios.app_store_id.strip().removeprefix("id") if ios.app_store_id else None
    if store_id is not None and not APP_STORE_ID.fullmatch(store_id):
        raise ValidationError(f"{field}.appStoreId", "must be the App Store's numeric id (the digits after /id)")
    return IosApp(
        team_id=team, bundle_id=bundle, app_store_id=store_id, paths=validate_paths(ios.paths, f"{field}.paths")
    )


def validate_package(package: str, field: str) -> str:
    package = package.strip()
    if len(package) > 150 or not PACKAGE.fullmatch(package):
        raise ValidationError(
            field,
            "must be an Android package name: two or more dot-separated segments, each a letter then"
            " letters, digits or _ (com.example.app)",
        )
    keyword = next((part for part in package.split(".") if part in _JAVA_KEYWORDS), None)
    if keyword is not None:
        raise ValidationError(field, f"segment {keyword!r} is a Java keyword, which a package name cannot hold")
    return package


def validate_android(android: AndroidApp, field: str = "android") -> AndroidApp:
    package = validate_package(android.package, f"{field}.package")
    prints = android.sha256_fingerprints
    if not prints:
        raise ValidationError(f"{field}.sha256Fingerprints", "at least one signing-certificate fingerprint")
    if len(prints) > MAX_FINGERPRINTS:
        raise ValidationError(f"{field}.sha256Fingerprints", f"at most {MAX_FINGERPRINTS} fingerprints")
    cleaned: list[str] = []
    for index, value in enumerate(prints):
        text = normalise_fingerprint(value, f"{field}.sha256Fingerprints[{index}]")
        if text not in cleaned:
            cleaned.append(text)
    return AndroidApp(
        package=package, sha256_fingerprints=cleaned, paths=validate_paths(android.paths, f"{field}.paths")
    )


def validate_app(body: CreateApp) -> CreateApp:
    """The app as it is stored: trimmed and normalised, or a ValidationError naming the field."""
    if body.ios is None and body.android is None:
        raise ValidationError("body", "an app needs an ios part, an android part, or both")
    name = body.name.strip() if body.name else None
    if name is not None and CONTROL_CHARACTERS.search(name):
        raise ValidationError("name", "must not contain control characters")
    return CreateApp(
        name=name or None,
        ios=validate_ios(body.ios) if body.ios else None,
        android=validate_android(body.android) if body.android else None,
    )


def app_id(ios: IosApp) -> str:
    """Apple's application identifier: TEAM.BUNDLE."""
    return f"{ios.team_id}.{ios.bundle_id}"


# A deep path: the app's own path, with a query and fragment if it wants them.
DEEP_PATH = re.compile(r"/[A-Za-z0-9\-._~!$&'()*+,;=:@/%?#]*")
MAX_DEEP_PATH = 1000


class SetLinkApp(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    """The app a link opens and where; `appId: null` makes it an ordinary link again."""

    app_id: Annotated[str | None, Meta(description="one of the account's apps (app_…), or null")]
    deep_path: Annotated[str | None, Meta(description="the app's path to open, e.g. /product/42")] = None


class LinkApp(msgspec.Struct, rename="camel", kw_only=True):
    link_id: str
    app_id: str | None
    deep_path: str | None


class LinkAppResponse(msgspec.Struct):
    data: LinkApp


class DeepLink(msgspec.Struct, rename="camel", kw_only=True):
    """What the app gets on its first start (deferred) or for a universal link it was opened with."""

    link_id: str
    deep_path: str


class DeepLinkResponse(msgspec.Struct):
    data: DeepLink


def validate_deep_path(path: str | None) -> str:
    if path is None:
        raise ValidationError("deepPath", "is required with an appId")
    path = path.strip()
    if not path or len(path) > MAX_DEEP_PATH or not DEEP_PATH.fullmatch(path):
        raise ValidationError(
            "deepPath", f"must start with / and hold only URL characters (at most {MAX_DEEP_PATH}), e.g. /product/42"
        )
    return path


NOT_PROOF = (
    "A visit sent to the app is not proof that the app opened: the phone may lack it or refuse it. iPhones with"
    " the app installed open it from the universal link without asking this server, so they are not counted."
)


class OutcomeDay(msgspec.Struct, rename="camel", kw_only=True):
    day: str
    app_opens: int
    store_visits: int
    web: int


class LinkAppAnalytics(msgspec.Struct, rename="camel", kw_only=True):
    """What the visitor path decided for a link into an app: sent to the app (an intent), to
    the store (the app page on iPhones), or to the website; human visits only."""

    link_id: str
    start: str = msgspec.field(name="from")
    end: str = msgspec.field(name="to")
    app_opens: int
    store_visits: int
    web: int
    days: list[OutcomeDay]
    note: str = NOT_PROOF


class LinkAppAnalyticsResponse(msgspec.Struct):
    data: LinkAppAnalytics
