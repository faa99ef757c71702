"""The labels a stored click carries, derived from the raw facts of the visit.

Pure functions (plus two bounded caches), run by the click writer off the
request path. The labels are what the analytics breakdowns show:

- device: one of DEVICES;
- browser, os: the ua-parser family names ("Other" when unknown);
- country: ISO 3166-1 alpha-2, or UNKNOWN_COUNTRY;
- referrer: the referring host, or DIRECT;
- campaign: the utm_source value, or NO_CAMPAIGN.
"""

from __future__ import annotations

import hmac
import re
from functools import lru_cache
from urllib.parse import urlsplit

import ua_parser

DEVICES = ("mobile", "tablet", "desktop", "other")
UNKNOWN_FAMILY = "Other"
UNKNOWN_COUNTRY = "Unknown"
DIRECT = "Direct"
NO_CAMPAIGN = "None"

USER_AGENT_CACHE_SIZE = 8192
IP_CACHE_SIZE = 65536
_COUNTRY_CODE = re.compile(r"[A-Z]{2}")
_NOT_A_COUNTRY = {"XX", "ZZ"}  # "unknown" markers some proxies send
_DESKTOP_OSES = {
    "Windows",
    "Mac OS X",
    "Linux",
    "Ubuntu",
    "Chrome OS",
    "ChromeOS",
    "Fedora",
    "Debian",
    "FreeBSD",
    "OpenBSD",
    "NetBSD",
    "Solaris",
    "Mint",
    "Arch Linux",
}
_MOBILE_OSES = {"iOS", "Windows Phone", "BlackBerry OS", "KaiOS", "Symbian OS", "Tizen"}


def device_class(user_agent: str, os_family: str, device_family: str) -> str:
    """mobile, tablet, desktop or other (bots, TVs, consoles and unknown agents)."""
    if device_family == "Spider":
        return "other"
    if device_family == "iPad" or "Tablet" in user_agent or "Kindle" in device_family:
        return "tablet"
    if os_family == "Android":
        # Android phones say "Mobile"; Android tablets do not.
        return "mobile" if "Mobile" in user_agent else "tablet"
    if os_family in _MOBILE_OSES or device_family in ("iPhone", "iPod"):
        return "mobile"
    if os_family in _DESKTOP_OSES:
        return "desktop"
    return "other"


@lru_cache(maxsize=USER_AGENT_CACHE_SIZE)
def user_agent_labels(user_agent: str) -> tuple[str, str, str]:
    """(device, browser, os) of a user agent; memoised because a few agents dominate traffic."""
    parsed = ua_parser.parse(user_agent)
    browser = parsed.user_agent.family if parsed.user_agent else UNKNOWN_FAMILY
    os_family = parsed.os.family if parsed.os else UNKNOWN_FAMILY
    device_family = parsed.device.family if parsed.device else UNKNOWN_FAMILY
    return device_class(user_agent, os_family, device_family), browser, os_family


@lru_cache(maxsize=USER_AGENT_CACHE_SIZE)
def referrer_host(referrer: str) -> str:
    try:
        host = urlsplit(referrer.strip()).hostname
    except ValueError:
        host = None
    return host or DIRECT


def campaign_label(utm_source: str) -> str:
    return utm_source or NO_CAMPAIGN


@lru_cache(maxsize=1)
def _geoip():
    from geoip2fast import GeoIP2Fast  # loads its tables (~0.2 s): only when first needed

    return GeoIP2Fast(geoip2fast_data_file="geoip2fast-ipv6.dat.gz")  # IPv4 and IPv6


def country_of(ip: str, trusted_hint: str) -> str:
    """The trusted proxy's country header when it is a country code, else an offline lookup."""
    hint = trusted_hint.strip().upper()
    if _COUNTRY_CODE.fullmatch(hint) and hint not in _NOT_A_COUNTRY:
        return hint
    return _country_of_ip(ip) if ip else UNKNOWN_COUNTRY


@lru_cache(maxsize=IP_CACHE_SIZE)
def _country_of_ip(ip: str) -> str:
    # Memoised: returning visitors are common, and a lookup is not free. The cache is
    # memory only, like the IP itself until its click is written.
    code = _geoip().lookup(ip).country_code
    return code if _COUNTRY_CODE.fullmatch(code or "") else UNKNOWN_COUNTRY


def visitor_hash(day_key: bytes, ip: str, user_agent: str) -> str:
    """Keyed hash of (IP, user agent): stable within a day, unlinkable once the key is gone."""
    return hmac.digest(day_key, f"{ip}\n{user_agent}".encode(), "sha256")[:16].hex()


def warm_up() -> None:
    """Load the user-agent and geolocation tables now (~0.5 s) rather than in the first
    batch, so clicks arriving just after start-up don't pile up behind the loading."""
    ua_parser.parse("Mozilla/5.0")
    _geoip()
