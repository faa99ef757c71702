"""The association files checked as Apple's and Google's validators check them: what a fetch
of each file answered, against the apps the host should name. Each mistake is one line.

Apple's CDN and Android's verifier fetch `https://HOST/.well-known/...` without following
redirects, want `application/json`, and read the documents' shapes strictly; a mistake there
fails silently on the phone (the link opens the browser), so each is named here.
"""

from __future__ import annotations

import asyncio
import json
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
import msgspec

from shortlink.applinks.association import CONTENT_TYPE, HANDLE_ALL_URLS
from shortlink.applinks.schema import FINGERPRINT, AndroidApp, IosApp, app_id
from shortlink.fetcher.addresses import (
    NO_OWN_SERVICE,
    AddressPolicy,
    FetchError,
    Resolver,
    checked_address,
    system_resolver,
)
from shortlink.fetcher.ssrf import ZLIB_WINDOWS, tls_context

APPLE_PATH = "/.well-known/apple-app-site-association"
ANDROID_PATH = "/.well-known/assetlinks.json"
# Apple: "the uncompressed file size must be no greater than 128 KB". No file is read further,
# Google's either: a validator reads no more, and a host must not make the check hold more.
APPLE_MAX_BYTES = MAX_BYTES = 128 * 1024
# The whole check (every host and file, fetched at once), body included: a slow or dripping
# host is reported as not fetched once this has passed.
CHECK_SECONDS = 10.0
APP_ID = re.compile(r"[A-Z0-9]{10}\.[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*")


class Fetched(msgspec.Struct, frozen=True):
    """What one GET of a file answered (no redirect followed)."""

    url: str
    status: int
    content_type: str = ""
    location: str = ""
    body: bytes = b""
    error: str = ""  # the connection failed: no answer at all
    cut: bool = False  # the body went on past MAX_BYTES: `body` is its start


class HostCheck(msgspec.Struct, frozen=True):
    host: str
    file: str  # the path checked
    mistakes: list[str]
    url: str = ""  # the URL the validators fetch


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
    if fetched.cut:
        return [*mistakes, f"{fetched.url} is larger than {APPLE_MAX_BYTES} bytes; Apple reads at most that"]
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
    if fetched.cut:
        return [*mistakes, f"{fetched.url} is larger than {MAX_BYTES} bytes; the check reads no more (Apple's limit)"]
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


async def fetch(
    client: httpx.AsyncClient,
    url: str,
    *,
    deadline: float,
    policy: AddressPolicy,
    host: str | None = None,
    resolve: Resolver = system_resolver,
    max_bytes: int = MAX_BYTES,
) -> Fetched:
    """One GET as the validators make it: no redirect followed, no cookie, at most `max_bytes`
    of body, given up at `deadline` (the event loop's clock). The address `url` names must pass
    `policy`, and is the one connected to (a DNS answer that changes in between changes
    nothing). `host`: the Host header to send when `url` names another address of the same
    server (doctor's --via)."""
    try:
        async with asyncio.timeout_at(deadline):
            return await _fetch(client, url, policy, host, resolve, max_bytes)
    except TimeoutError:
        return Fetched(url, 0, error="no whole answer before the check's time limit")


async def _fetch(
    client: httpx.AsyncClient, url: str, policy: AddressPolicy, host: str | None, resolve: Resolver, max_bytes: int
) -> Fetched:
    try:
        target = httpx.URL(url)
        if target.scheme not in ("http", "https") or not target.host:
            return Fetched(url, 0, error="not an http(s) URL")
        name = target.raw_host.decode("ascii")
        port = target.port or (443 if target.scheme == "https" else 80)
        address = await checked_address(name, port, policy, NO_OWN_SERVICE, resolve)
    except (httpx.InvalidURL, UnicodeDecodeError) as exc:
        return Fetched(url, 0, error=f"not a URL ({exc})")
    except FetchError as exc:
        return Fetched(url, 0, error=str(exc))
    sent_host = host or target.netloc.decode("ascii")
    request = client.build_request(
        "GET",
        httpx.URL(scheme=target.scheme, host=str(address), port=target.port, raw_path=target.raw_path),
        headers={"Host": sent_host, "Accept-Encoding": "gzip, deflate"},
        # The certificate is checked against the host's name, not the address connected to.
        extensions={"sni_hostname": urlsplit(f"//{sent_host}").hostname} if target.scheme == "https" else {},
    )
    try:
        response = await client.send(request, stream=True)
        try:
            body, cut = await _read_body(response, max_bytes)
        finally:
            await response.aclose()
    except (httpx.HTTPError, zlib.error) as exc:
        return Fetched(url, 0, error=str(exc) or type(exc).__name__)
    return Fetched(
        url,
        response.status_code,
        response.headers.get("content-type", ""),
        response.headers.get("location", ""),
        body,
        cut=cut,
    )


async def _read_body(response: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    """At most `max_bytes` of the (decompressed) body, and whether there was more. Decompressed
    here, never past the cap: a small gzip body must not expand in memory before the cap holds."""
    encoding = response.headers.get("content-encoding", "").strip().lower()
    decoder = zlib.decompressobj(ZLIB_WINDOWS[encoding]) if encoding in ZLIB_WINDOWS else None
    body = bytearray()
    async for chunk in response.aiter_raw():
        body += decoder.decompress(chunk, max_bytes + 1 - len(body)) if decoder else chunk
        if len(body) > max_bytes:
            return bytes(body[:max_bytes]), True  # closing the response drops the rest
    return bytes(body), False


@dataclass(frozen=True)
class Target:
    """One host to check for the apps it should name. `base_url`: scheme://host[:port] as the
    validators fetch it; `via`: fetch from that address instead, with the host's name as Host;
    `local`: a development host, where plain http is not reported; `policy`: the addresses it
    may be fetched from."""

    host: str
    base_url: str
    ios: Sequence[IosApp]
    android: Sequence[AndroidApp]
    policy: AddressPolicy
    via: str | None = None
    local: bool = False


async def check_hosts(
    targets: Sequence[Target],
    seconds: float = CHECK_SECONDS,
    *,
    resolve: Resolver = system_resolver,
    max_bytes: int = MAX_BYTES,
) -> list[HostCheck]:
    """Fetch and check the files of every target at once, all within `seconds`: a host that
    answers slowly, or drips its body, is reported as not fetched, never waited on longer."""
    deadline = asyncio.get_running_loop().time() + seconds

    async def get(target: Target, path: str) -> Fetched:
        url = f"{target.base_url}{path}"
        if target.via is None:
            return await fetch(
                client, url, deadline=deadline, policy=target.policy, resolve=resolve, max_bytes=max_bytes
            )
        fetched = await fetch(
            client, f"{target.via.rstrip('/')}{path}", deadline=deadline, policy=target.policy, host=target.host,
            resolve=resolve, max_bytes=max_bytes,
        )  # fmt: skip
        # Reported as the URL the validators would fetch.
        return msgspec.structs.replace(fetched, url=url)

    async def check(target: Target) -> list[HostCheck]:
        checks = []
        apple, android = await asyncio.gather(
            get(target, APPLE_PATH) if target.ios else _nothing(),
            get(target, ANDROID_PATH) if target.android else _nothing(),
        )
        if apple is not None:
            mistakes = check_apple(apple, target.ios, target.local)
            checks.append(HostCheck(target.host, APPLE_PATH, mistakes, f"{target.base_url}{APPLE_PATH}"))
        if android is not None:
            mistakes = check_android(android, target.android, target.local)
            checks.append(HostCheck(target.host, ANDROID_PATH, mistakes, f"{target.base_url}{ANDROID_PATH}"))
        return checks

    # The validators neither follow redirects nor use a proxy; httpx's own timeouts are the
    # deadline's, which cuts every wait (name, connection, each read) short.
    # The first TLS context of a process reads the whole CA bundle: not on the event loop.
    verify = await asyncio.to_thread(tls_context)
    async with httpx.AsyncClient(follow_redirects=False, trust_env=False, verify=verify, timeout=seconds) as client:
        per_target = await asyncio.gather(*(check(target) for target in targets))
    return [result for results in per_target for result in results]


async def _nothing() -> None:
    return None
