"""Fetching a destination page without being turned against private networks (SSRF).

Every hop (the URL and each redirect) is resolved here, every address it
resolves to is checked against the address policy, and the connection goes to
the checked address itself: the request URL carries the IP, the Host header and
TLS server name carry the original host. A DNS answer that changes between the
check and the connection therefore cannot redirect the fetch.
"""

from __future__ import annotations

import ssl
import zlib
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urljoin

import httpx

from shortlink.fetcher.addresses import (
    NO_OWN_SERVICE,
    AddressPolicy,
    FetchError,
    OwnService,
    Resolver,
    checked_address,
    system_resolver,
)

MAX_REDIRECTS = 5
MAX_BODY_BYTES = 1024 * 1024
HTML_TYPES = ("text/html", "application/xhtml+xml")
# The Content-Encodings we ask for, with their zlib window settings (32: zlib or gzip header).
ZLIB_WINDOWS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": 32 + zlib.MAX_WBITS}
REDIRECT_STATUSES = {301, 302, 303, 307, 308}


@lru_cache(maxsize=1)
def tls_context() -> ssl.SSLContext:
    """The verifying TLS context of every outgoing request (titles, webhooks), one per process:
    making one reads the whole CA bundle, which every app start did twice before."""
    return httpx.create_ssl_context(trust_env=False)


@dataclass(frozen=True)
class FetchedPage:
    url: str  # after redirects
    content_type: str  # the Content-Type header, parameters included
    body: bytes  # at most MAX_BODY_BYTES


async def fetch_html(
    client: httpx.AsyncClient,
    url: str,
    *,
    policy: AddressPolicy,
    user_agent: str,
    own: OwnService = NO_OWN_SERVICE,
    resolve: Resolver = system_resolver,
    max_bytes: int = MAX_BODY_BYTES,
) -> FetchedPage:
    """GET an HTML page, following at most MAX_REDIRECTS redirects, each one checked.

    Hosts and addresses of `own` are never fetched. The client must not follow
    redirects or use proxies itself (follow_redirects=False, trust_env=False).
    The caller bounds the total time.
    """
    for _hop in range(MAX_REDIRECTS + 1):
        try:
            target = httpx.URL(url)
        except httpx.InvalidURL as exc:
            raise FetchError(f"invalid URL {url!r}: {exc}", permanent=True) from None
        if target.scheme not in ("http", "https") or not target.host:
            raise FetchError(f"not an http(s) URL: {url}", permanent=True)
        host = target.raw_host.decode("ascii")
        port = target.port or (443 if target.scheme == "https" else 80)
        if own.has_host(host, port):
            raise FetchError(f"refused: {host} is this service itself", permanent=True)
        address = await checked_address(host, port, policy, own, resolve)
        pinned = httpx.URL(scheme=target.scheme, host=str(address), port=target.port, raw_path=target.raw_path)
        request = client.build_request(
            "GET",
            pinned,
            headers={
                "Host": target.netloc.decode("ascii"),
                "User-Agent": user_agent,
                "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1",
                "Accept-Encoding": "gzip, deflate",
            },
            extensions={"sni_hostname": host} if target.scheme == "https" else {},
        )
        try:
            response = await client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise FetchError(f"{type(exc).__name__}: {exc}".rstrip(": ")) from None
        try:
            if response.status_code in REDIRECT_STATUSES and "location" in response.headers:
                url = _redirect_target(url, response.headers["location"])
                continue
            return await _read_page(response, url, max_bytes)
        finally:
            await response.aclose()
    raise FetchError(f"more than {MAX_REDIRECTS} redirects", permanent=True)


def _redirect_target(url: str, location: str) -> str:
    try:
        return urljoin(url, location)
    except ValueError as exc:
        raise FetchError(f"invalid URL {location!r} in a redirect: {exc}", permanent=True) from None


async def _read_page(response: httpx.Response, url: str, max_bytes: int) -> FetchedPage:
    if not response.is_success:
        # 4xx will not improve by asking again soon; 5xx and 429 may.
        transient = response.status_code >= 500 or response.status_code == 429
        raise FetchError(f"HTTP {response.status_code}", permanent=not transient)
    content_type = response.headers.get("content-type", "")
    if content_type.split(";", 1)[0].strip().lower() not in HTML_TYPES:
        raise FetchError(f"not HTML: {content_type or 'no Content-Type'}", permanent=True)
    encoding = response.headers.get("content-encoding", "").strip().lower() or "identity"
    if encoding not in ZLIB_WINDOWS and encoding != "identity":
        raise FetchError(f"unsupported Content-Encoding: {encoding}", permanent=True)
    # Decompressed here, never past what is still wanted: a small gzip "bomb" must
    # not expand to hundreds of MiB in memory before the size limit applies.
    decoder = zlib.decompressobj(ZLIB_WINDOWS[encoding]) if encoding in ZLIB_WINDOWS else None
    body = bytearray()
    try:
        async for chunk in response.aiter_raw():
            body += decoder.decompress(chunk, max_bytes - len(body)) if decoder else chunk
            if len(body) >= max_bytes:
                break  # stop reading; closing the response drops the rest
    except httpx.HTTPError as exc:
        raise FetchError(f"{type(exc).__name__}: {exc}".rstrip(": ")) from None
    return FetchedPage(url=url, content_type=content_type, body=bytes(body[:max_bytes]))
