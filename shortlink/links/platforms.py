"""The Platform of a link, detected once from its destination at creation."""

from __future__ import annotations

import enum
import ipaddress
import re
from collections.abc import Callable
from urllib.parse import urlsplit


class Platform(str, enum.Enum):
    YOUTUBE = "YOUTUBE"
    INSTAGRAM = "INSTAGRAM"
    TWITTER = "TWITTER"
    FACEBOOK = "FACEBOOK"
    LINKEDIN = "LINKEDIN"
    REDDIT = "REDDIT"
    SHORTLINK = "SHORTLINK"  # the service's own host ("the service" in the spec)
    SPOTIFY = "SPOTIFY"
    AMAZON = "AMAZON"
    APPSTORE = "APPSTORE"
    PLAYSTORE = "PLAYSTORE"
    OTHER = "OTHER"


# How people read each platform (the dashboard shows these; the API keeps the enum's values).
PLATFORM_NAMES: dict[Platform, str] = {
    Platform.YOUTUBE: "YouTube",
    Platform.INSTAGRAM: "Instagram",
    Platform.TWITTER: "X (Twitter)",
    Platform.FACEBOOK: "Facebook",
    Platform.LINKEDIN: "LinkedIn",
    Platform.REDDIT: "Reddit",
    Platform.SHORTLINK: "This service",
    Platform.SPOTIFY: "Spotify",
    Platform.AMAZON: "Amazon",
    Platform.APPSTORE: "App Store",
    Platform.PLAYSTORE: "Google Play",
    Platform.OTHER: "Other",
}


# Exact hosts (after normalising and dropping "www.") for each platform. Only a
# host equal to one of these, or a subdomain of the ones in WITH_SUBDOMAINS,
# matches: "youtube.com.evil.io" ends in ".evil.io" and is OTHER.
PLATFORM_OF_HOST: dict[str, Platform] = {
    "youtube.com": Platform.YOUTUBE,
    "youtu.be": Platform.YOUTUBE,
    "youtube-nocookie.com": Platform.YOUTUBE,
    "instagram.com": Platform.INSTAGRAM,
    "instagr.am": Platform.INSTAGRAM,
    "twitter.com": Platform.TWITTER,
    "x.com": Platform.TWITTER,
    "t.co": Platform.TWITTER,
    "facebook.com": Platform.FACEBOOK,
    "fb.com": Platform.FACEBOOK,
    "fb.watch": Platform.FACEBOOK,
    "fb.me": Platform.FACEBOOK,
    "linkedin.com": Platform.LINKEDIN,
    "lnkd.in": Platform.LINKEDIN,
    "reddit.com": Platform.REDDIT,
    "redd.it": Platform.REDDIT,
    "open.spotify.com": Platform.SPOTIFY,
    "spotify.link": Platform.SPOTIFY,
    "amzn.to": Platform.AMAZON,
    "amzn.eu": Platform.AMAZON,
    "a.co": Platform.AMAZON,
    "apps.apple.com": Platform.APPSTORE,
    "itunes.apple.com": Platform.APPSTORE,
    "play.google.com": Platform.PLAYSTORE,
}
# Platforms whose every subdomain is the same service (m.youtube.com, music.youtube.com,
# m.facebook.com, old.reddit.com, uk.linkedin.com, mobile.twitter.com, ...).
WITH_SUBDOMAINS = (
    "youtube.com",
    "facebook.com",
    "instagram.com",
    "twitter.com",
    "x.com",
    "linkedin.com",
    "reddit.com",
)
_TOP_LEVEL = re.compile(r"[a-z]{2,63}")
_COUNTRY = re.compile(r"[a-z]{2}")
_PORT = re.compile(r"[0-9]{0,5}")  # "host:" (an empty port) is allowed in URLs and Host


def host_name(host: str) -> str:
    """How hosts are compared: lower case, IDNA (punycode) form, no trailing dot, no port.

    "Go.Example.COM.", "go.example.com:8443" and "go.example.com" are one host;
    "[::1]:8000" is "::1". A port that is not a number stays, so the host matches nothing;
    so do brackets around anything but an IPv6 address ("[127.0.0.1]", "[go.example]",
    "[::1"), which no URL parser accepts: such a Host must never pass for one of ours.
    """
    host = host.strip().lower()
    if host.startswith("["):
        address, bracket, rest = host[1:].partition("]")
        if not bracket or not _is_ipv6(address):
            return host
        return address if not rest or (rest[0] == ":" and _PORT.fullmatch(rest[1:])) else host
    name, colon, port = host.partition(":")
    if colon and ":" not in port and _PORT.fullmatch(port):
        host = name
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            pass  # not a valid IDN: compared as written, it matches no real host
    return host.rstrip(".")


def _is_ipv6(address: str) -> bool:
    try:
        ipaddress.IPv6Address(address)
    except ValueError:
        return False
    return True


def site_of(host: str) -> str:
    # "www." is the same site as the bare host, for platforms and the service alike.
    name = host_name(host)
    return name[4:] if name.startswith("www.") else name


def _is_amazon(host: str) -> bool:
    # amazon.<tld> (amazon.de, amazon.us) or amazon.<co|com>.<country> (amazon.co.uk,
    # amazon.com.br), with any subdomain (m.amazon.com, smile.amazon.de). Only the
    # last labels decide, so amazon.com.evil.io and amazon.evil.io are not Amazon.
    labels = host.split(".")
    if len(labels) >= 2 and labels[-2] == "amazon" and _TOP_LEVEL.fullmatch(labels[-1]):
        return True
    return (
        len(labels) >= 3
        and labels[-3] == "amazon"
        and labels[-2] in ("co", "com")
        and _COUNTRY.fullmatch(labels[-1]) is not None
    )


def detect_platform(url: str, is_ours: Callable[[str], bool] = lambda host: False) -> Platform:
    """The platform of a destination URL, from its host alone; `is_ours` tells the
    service's own hosts (`application.hosts.Hosts.is_ours`)."""
    try:
        raw_host = urlsplit(url.strip()).hostname or ""
    except ValueError:
        return Platform.OTHER
    host = site_of(raw_host)
    if not host:
        return Platform.OTHER
    if is_ours(host):
        return Platform.SHORTLINK
    if host in PLATFORM_OF_HOST:
        return PLATFORM_OF_HOST[host]
    for base in WITH_SUBDOMAINS:
        if host.endswith("." + base):
            return PLATFORM_OF_HOST[base]
    return Platform.AMAZON if _is_amazon(host) else Platform.OTHER
