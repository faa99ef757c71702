"""The rules a link made on the public shortening page follows beyond the API's, as plain functions."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from shortlink.errors import ValidationError
from shortlink.links.platforms import host_name

PRIVATE_DESTINATION = "leads to this server or a private network, which public links may not"


def blocked_hosts(hosts: Iterable[str]) -> frozenset[str]:
    """The operator's blocklist in the one form hosts are compared in (lower case, IDNA, no dot or port)."""
    return frozenset(host_name(host) for host in hosts)


def blocking_entry(host: str, blocked: frozenset[str]) -> str | None:
    """The blocklist entry that covers `host`: the host itself or a domain it is under."""
    labels = host_name(host).split(".")
    return next((entry for n in range(len(labels)) if (entry := ".".join(labels[n:])) in blocked), None)


def refuse_blocked(field: str, url: str, blocked: frozenset[str]) -> None:
    """No link, from any door, leads to a blocked host. `url` has passed the API's URL rules."""
    entry = blocking_entry(urlsplit(url).hostname or "", blocked)
    if entry is not None:
        raise ValidationError(field, f"leads to {entry}, which this service does not link to")


def refuse_for_public(field: str, url: str, is_ours: Callable[[str], bool], blocked: frozenset[str]) -> None:
    """A public link may not lead to the service itself (a short link behind a short link
    hides where it goes), name its host by IP address, nor lead to a blocked host. `url`
    has passed the API's URL rules.

    IP literals are refused outright: a blocklist of names cannot cover the addresses
    behind them (https://67.199.248.10/ is bit.ly), nor can "ours" cover every spelling
    of this machine ([::ffff:127.0.0.1]); people share names, not addresses."""
    host = urlsplit(url).hostname or ""
    if is_ours(host):
        raise ValidationError(field, "is already a link of this service; share it as it is")
    if _is_ip_address(host):
        raise ValidationError(field, "names its host by IP address; use the site's name")
    name = host_name(host)
    if name == "localhost" or name.endswith(".localhost"):  # loopback by definition (RFC 6761)
        raise ValidationError(field, PRIVATE_DESTINATION)
    refuse_blocked(field, url, blocked)


def _is_ip_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
