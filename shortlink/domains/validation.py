"""A domain name an account may connect: checked without a database or the network."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable

from shortlink.errors import ValidationError
from shortlink.links.validation import refuse_invisible_characters

_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")


def validate_name(name: str, is_service_host: Callable[[str], bool]) -> str:
    """The name in the form Host headers are compared in (lower case, IDNA, no trailing dot)."""
    refuse_invisible_characters("name", name)
    text = name.strip().lower().rstrip(".")
    if not text or any(ch in text for ch in "/:@?#\\ []"):
        raise ValidationError("name", "must be a bare domain name such as links.example.com (no scheme, port or path)")
    try:
        ipaddress.ip_address(text)
    except ValueError:
        pass
    else:
        raise ValidationError("name", "must be a domain name, not an IP address")
    try:
        # As links.platforms.host_name reads a visitor's Host header (IDNA 2003, Python's codec).
        text = text.encode("idna").decode("ascii")
    except UnicodeError:
        raise ValidationError("name", "is not a valid internationalised domain name") from None
    labels = text.split(".")
    if len(text) > 253 or len(labels) < 2 or not all(_LABEL.fullmatch(label) for label in labels):
        raise ValidationError("name", "must be a domain name such as links.example.com")
    if labels[-1].isdigit():
        raise ValidationError("name", "must be a domain name, not an IP address")
    if is_service_host(text):
        raise ValidationError("name", "is one of this service's own hosts")
    return text
