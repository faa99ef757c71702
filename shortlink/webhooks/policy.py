"""Endpoint rules and the retry schedule: plain functions, testable without HTTP."""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Collection
from urllib.parse import urlsplit

from shortlink.errors import ValidationError
from shortlink.fetcher.addresses import IPAddress, Resolver, address_key, is_public_address, system_resolver
from shortlink.links import validation as link_validation
from shortlink.webhooks.events import EVENT_TYPES, MAX_FILTER_ITEMS

# Seconds to wait before each retry; the last one repeats. Roughly the Standard Webhooks
# reference schedule: quick retries for a blip, then hours apart for an outage.
BACKOFF_SECONDS = (5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600)
# A delivery is retried for this long after its first failure, then marked failed; an
# endpoint failing for this long without one success is disabled.
RETRY_WINDOW_MS = 3 * 86400 * 1000
DISABLE_AFTER_MS = RETRY_WINDOW_MS
# The log of attempts (and dispatched events) is kept this long.
RETENTION_MS = 30 * 86400 * 1000
# How long saving an endpoint waits for its host name to resolve (then it is saved unjudged:
# every delivery checks the addresses again).
SAVE_RESOLVE_SECONDS = 5.0
ALLOW_PRIVATE = "set [fetcher] allow_private_addresses = true to allow it"


def kind_of(address: IPAddress) -> str:
    """What a non-public address is, as a person would name it."""
    address = address_key(address)
    if address.is_loopback:
        return "a loopback address (this machine)"
    if address.is_link_local:
        return "a link-local address"
    if address.is_private:
        return "a private address"
    return "a non-public address"


def validate_url(url: str, allow_private_addresses: bool) -> str:
    """An http(s) URL with a host; a literal address must be public unless the operator allows
    private ones. Names are checked again at every connection (webhooks.send)."""
    link_validation.refuse_invisible_characters("url", url)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationError("url", "must be an http:// or https:// URL with a host")
    try:
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        raise ValidationError("url", "has an invalid port") from None
    try:
        address = ipaddress.ip_address(parts.hostname)
    except ValueError:
        address = None
    if address is not None and not allow_private_addresses and not is_public_address(address):
        raise ValidationError("url", f"{address} is {kind_of(address)}; {ALLOW_PRIVATE}")
    return url


async def judge_host(url: str, allow_private_addresses: bool, resolve: Resolver = system_resolver) -> None:
    """A URL's host name judged when the endpoint is saved, as a delivery would judge it: every
    address it resolves to must be public unless private ones are allowed. A name that does not
    resolve (yet) within SAVE_RESOLVE_SECONDS is let through: deliveries check again each time,
    since DNS answers change. A literal address, or a URL validate_url refuses, is left to it."""
    if allow_private_addresses:
        return
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return
    if not host:
        return
    try:
        ipaddress.ip_address(host)
        return
    except ValueError:
        pass
    try:
        async with asyncio.timeout(SAVE_RESOLVE_SECONDS):
            addresses = await resolve(host, port)
    except (OSError, ValueError, TimeoutError):
        return
    for address in addresses:
        if not is_public_address(address):
            raise ValidationError("url", f"{host} resolves to {address}, {kind_of(address)}; {ALLOW_PRIVATE}")


def validate_events(events: Collection[str]) -> list[str]:
    unknown = [event for event in events if event not in EVENT_TYPES]
    if unknown:
        raise ValidationError("events", f"unknown event type {unknown[0]!r}; one of {', '.join(EVENT_TYPES)}")
    return [event for event in EVENT_TYPES if event in set(events)]


def validate_names(field: str, names: list[str] | None) -> list[str] | None:
    """Link ids or tag names an endpoint is limited to: trimmed, unique, at most 100."""
    if names is None:
        return None
    cleaned = list(dict.fromkeys(name.strip() for name in names))
    if len(cleaned) > MAX_FILTER_ITEMS:
        raise ValidationError(field, f"at most {MAX_FILTER_ITEMS} items")
    if any(not name for name in cleaned):
        raise ValidationError(field, "items must not be empty")
    for name in cleaned:
        link_validation.refuse_invisible_characters(field, name)
    return cleaned


def stored_events(events: list[str]) -> str:
    """Event types as stored: each with a space on both sides, so that SQL finds one with LIKE."""
    return " " + " ".join(events) + " "


def events_of(stored: str) -> list[str]:
    return stored.split()


def matches(
    events: Collection[str],
    link_ids: Collection[str] | None,
    tags: Collection[str] | None,
    event_type: str,
    link_id: str | None,
    link_tags: Collection[str],
) -> bool:
    """Whether an endpoint wants an event: its type is subscribed, and when the endpoint is
    limited to links or tags, the event's link is one of them or carries one of them (either
    limit suffices when both are given)."""
    if event_type not in events:
        return False
    if link_ids is None and tags is None:
        return True
    return (link_ids is not None and link_id in link_ids) or (tags is not None and not set(tags).isdisjoint(link_tags))


def next_attempt_ms(attempts: int, first_failed_ms: int, now_ms: int) -> int | None:
    """When to try again after the `attempts`-th failed attempt: the schedule's step, the last
    try at the end of the retry window since the first failure; None once that window is over
    (the delivery is then failed)."""
    deadline = first_failed_ms + RETRY_WINDOW_MS
    if now_ms >= deadline:
        return None
    wait = BACKOFF_SECONDS[min(attempts, len(BACKOFF_SECONDS)) - 1] * 1000
    return min(now_ms + wait, deadline)


def should_disable(failing_since_ms: int, now_ms: int) -> bool:
    return now_ms - failing_since_ms >= DISABLE_AFTER_MS
