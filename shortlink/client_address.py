"""Who is the visitor: the client IP, believing X-Forwarded-For only from trusted proxies."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
_PORT = re.compile(r":[0-9]{1,5}")


def _parse(address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An address as proxies write it: "1.2.3.4", "1.2.3.4:5678", "2001:db8::1",
    "[2001:db8::1]" or "[2001:db8::1]:443"; None for anything else ("unknown")."""
    address = address.strip()
    port = ""
    if address.startswith("["):
        address, bracket, port = address[1:].partition("]")
        if not bracket:
            return None
    elif address.count(":") == 1:  # IPv4 with a port; bare IPv6 has two colons or more
        address, colon, port = address.partition(":")
        port = colon + port
    if port and not _PORT.fullmatch(port):
        return None
    try:
        return ipaddress.ip_address(address)
    except ValueError:
        return None


def _trusted(address, trusted: Sequence[Network]) -> bool:
    return any(address in network for network in trusted)


def client_ip(peer: str, forwarded_for: str | None, trusted: Sequence[Network]) -> str:
    """The first address, walking X-Forwarded-For from the right, that is not a trusted proxy.

    A forged X-Forwarded-For from an untrusted peer is ignored entirely; through
    trusted proxies, only entries they appended are believed. Ports are dropped and
    hops that are no address ("unknown") skipped: stopping at one would give every
    such visitor the proxy's address, one password-attempt bucket for all of them.
    """
    if not trusted or not forwarded_for:  # the common case: no parsing at all
        return peer
    address = _parse(peer)
    if address is None or not _trusted(address, trusted):
        return peer
    for hop in reversed(forwarded_for.split(",")):
        hop_address = _parse(hop)
        if hop_address is None:
            continue
        address = hop_address
        if not _trusted(address, trusted):
            return str(address)
    return str(address)


def peer_is_trusted(peer: str, trusted: Sequence[Network]) -> bool:
    if not trusted:
        return False
    address = _parse(peer)
    return address is not None and _trusted(address, trusted)


def address_of(peer: str, forwarded_for: str | None, trusted: Sequence[Network]) -> tuple[str, bool]:
    """(client IP, whether the direct peer is a trusted proxy): the visitor path's reading,
    shared by every place that limits or records by client address."""
    via_proxy = peer_is_trusted(peer, trusted)
    return client_ip(peer, forwarded_for if via_proxy else None, trusted), via_proxy


def client_bucket(ip: str) -> str:
    """Who a limit counts: the IP, where an IPv6 visitor is their /64 (whoever holds a /64
    can rotate addresses within it)."""
    if ":" not in ip:
        return ip
    try:
        address = ipaddress.IPv6Address(ip)
    except ValueError:
        return ip
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(ipaddress.IPv6Network((address, 64), strict=False))
