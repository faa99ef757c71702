"""The labels a stored click carries, derived from the raw facts of the visit.

Pure functions (plus bounded caches), run by the click writer off the
request path. The labels are what the analytics breakdowns show:

- device: one of DEVICES;
- browser, os: the ua-parser family names ("Other" when unknown);
- country: ISO 3166-1 alpha-2, or UNKNOWN_COUNTRY;
- referrer: the referring host (with the handle for a bio page of ours), or DIRECT;
- campaign: the utm_source value, or NO_CAMPAIGN.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Callable
from functools import lru_cache
from urllib.parse import urlsplit

import ua_parser

from shortlink.bio.validation import referrer_label
from shortlink.storage.labels import DIRECT, NO_CAMPAIGN, OTHER_DEVICE, UNKNOWN_COUNTRY, UNKNOWN_FAMILY
from shortlink.visits import matomo
from shortlink.visits.countries import CountryTable
from shortlink.visits.pattern_groups import PatternGroup

DEVICES = ("mobile", "tablet", "desktop", OTHER_DEVICE)

USER_AGENT_CACHE_SIZE = 8192
_COUNTRY_CODE = re.compile(r"[A-Z]{2}")
_NOT_A_COUNTRY = {"XX", "ZZ"}  # "unknown" markers some proxies send
_DESKTOP_OSES = {"Windows", "Mac OS X", "Mac OS", "Chrome OS", "ChromeOS", "FreeBSD", "OpenBSD", "NetBSD", "Solaris"}
_MOBILE_OSES = {"iOS", "Windows Phone", "BlackBerry OS", "KaiOS", "Symbian OS", "Bada", "BREW"}
_MOBILE_SYSTEMS = re.compile(r"Windows CE|IEMobile|Windows Phone")
# Computers whatever their system: Macs seen through CFNetwork (which ua-parser calls iOS),
# and systems ua-parser does not name.
_COMPUTERS = re.compile(
    r"Darwin/[\d.]+ \((?:x86_64|i386|Power)|\((?:MacBook|iMac|Macmini|MacPro|PowerMac|PowerBook)|"
    r"AmigaOS|Amiga-|BeOS|Haiku|MorphOS|OS/2|OpenVMS|CYGWIN|RISC OS|SunOS|IRIX|\bwin(?:7|8|10|11) x(?:64|86)"
)
# A model name that says so ("Galaxy Tab", "EZpad", "SurfTab") when the model is unknown.
_TABLET_NAME = re.compile(r"tab|pad", re.IGNORECASE)
# Televisions, set-top boxes and consoles, whatever system they run.
_TV_OR_CONSOLE = re.compile(
    r"Smart-?TV|SMART-TV|\bTV\b|HbbTV|Web0S|webOS.TV|NetCast|BRAVIA|AFT[A-Z]|CrKey|GoogleTV|"
    r"PlayStation|Xbox|Nintendo|SHIELD Android TV|Tizen.*TV",
    re.IGNORECASE,
)
# Matomo's device types for the models it knows, as the labels shown here.
_MATOMO_DEVICE_LABELS = {
    "desktop": "desktop",
    "tablet": "tablet",
    "smartphone": "mobile",
    "phablet": "mobile",
    "feature phone": "mobile",
    **dict.fromkeys(
        (
            "tv",
            "console",
            "car browser",
            "smart display",
            "smart speaker",
            "peripheral",
            "portable media player",
            "wearable",
            "camera",
        ),
        "other",
    ),
}
_MATOMO_MODELS = "regexes/upstream/device/mobiles.yml"
# "Android 14; SM-X710 Build/…" → "SM-X710"; "Android 10; K)" → "K".
_ANDROID_MODEL = re.compile(r"Android[ /][\d._]*; ?(?:[a-z]{2}[-_][a-z]{2}; ?)?([^;()]+?)(?: Build/|[;)])", re.I)


@lru_cache(maxsize=1)
def _android_models() -> tuple[tuple[str, PatternGroup], ...]:
    """(label, patterns) for every model Matomo's device-detector lists, desktops first, then
    for brands whose models it does not list: a listed model is surer than a brand's default."""
    brands = matomo.rules(_MATOMO_MODELS, dict)
    labels = ("desktop", "tablet", "other", "mobile")
    models: dict[str, list[str]] = {label: [] for label in labels}
    unlisted: dict[str, list[str]] = {label: [] for label in labels}
    for brand in brands.values():
        found = models if brand.get("models") else unlisted
        for model in brand.get("models") or [brand]:
            label = _MATOMO_DEVICE_LABELS.get(model.get("device", brand.get("device", "")))
            if label and model["regex"]:
                found[label].append(model["regex"])
    return tuple(
        (label, PatternGroup(patterns[label])) for patterns in (models, unlisted) for label in labels if patterns[label]
    )


def _android_device(user_agent: str) -> str:
    model = _ANDROID_MODEL.search(user_agent)
    name = model.group(1).strip() if model is not None else ""
    says_mobile = "Mobile" in user_agent
    models = _android_models() if name else ()
    phone = says_mobile and any(known.matches_at_start(name) for label, known in models if label == "mobile")
    for label, known in models:
        start = known.search_start(name)
        # Set-top boxes and TVs never say "Mobile", and their model names are short and loose;
        # a phone's whole name beats another kind's pattern for only its tail.
        if start is not None and not (says_mobile and (label == "other" or (phone and start > 0))):
            return label
    if _TABLET_NAME.search(name):
        return "tablet"
    # Android phones say "Mobile" and tablets do not; apps' own HTTP client (Dalvik)
    # says neither and runs mostly on phones.
    if says_mobile or user_agent.startswith("Dalvik/"):
        return "mobile"
    return "tablet"


def device_class(user_agent: str, os_family: str, device_family: str) -> str:
    """mobile, tablet, desktop or other (bots, TVs, consoles and unknown agents)."""
    if device_family == "Spider" or _TV_OR_CONSOLE.search(user_agent):
        return "other"
    if "CrOS" in user_agent or "Chromebook" in user_agent:
        return "desktop"  # Chromebooks, Android apps on them included
    if (
        device_family == "iPad"
        or "Kindle" in device_family
        or ("Tablet PC" not in user_agent and "Tablet" in user_agent)
    ):
        return "tablet"
    if os_family == "Android":
        return _android_device(user_agent)
    if _COMPUTERS.search(user_agent):
        return "desktop"
    if os_family in _MOBILE_OSES or device_family in ("iPhone", "iPod") or _MOBILE_SYSTEMS.search(user_agent):
        return "mobile"
    # Every Linux distribution and BSD; an iPad asking for the desktop site sends a Mac agent.
    if os_family in _DESKTOP_OSES or "X11" in user_agent or "Linux" in user_agent:
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


def referrer_host(referrer: str, is_ours: Callable[[str], bool] = lambda _host: False) -> str:
    """The referring host; for a bio page of ours, "<host>/@<handle>", so that clicks made
    through a bio page stand apart from other pages of the service. Only the parse is
    memoised: which hosts are ours changes when a custom domain is connected."""
    host, path = _host_and_path(referrer)
    if host and path.startswith("/@") and is_ours(host):
        return referrer_label(host, path) or host
    return host or DIRECT


@lru_cache(maxsize=USER_AGENT_CACHE_SIZE)
def _host_and_path(url: str) -> tuple[str | None, str]:
    try:
        parts = urlsplit(url.strip())
        return parts.hostname, parts.path
    except ValueError:
        return None, ""


def campaign_label(utm_source: str) -> str:
    return utm_source or NO_CAMPAIGN


def country_of(ip: str, trusted_hint: str, table: CountryTable) -> str:
    """The trusted proxy's country header when it is a country code, else an offline lookup
    (not memoised: a look-up in either table costs about what a cache hit would)."""
    hint = trusted_hint.strip().upper()
    if _COUNTRY_CODE.fullmatch(hint) and hint not in _NOT_A_COUNTRY:
        return hint
    code = table.country(ip) if ip else None
    return code if code and _COUNTRY_CODE.fullmatch(code) else UNKNOWN_COUNTRY


def visitor_hash(day_key: bytes, ip: str, user_agent: str) -> int:
    """Keyed hash of (IP, user agent), 64 bits as a signed integer (SQLite's): stable
    within a day, unlinkable once the key is gone."""
    return int.from_bytes(hmac.digest(day_key, f"{ip}\n{user_agent}".encode(), "sha256")[:8], "big", signed=True)


def warm_up() -> None:
    """Load the user-agent tables now (seconds of CPU: docs/performance.md) rather than in the
    first batch, so clicks arriving just after start-up don't pile up behind the loading."""
    ua_parser.parse("Mozilla/5.0")
    _android_models()
