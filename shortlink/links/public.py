"""The rules a link made on the public shortening page follows beyond the API's, as plain functions."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from shortlink.errors import ValidationError
from shortlink.links.platforms import host_name


def blocked_hosts(hosts: Iterable[str]) -> frozenset[str]:
    """The operator's blocklist in the one form hosts are compared in (lower case, IDNA, no dot or port)."""
    return frozenset(host_name(host) for host in hosts)


def blocking_entry(host: str, blocked: frozenset[str]) -> str | None:
    """The blocklist entry that covers `host`: the host itself or a domain it is under."""
    labels = host_name(host).split(".")
    return next((entry for n in range(len(labels)) if (entry := ".".join(labels[n:])) in blocked), None)


def refuse_for_public(field: str, url: str, is_ours: Callable[[str], bool], blocked: frozenset[str]) -> None:
    """A public link may not lead to the service itself (a short link behind a short link
    hides where it goes) nor to a blocked host. `url` has passed the API's URL rules."""
    host = urlsplit(url).hostname or ""
    if is_ours(host):
        raise ValidationError(field, "is already a link of this service; share it as it is")
    entry = blocking_entry(host, blocked)
    if entry is not None:
        raise ValidationError(field, f"leads to {entry}, which this service does not link to")
