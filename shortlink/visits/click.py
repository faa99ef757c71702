"""The record one visit leaves: built on the redirect path, written in batches later.

Deliberately raw and cheap to build: parsing the user agent, extracting the
referrer's host, geolocating and hashing the IP all happen in the click writer,
off the request path. The IP lives only in memory; it is never stored.
"""

from __future__ import annotations

import msgspec


class Click(msgspec.Struct, array_like=True, gc=False, frozen=True):
    link_pk: int  # links.id
    account_id: int  # accounts.id (internal rowid)
    ts: int  # Unix milliseconds, UTC
    user_agent: str  # as sent, cropped to 512 characters
    referrer: str  # raw Referer header, "" when none
    campaign: str  # utm_source of the short URL's query, "" when none
    ip: str  # client IP after the trusted-proxy rules
    country_hint: str  # ISO alpha-2 from a trusted proxy's country header, "" when none
    is_bot: bool
    rule: int = -1  # the link rule that sent the visitor (its index), -1: the link's own destination
    variant: int = -1  # the variant of that rule's split, -1: no split
