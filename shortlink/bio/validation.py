"""The rules a bio page's fields follow, as plain functions (no HTTP, no SQL)."""

from __future__ import annotations

import re

from shortlink.errors import NotFoundError, ValidationError
from shortlink.links.validation import RESERVED_CODES, refuse_invisible_characters

HANDLE_PATTERN = re.compile(r"[a-z0-9_-]{3,30}")
MAX_TITLE, MAX_DESCRIPTION, MAX_LABEL = 100, 300, 80
MAX_BUTTONS = 50


def normalise_handle(handle: str) -> str:
    """Handles are lower case; "Alice" is "alice" (and /@Alice shows alice's page)."""
    return handle.lower()


def validate_handle(handle: str) -> str:
    """A handle, lower-cased; reserved words are refused as short codes are."""
    handle = normalise_handle(handle)
    if not HANDLE_PATTERN.fullmatch(handle):
        raise ValidationError("handle", "must be 3-30 characters of a-z, 0-9, _ and -")
    if handle in RESERVED_CODES:
        raise ValidationError("handle", f"'{handle}' is a reserved word")
    return handle


def _text(field: str, text: str, maximum: int, required: bool) -> str:
    text = text.strip()
    if required and not text:
        raise ValidationError(field, "must not be blank")
    if len(text) > maximum:
        raise ValidationError(field, f"must be at most {maximum} characters")
    refuse_invisible_characters(field, text)
    return text


def validate_title(title: str) -> str:
    return _text("title", title, MAX_TITLE, required=True)


def validate_description(description: str) -> str:
    return _text("description", description, MAX_DESCRIPTION, required=False)


def validate_label(label: str | None) -> str | None:
    """A button's own text; None (or blank) shows the link's title."""
    if label is None:
        return None
    return _text("label", label, MAX_LABEL, required=False) or None


def refuse_full_page(button_count: int) -> None:
    if button_count >= MAX_BUTTONS:
        raise ValidationError("linkId", f"a page holds at most {MAX_BUTTONS} buttons")


def validate_order(current: list[str], wanted: list[str]) -> list[str]:
    """A new order must name every button of the page exactly once."""
    if sorted(wanted) != sorted(current) or len(set(wanted)) != len(wanted):
        raise ValidationError("order", "must list every button's link id exactly once")
    return wanted


def referrer_label(host: str, path: str) -> str | None:
    """The referrer label of a click that came from a bio page of ours: "<host>/@<handle>"."""
    handle = path[2:].rstrip("/").lower()
    return f"{host}/@{handle}" if path.startswith("/@") and HANDLE_PATTERN.fullmatch(handle) else None


def moved(order: list[str], link_id: str, step: int) -> list[str]:
    """`order` with `link_id` moved `step` places (-1: up, 1: down); at an end it stays."""
    if link_id not in order:
        raise NotFoundError(f"Link {link_id} is not on the page")
    index = order.index(link_id)
    target = min(max(index + step, 0), len(order) - 1)
    result = [other for other in order if other != link_id]
    result.insert(target, link_id)
    return result
