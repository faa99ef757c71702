"""The rules a link's fields must follow, as plain functions (no HTTP, no SQL)."""

from __future__ import annotations

import ipaddress
import posixpath
import re
from collections.abc import Callable
from datetime import UTC, datetime
from urllib.parse import unquote, urlsplit

from shortlink.controls import CONTROL_CHARACTERS
from shortlink.errors import ValidationError
from shortlink.ids import random_string

MAX_URL_LENGTH = 2048
RANDOM_CODE_LENGTH = 6
CODE_PATTERN = re.compile(r"[A-Za-z0-9_-]{3,32}")
_HOST_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")

# Compared case-insensitively. Every top-level path the service serves, plus
# words people would mistake for the service's own pages.
RESERVED_CODES = frozenset(
    {
        "about",
        "account",
        "admin",
        "analytics",
        "api",
        "app",
        "assets",
        "auth",
        "billing",
        "dashboard",
        "docs",
        "favicon",
        "health",
        "healthz",
        "help",
        "l",
        "links",
        "login",
        "logout",
        "me",
        "metrics",
        "openapi",
        "privacy",
        "qr",
        "register",
        "robots",
        "schema",
        "settings",
        "signin",
        "signup",
        "static",
        "status",
        "terms",
        "www",
    }
)


def validate_url(field: str, url: str) -> str:
    if len(url) > MAX_URL_LENGTH:
        raise ValidationError(field, f"must be at most {MAX_URL_LENGTH} characters")
    if url != url.strip() or any(ch in url for ch in "\r\n\t "):
        raise ValidationError(field, "must not contain spaces or line breaks")
    refuse_invisible_characters(field, url)
    if "\\" in _authority(url):
        # Browsers (WHATWG URL) read "\" as "/" in http(s) URLs, so they would see another
        # host than urlsplit: "https://evil.com\@www.youtube.com/" goes to evil.com.
        raise ValidationError(field, "must not contain a backslash before the path")
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise ValidationError(field, "is not a valid URL") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise ValidationError(field, "must be an http or https URL")
    if not _is_real_host(host):
        raise ValidationError(field, "must have a valid host name")
    return url


def _authority(url: str) -> str:
    """What follows the scheme up to the path, query or fragment (without reading "\\" as "/")."""
    rest = url.partition(":")[2].lstrip("/")
    return re.split(r"[/?#]", rest, maxsplit=1)[0]


def refuse_invisible_characters(field: str, text: str) -> None:
    """Control characters (C0, DEL, C1), Unicode line and paragraph separators and bidi
    controls (shortlink.controls): invisible or disruptive in pages, logs and terminals,
    never needed in a URL, a title, a description, an e-mail address or a name."""
    found = CONTROL_CHARACTERS.search(text)
    if found is not None:
        raise ValidationError(field, f"must not contain control characters (U+{ord(found.group()):04X})")


def refuse_link_to_itself(field: str, url: str, is_ours: Callable[[str], bool], code: str) -> None:
    """A link whose destination is its own short URL would redirect to itself forever.
    Other short links of the service are fine destinations (platform SHORTLINK)."""
    if short_link_code(url, is_ours) == code:
        raise ValidationError(field, f"must not be this link's own short URL (/l/{code}): it would redirect to itself")


def short_link_code(url: str, is_ours: Callable[[str], bool]) -> str | None:
    """The code of the service's short link that `url` (a valid URL) reaches, else None."""
    parts = urlsplit(url)
    return _short_link_code(parts.path) if is_ours(parts.hostname or "") else None


def _short_link_code(path: str) -> str | None:
    """The code a path reaches on the visitor route, as a browser that followed the
    redirect would send it: %-escapes decoded, "\\" read as "/", repeated slashes and
    dot segments resolved, a trailing slash folded by the router."""
    path = posixpath.normpath(re.sub(r"/+", "/", "/" + unquote(path).replace("\\", "/")))
    return path[3:] if path.startswith("/l/") and "/" not in path[3:] else None


def _is_real_host(host: str) -> bool:
    if not host:
        return False
    if host.startswith("[") or ":" in host or re.fullmatch(r"[0-9.]+", host):
        try:
            ipaddress.ip_address(host.strip("[]"))
            return True
        except ValueError:
            return False
    try:
        ascii_host = host.encode("idna").decode("ascii").lower().rstrip(".")
    except UnicodeError:
        return False
    labels = ascii_host.split(".")
    if ascii_host == "localhost":
        return True
    return len(labels) >= 2 and all(_HOST_LABEL.fullmatch(label) for label in labels) and not labels[-1].isdigit()


def validate_custom_code(code: str) -> str:
    if not CODE_PATTERN.fullmatch(code):
        raise ValidationError("customCode", "must be 3-32 characters of A-Z, a-z, 0-9, _ and -")
    if code.lower() in RESERVED_CODES:
        raise ValidationError("customCode", f"'{code}' is a reserved word")
    return code


def random_code() -> str:
    return random_string(RANDOM_CODE_LENGTH)


def validate_title(title: str) -> str:
    if not 1 <= len(title) <= 200:
        raise ValidationError("title", "must be 1-200 characters")
    if not title.strip():
        raise ValidationError("title", "must not be blank")
    refuse_invisible_characters("title", title)
    return title


def validate_description(description: str) -> str:
    if not 1 <= len(description) <= 500:
        raise ValidationError("description", "must be 1-500 characters")
    if not description.strip():
        raise ValidationError("description", "must not be blank")
    refuse_invisible_characters("description", description)
    return description


def parse_future_time(field: str, text: str, now: datetime) -> datetime:
    moment = parse_time(field, text)
    if moment <= now:
        raise ValidationError(field, "must be in the future")
    return moment


def parse_time(field: str, text: str) -> datetime:
    """An ISO 8601 date-time with a UTC offset, in UTC."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValidationError(field, "must be an ISO 8601 date-time such as 2030-01-31T12:00:00Z") from None
    if moment.tzinfo is None:
        raise ValidationError(field, "must include a UTC offset, e.g. 2030-01-31T12:00:00Z")
    try:
        moment = moment.astimezone(UTC)
    except OverflowError:  # 9999-12-31T23:00:00-05:00 is in the year 10000 in UTC
        raise ValidationError(field, "must be between the years 1 and 9999 in UTC") from None
    return moment
