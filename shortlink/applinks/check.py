"""The association files checked as Apple's and Google's validators check them: what a fetch
of each file answered, against the apps the host should name. Each mistake is one line.

Apple's CDN and Android's verifier fetch `https://HOST/.well-known/...` without following
redirects, want `application/json`, and read the documents' shapes strictly; a mistake there
fails silently on the phone (the link opens the browser), so each is named here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import msgspec

from shortlink.applinks.association import CONTENT_TYPE, HANDLE_ALL_URLS
from shortlink.applinks.schema import FINGERPRINT, AndroidApp, IosApp, app_id

APPLE_PATH = "/.well-known/apple-app-site-association"
ANDROID_PATH = "/.well-known/assetlinks.json"
# Apple: "the uncompressed file size must be no greater than 128 KB".
APPLE_MAX_BYTES = 128 * 1024
APP_ID = re.compile(r"[A-Z0-9]{10}\.[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*")


class Fetched(msgspec.Struct, frozen=True):
    """What one GET of a file answered (no redirect followed)."""

    url: str
    status: int
    content_type: str = ""
    location: str = ""
    body: bytes = b""
    error: str = ""  # the connection failed: no answer at all


class HostCheck(msgspec.Struct, frozen=True):
    host: str
    file: str  # the path checked
    mistakes: list[str]


def _answer_mistakes(fetched: Fetched, who: str) -> list[str]:
    if fetched.error:
        return [f"{fetched.url} could not be fetched: {fetched.error}"]
    mistakes = []
    if not fetched.url.startswith("https://"):
        mistakes.append(f"{fetched.url} is plain http; {who} fetches only https://")
    if 300 <= fetched.status < 400:
        where = fetched.location or "?"
        return [*mistakes, f"{fetched.url} redirects ({fetched.status} to {where}); {who} follows no redirect"]
    if fetched.status != 200:
        return [*mistakes, f"{fetched.url} answers {fetched.status}, not 200"]
    media_type = fetched.content_type.split(";", 1)[0].strip().lower()
    if media_type != CONTENT_TYPE:
        mistakes.append(f"{fetched.url} is served as {media_type or 'no Content-Type'}, not {CONTENT_TYPE}")
    return mistakes


def _json(fetched: Fetched) -> tuple[Any, str | None]:
    try:
        return json.loads(fetched.body), None
    except (ValueError, UnicodeDecodeError) as exc:
        return None, f"{fetched.url} is not valid JSON ({exc})"


def check_apple(fetched: Fetched, expected: Sequence[IosApp], local: bool = False) -> list[str]:
    """The mistakes Apple's validator would find in an apple-app-site-association answer.
    `local`: a development host, where plain http is not reported."""
    mistakes = _answer_mistakes(fetched, "Apple")
    if local:
        mistakes = [line for line in mistakes if "plain http" not in line]
    if fetched.error or fetched.status != 200:
        return mistakes
    if len(fetched.body) > APPLE_MAX_BYTES:
        mistakes.append(f"{fetched.url} is {len(fetched.body)} bytes; Apple reads at most {APPLE_MAX_BYTES}")
    document, problem = _json(fetched)
    if problem:
        return [*mistakes, problem]
    details = document.get("applinks", {}).get("details") if isinstance(document, dict) else None
    if not isinstance(details, list):
        return [*mistakes, f"{fetched.url} has no applinks.details list"]
    claimed: dict[str, list[str]] = {}
    for index, detail in enumerate(details):
        if not isinstance(detail, dict):
            mistakes.append(f"{fetched.url}: applinks.details[{index}] is not an object")
            continue
        ids = detail.get("appIDs", [detail["appID"]] if "appID" in detail else None)
        if not isinstance(ids, list) or not ids:
            mistakes.append(f"{fetched.url}: applinks.details[{index}] names no appIDs")
            continue
        components = detail.get("components")
        paths = detail.get("paths")
        if components is None and paths is None:
            mistakes.append(f"{fetched.url}: applinks.details[{index}] has no components (the URLs the app opens)")
        patterns = [c.get("/") for c in components or [] if isinstance(c, dict)] + list(paths or [])
        for identifier in ids:
            if not isinstance(identifier, str) or not APP_ID.fullmatch(identifier):
                mistakes.append(f"{fetched.url}: app id {identifier!r} is not TEAMID.bundle.id (10-character team id)")
            else:
                claimed.setdefault(identifier, []).extend(p for p in patterns if isinstance(p, str))
    for app in expected:
        identifier = app_id(app)
        if identifier not in claimed:
            mistakes.append(f"{fetched.url} does not name {identifier}")
            continue
        missing = [path for path in app.paths if path not in claimed[identifier]]
        if missing:
            mistakes.append(f"{fetched.url}: {identifier} is missing the paths {', '.join(missing)}")
    return mistakes


def check_android(fetched: Fetched, expected: Sequence[AndroidApp], local: bool = False) -> list[str]:
    """The mistakes Google's Statement List Generator and Tester would find in assetlinks.json."""
    mistakes = _answer_mistakes(fetched, "Android's verifier")
    if local:
        mistakes = [line for line in mistakes if "plain http" not in line]
    if fetched.error or fetched.status != 200:
        return mistakes
    document, problem = _json(fetched)
    if problem:
        return [*mistakes, problem]
    if not isinstance(document, list):
        return [*mistakes, f"{fetched.url} is not a JSON list of statements"]
    granted: dict[str, set[str]] = {}
    for index, statement in enumerate(document):
        where = f"{fetched.url}: statement {index}"
        if not isinstance(statement, dict) or not isinstance(statement.get("target"), dict):
            mistakes.append(f"{where} has no target object")
            continue
        relation = statement.get("relation")
        target = statement["target"]
        if not isinstance(relation, list) or HANDLE_ALL_URLS not in relation:
            mistakes.append(f"{where} lacks the relation {HANDLE_ALL_URLS}")
        if target.get("namespace") != "android_app":
            mistakes.append(f"{where}: target.namespace is {target.get('namespace')!r}, not 'android_app'")
            continue
        package = target.get("package_name")
        prints = target.get("sha256_cert_fingerprints")
        if not isinstance(package, str) or not isinstance(prints, list):
            mistakes.append(f"{where} needs package_name and a sha256_cert_fingerprints list")
            continue
        for value in prints:
            if not isinstance(value, str) or not FINGERPRINT.fullmatch(value):
                mistakes.append(f"{where}: fingerprint {value!r} is not 32 upper-case hex bytes separated by colons")
        if isinstance(relation, list) and HANDLE_ALL_URLS in relation:
            granted.setdefault(package, set()).update(p for p in prints if isinstance(p, str))
    for app in expected:
        if app.package not in granted:
            mistakes.append(f"{fetched.url} does not name {app.package}")
            continue
        for value in app.sha256_fingerprints:
            if value not in granted[app.package]:
                mistakes.append(f"{fetched.url}: {app.package} is missing the fingerprint {value}")
    return mistakes


def fetch(url: str, host: str | None = None, timeout: float = 5.0) -> Fetched:
    """One GET as the validators make it: no redirect followed, no cookie. `host`: the Host
    header to send when `url` names another address of the same server (doctor's --via)."""
    import httpx

    headers = {"Host": host} if host else {}
    try:
        with httpx.Client(follow_redirects=False, timeout=timeout, verify=True) as client:
            response = client.get(url, headers=headers)
    except httpx.HTTPError as exc:
        return Fetched(url, 0, error=str(exc) or type(exc).__name__)
    return Fetched(
        url,
        response.status_code,
        response.headers.get("content-type", ""),
        response.headers.get("location", ""),
        response.content[: APPLE_MAX_BYTES * 4],
    )


def check_host(
    host: str,
    base_url: str,
    ios: Sequence[IosApp],
    android: Sequence[AndroidApp],
    via: str | None = None,
    local: bool = False,
) -> list[HostCheck]:
    """Fetch and check the files of one host (`base_url`: scheme://host[:port]) for the apps
    it should name; `via` fetches from that address with the host's name as Host header."""

    def get(path: str) -> Fetched:
        if via is None:
            return fetch(f"{base_url}{path}")
        # Reported as the URL the validators would fetch.
        return msgspec.structs.replace(fetch(f"{via.rstrip('/')}{path}", host), url=f"{base_url}{path}")

    checks = []
    if ios:
        checks.append(HostCheck(host, APPLE_PATH, check_apple(get(APPLE_PATH), ios, local)))
    if android:
        checks.append(HostCheck(host, ANDROID_PATH, check_android(get(ANDROID_PATH), android, local)))
    return checks
