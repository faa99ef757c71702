"""Where a link leads, written so a careful visitor can check it before tapping.

The registrable part of the host (example.co.uk in www.example.co.uk, from the Public
Suffix List) is what tells sites apart, so pages show it apart from the subdomains.
Internationalised names are shown in Unicode, with the punycode form beside them when
the two differ: a look-alike such as "аpple.com" (Cyrillic а) then shows as
xn--pple-43d.com, plainly not apple.com.
"""

from __future__ import annotations

import ipaddress
from functools import cache
from urllib.parse import urlsplit

import msgspec
from publicsuffixlist import PublicSuffixList

PUNYCODE_PREFIX = "xn--"


class DisplayHost(msgspec.Struct, frozen=True):
    subdomains: str  # "www." or "" (Unicode, with its trailing dot)
    registrable: str  # "example.co.uk" (Unicode), or the whole host when there is none
    ascii: str  # the whole host as DNS sees it (punycode), with ":port" when not the default
    port: str  # ":8080" or ""
    secure: bool  # https

    @property
    def unicode(self) -> str:
        return self.subdomains + self.registrable + self.port

    @property
    def differs(self) -> bool:
        """Does the punycode form read differently from the Unicode one?"""
        return self.ascii != self.unicode


@cache
def _suffixes() -> PublicSuffixList:
    # Loaded on the first page that shows a host, never by a redirect.
    return PublicSuffixList()


def _label_to_unicode(label: str) -> str:
    if label.startswith(PUNYCODE_PREFIX):
        try:
            return label[len(PUNYCODE_PREFIX) :].encode("ascii").decode("punycode")
        except (UnicodeError, ValueError):
            return label  # not valid punycode: show it as it is
    return label


def _label_to_ascii(label: str) -> str:
    return label if label.isascii() else PUNYCODE_PREFIX + label.encode("punycode").decode("ascii")


def _registrable(host: str) -> str:
    try:
        ipaddress.ip_address(host.strip("[]"))
        return host
    except ValueError:
        pass
    return _suffixes().privatesuffix(host) or host


def display_host(url: str) -> DisplayHost | None:
    """The destination's host split for display; None when the URL has no host."""
    try:
        parts = urlsplit(url)
        hostname = parts.hostname
        port = parts.port
    except ValueError:
        return None
    if not hostname:
        return None
    # An IPv6 address is one label, written as in a URL.
    labels = [f"[{hostname}]"] if ":" in hostname else hostname.rstrip(".").split(".")
    unicode_host = ".".join(_label_to_unicode(label) for label in labels)
    ascii_host = ".".join(_label_to_ascii(label) for label in labels)
    registrable = _registrable(unicode_host)
    port_text = f":{port}" if port is not None else ""
    return DisplayHost(
        subdomains=unicode_host[: len(unicode_host) - len(registrable)],
        registrable=registrable,
        ascii=ascii_host + port_text,
        port=port_text,
        secure=parts.scheme == "https",
    )
