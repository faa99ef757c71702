"""Fetching a destination page without being turned against private networks (SSRF).

Every hop (the URL and each redirect) is resolved here, every address it
resolves to is checked against the address policy, and the connection goes to
the checked address itself: the request URL carries the IP, the Host header and
TLS server name carry the original host. A DNS answer that changes between the
check and the connection therefore cannot redirect the fetch.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import ssl
import time
import zlib
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urljoin, urlsplit

import httpx

from shortlink.links.platforms import host_name

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# (address, port) → may we connect there?
AddressPolicy = Callable[[IPAddress, int], bool]
# (host, port) → the addresses to connect to; raises OSError when the name does not resolve.
Resolver = Callable[[str, int], Awaitable[list[IPAddress]]]

MAX_REDIRECTS = 5
MAX_BODY_BYTES = 1024 * 1024
HTML_TYPES = ("text/html", "application/xhtml+xml")
# The Content-Encodings we ask for, with their zlib window settings (32: zlib or gzip header).
ZLIB_WINDOWS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": 32 + zlib.MAX_WBITS}
REDIRECT_STATUSES = {301, 302, 303, 307, 308}

_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class FetchError(Exception):
    """A fetch that gave no page. `permanent` ones are not worth retrying."""

    def __init__(self, reason: str, *, permanent: bool = False):
        super().__init__(reason)
        self.permanent = permanent


@lru_cache(maxsize=1)
def tls_context() -> ssl.SSLContext:
    """The verifying TLS context of every outgoing request (titles, webhooks), one per process:
    making one reads the whole CA bundle, which every app start did twice before."""
    return httpx.create_ssl_context(trust_env=False)


def is_public_address(address: IPAddress) -> bool:
    """A globally routable unicast address, also for IPv4 embedded in IPv6.

    `is_global` alone lets multicast and IPv6 site-local through, so those are
    refused explicitly; CGNAT (100.64/10) is not global.
    """
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:  # the connection goes out over IPv4
            return is_public_address(address.ipv4_mapped)
        embedded = address.sixtofour
        if embedded is None and address.teredo:
            embedded = address.teredo[1]
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF)
        if embedded is not None and not is_public_address(embedded):
            return False
        if address.is_site_local:
            return False
    return address.is_global and not (
        address.is_multicast
        or address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_reserved
        or address.is_unspecified
    )


def public_only(address: IPAddress, _port: int) -> bool:
    return is_public_address(address)


def any_address(_address: IPAddress, _port: int) -> bool:
    return True


def address_policy(allow_private_addresses: bool) -> AddressPolicy:
    return any_address if allow_private_addresses else public_only


async def system_resolver(host: str, port: int) -> list[IPAddress]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]


def address_key(address: IPAddress) -> IPAddress:
    """How an address is compared: ::ffff:127.0.0.1 is 127.0.0.1."""
    return getattr(address, "ipv4_mapped", None) or address


@dataclass(frozen=True)
class OwnService:
    """This service's own hosts (host_name) and the addresses they resolve to (address_key):
    never fetched. A port of None stands for any port (a host given without one)."""

    hosts: frozenset[tuple[str, int | None]] = frozenset()
    addresses: frozenset[tuple[IPAddress, int | None]] = frozenset()

    def has_host(self, host: str, port: int) -> bool:
        name = host_name(host)
        return not self.hosts.isdisjoint({(name, port), (name, None)})

    def has_address(self, address: IPAddress, port: int) -> bool:
        address = address_key(address)
        # 0.0.0.0 and :: ("this host") reach the machine itself, this service included,
        # on any port: never another site's page, even where private addresses are allowed.
        return address.is_unspecified or not self.addresses.isdisjoint({(address, port), (address, None)})


def own_host_entries(entries: Iterable[str]) -> frozenset[tuple[str, int | None]]:
    """ "host[:port]" entries (IPv6 in brackets) as (host_name, port or None)."""
    parsed = (urlsplit(f"//{entry}") for entry in entries)
    return frozenset((host_name(parts.hostname or ""), parts.port) for parts in parsed)


async def checked_address(host: str, port: int, policy: AddressPolicy, own: OwnService, resolve: Resolver) -> IPAddress:
    """Resolve `host`; every address must pass the policy and not be the service's own.
    Returns the one to connect to."""
    try:
        addresses = await resolve(host, port)
    except (OSError, ValueError) as exc:
        raise FetchError(f"cannot resolve {host}: {exc}") from None
    if not addresses:
        raise FetchError(f"cannot resolve {host}")
    for address in addresses:
        if not policy(address, port):
            raise FetchError(f"refused: {host} resolves to the non-public address {address}", permanent=True)
        if own.has_address(address, port):
            raise FetchError(
                f"refused: {host} resolves to {address}, an address of this service itself", permanent=True
            )
    return addresses[0]


class OwnServiceResolver:
    """This service as a destination to refuse: its hosts (`own_hosts()`, "host[:port]" entries,
    asked each time since custom domains come and go) with the addresses they resolve to,
    looked up again every `ttl` seconds rather than per request; and `listen`, the address and
    port the server listens on. A server listening on every interface (0.0.0.0 or ::) is
    reached on its port over loopback too; its other interfaces' addresses are not known here
    (the usual setup puts a proxy in front, whose names are among the hosts)."""

    def __init__(
        self,
        own_hosts: Callable[[], Iterable[str]],
        resolve: Resolver,
        *,
        listen: tuple[str, int] | None = None,
        ttl: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.own_hosts, self.resolve, self.ttl, self.clock = own_hosts, resolve, ttl, clock
        self.listen = listen
        self._resolved: dict[str, tuple[float, frozenset[IPAddress]]] = {}  # name -> (until, addresses)
        self._lock = asyncio.Lock()  # requests starting together resolve the hosts once

    async def __call__(self) -> OwnService:
        entries = set(self.own_hosts())
        loopback: set[tuple[IPAddress, int | None]] = set()
        if self.listen is not None:
            host, port = self.listen
            entries.add(f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
            with contextlib.suppress(ValueError):
                if ipaddress.ip_address(host).is_unspecified:
                    loopback = {(ipaddress.ip_address("127.0.0.1"), port), (ipaddress.ip_address("::1"), port)}
        hosts = own_host_entries(entries)
        async with self._lock:
            now = self.clock()
            fresh: dict[str, tuple[float, frozenset[IPAddress]]] = {}  # only names still ours
            for name in {name for name, _ in hosts}:
                until, addresses = self._resolved.get(name, (0.0, frozenset()))
                if until <= now:
                    try:
                        addresses = frozenset(map(address_key, await self.resolve(name, 0)))
                    except (OSError, ValueError):  # a name that doesn't resolve has no address to refuse
                        addresses = frozenset()
                    until = now + self.ttl
                fresh[name] = (until, addresses)
            self._resolved = fresh
        resolved = {(address, port) for name, port in hosts for address in fresh[name][1]}
        return OwnService(hosts, frozenset(resolved | loopback))


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
    own: OwnService = OwnService(),
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
