"""The host rewrite by country: amazon.com → amazon.de for a visitor in Germany, path and query kept."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from shortlink.link_rules.stores import TABLES


def rewritten(url: str, country: str, table: str | None, hosts: dict[str, str] | None) -> str:
    """`url` with its host replaced for `country`: the owner's `hosts` map first, then the
    shipped `table` when the URL is on one of its stores; else `url` unchanged. A "www." on the
    destination stays on a store's host; a port and user info are kept."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    new_host = (hosts or {}).get(country)
    if new_host is None and table is not None:
        stores, store_hosts = TABLES[table]
        bare = host.removeprefix("www.")
        store = stores.get(country)
        if bare in store_hosts and store is not None:
            new_host = ("www." if host.startswith("www.") else "") + store
    if new_host is None or new_host == host:
        return url
    netloc = parts.netloc
    at = netloc.rfind("@") + 1
    rest = netloc[at:]
    port = rest[rest.rfind(":") :] if ":" in rest and not rest.endswith("]") else ""
    return urlunsplit(parts._replace(netloc=netloc[:at] + new_host + port))
