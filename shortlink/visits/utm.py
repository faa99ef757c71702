"""Forwarding the short URL's utm_* parameters onto the destination."""

from __future__ import annotations

from urllib.parse import parse_qsl, quote, unquote_plus, urlsplit, urlunsplit

PREFIX = "utm_"


def utm_params(query_string: str) -> dict[str, str]:
    """The utm_* parameters of a query, the last value winning for a repeated name."""
    if PREFIX not in query_string:
        return {}
    return {
        key: value
        for key, value in parse_qsl(query_string, keep_blank_values=True, errors="replace")
        if key.startswith(PREFIX) and len(key) > len(PREFIX)
    }


def forward_utm(destination: str, query_string: str) -> str:
    """The destination with the short URL's utm_* parameters set on it.

    Same-named parameters of the destination are replaced; its other parameters
    keep their exact spelling and order, and the fragment is kept. Applying it
    twice gives the same URL. Without utm parameters the destination is returned
    unchanged.
    """
    forwarded = utm_params(query_string)
    if not forwarded:
        return destination
    parts = urlsplit(destination)
    kept = [
        segment
        for segment in parts.query.split("&")
        if segment and unquote_plus(segment.split("=", 1)[0]) not in forwarded
    ]
    kept += [f"{quote(key, safe='')}={quote(value, safe='')}" for key, value in forwarded.items()]
    return urlunsplit(parts._replace(query="&".join(kept)))
