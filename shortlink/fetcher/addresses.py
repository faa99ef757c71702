"""Which addresses this service may connect to: the address policy (public addresses only unless
the operator allows private ones), this service's own hosts and addresses (never a destination),
and the resolution that checks every address a name gives. Shared by the title fetcher
(`fetcher/ssrf.py`) and webhook delivery (`webhooks/connections.py`); no HTTP here.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import itertools
import socket
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from shortlink.links.platforms import host_name

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# (address, port) → may we connect there?
AddressPolicy = Callable[[IPAddress, int], bool]
# (host, port) → the addresses to connect to; raises OSError when the name does not resolve.
Resolver = Callable[[str, int], Awaitable[list[IPAddress]]]


_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class FetchError(Exception):
    """A fetch that gave no page. `permanent` ones are not worth retrying."""

    def __init__(self, reason: str, *, permanent: bool = False):
        super().__init__(reason)
        self.permanent = permanent


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
    never fetched. A port of None stands for any port (a host given without one).
    `loopback_ports`: the ports where every loopback address (127.0.0.0/8, ::1) is this
    service, as it is for a server listening on loopback or on every interface."""

    hosts: frozenset[tuple[str, int | None]] = frozenset()
    addresses: frozenset[tuple[IPAddress, int | None]] = frozenset()
    loopback_ports: frozenset[int] = frozenset()

    def has_host(self, host: str, port: int) -> bool:
        name = host_name(host)
        return not self.hosts.isdisjoint({(name, port), (name, None)})

    def has_address(self, address: IPAddress, port: int) -> bool:
        address = address_key(address)
        # 0.0.0.0 and :: ("this host") reach the machine itself, this service included,
        # on any port: never another site's page, even where private addresses are allowed.
        if address.is_unspecified or (address.is_loopback and port in self.loopback_ports):
            return True
        return not self.addresses.isdisjoint({(address, port), (address, None)})


# No host or address of this service is known (tests, and fetches made before it listens).
NO_OWN_SERVICE = OwnService()


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


def local_addresses() -> frozenset[IPAddress]:
    """The addresses of this machine's interfaces, as Linux lists them (/proc/net/fib_trie's
    local host routes for IPv4, /proc/net/if_inet6 for IPv6); none where those are missing."""
    found: set[IPAddress] = set()
    with contextlib.suppress(OSError, ValueError):
        lines = Path("/proc/net/fib_trie").read_text().splitlines()
        for before, line in itertools.pairwise(lines):
            if line.split() == ["/32", "host", "LOCAL"]:
                found.add(ipaddress.ip_address(before.split()[-1]))
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/net/if_inet6").read_text().splitlines():
            found.add(ipaddress.IPv6Address(int(line.split()[0], 16)))
    return frozenset(found)


def _listens_everywhere(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return host == ""


class OwnServiceResolver:
    """This service as a destination to refuse: its hosts (`own_hosts()`, "host[:port]" entries,
    asked each time since custom domains come and go) with the addresses they resolve to,
    looked up again every `ttl` seconds rather than per request; and `listen`, the address and
    port the server listens on. A server listening on loopback is reached on its port at every
    loopback address (127.0.0.0/8 and ::1, IPv4-mapped too); one listening on every interface
    (0.0.0.0 or ::) is, and at every address of the machine's interfaces (read again every
    `ttl` seconds)."""

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
        self._local: tuple[float, frozenset[IPAddress]] = (0.0, frozenset())
        self._lock = asyncio.Lock()  # requests starting together resolve the hosts once

    async def __call__(self) -> OwnService:
        entries = set(self.own_hosts())
        everywhere = False
        if self.listen is not None:
            host, port = self.listen
            entries.add(f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
            everywhere = _listens_everywhere(host)
        hosts = own_host_entries(entries)
        async with self._lock:
            now_mono = self.clock()
            if everywhere and self._local[0] <= now_mono:
                self._local = (now_mono + self.ttl, frozenset(map(address_key, local_addresses())))
            fresh: dict[str, tuple[float, frozenset[IPAddress]]] = {}  # only names still ours
            for name in {name for name, _ in hosts}:
                until, addresses = self._resolved.get(name, (0.0, frozenset()))
                if until <= now_mono:
                    try:
                        addresses = frozenset(map(address_key, await self.resolve(name, 0)))
                    except (OSError, ValueError):  # a name that doesn't resolve has no address to refuse
                        addresses = frozenset()
                    until = now_mono + self.ttl
                fresh[name] = (until, addresses)
            self._resolved = fresh
        resolved = {(address, port) for name, port in hosts for address in fresh[name][1]}
        loopback_ports: frozenset[int] = frozenset()
        if self.listen is not None:
            host, port = self.listen
            listened = fresh.get(host_name(host), (0.0, frozenset()))[1]
            if everywhere:
                resolved |= {(address, port) for address in self._local[1]}
            if everywhere or any(address.is_loopback for address in listened):
                loopback_ports = frozenset({port})
        return OwnService(hosts, frozenset(resolved), loopback_ports)
