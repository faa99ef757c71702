"""Who is the visitor: the client IP, believing X-Forwarded-For only from trusted proxies."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _parse(address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(address.strip().strip("[]"))
    except ValueError:
        return None


def _trusted(address, trusted: Sequence[Network]) -> bool:
    return any(address in network for network in trusted)


def client_ip(peer: str, forwarded_for: str | None, trusted: Sequence[Network]) -> str:
    """The first address, walking X-Forwarded-For from the right, that is not a trusted proxy.

    A forged X-Forwarded-For from an untrusted peer is ignored entirely; through
    trusted proxies, only entries they appended are believed.
    """
    if not trusted or not forwarded_for:  # the common case: no parsing at all
        return peer
    address = _parse(peer)
    if address is None or not _trusted(address, trusted):
        return peer
    for hop in reversed(forwarded_for.split(",")):
        hop_address = _parse(hop)
        if hop_address is None:
            return str(address)
        address = hop_address
        if not _trusted(address, trusted):
            return str(address)
    return str(address)


def peer_is_trusted(peer: str, trusted: Sequence[Network]) -> bool:
    if not trusted:
        return False
    address = _parse(peer)
    return address is not None and _trusted(address, trusted)
