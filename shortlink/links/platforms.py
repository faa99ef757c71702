"""The Platform of a link, detected once from its destination at creation."""
from __future__ import annotations

import enum
from collections.abc import Iterable
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


# Exact hosts (after lower-casing and dropping "www.") for each platform. Only a
# host equal to one of these, or a subdomain of the ones in _WITH_SUBDOMAINS,
# matches: "youtube.com.evil.io" ends in ".evil.io" and is OTHER.
_HOSTS: dict[str, Platform] = {
    "youtube.com": Platform.YOUTUBE, "youtu.be": Platform.YOUTUBE,
    "youtube-nocookie.com": Platform.YOUTUBE,
    "instagram.com": Platform.INSTAGRAM, "instagr.am": Platform.INSTAGRAM,
    "twitter.com": Platform.TWITTER, "x.com": Platform.TWITTER, "t.co": Platform.TWITTER,
    "facebook.com": Platform.FACEBOOK, "fb.com": Platform.FACEBOOK, "fb.watch": Platform.FACEBOOK,
    "fb.me": Platform.FACEBOOK,
    "linkedin.com": Platform.LINKEDIN, "lnkd.in": Platform.LINKEDIN,
    "reddit.com": Platform.REDDIT, "redd.it": Platform.REDDIT,
    "open.spotify.com": Platform.SPOTIFY, "spotify.link": Platform.SPOTIFY,
    "amzn.to": Platform.AMAZON, "amzn.eu": Platform.AMAZON, "a.co": Platform.AMAZON,
    "apps.apple.com": Platform.APPSTORE, "itunes.apple.com": Platform.APPSTORE,
    "play.google.com": Platform.PLAYSTORE,
}
# Platforms whose every subdomain is the same service (m.youtube.com, music.youtube.com,
# m.facebook.com, old.reddit.com, uk.linkedin.com, mobile.twitter.com, ...).
_WITH_SUBDOMAINS = ("youtube.com", "facebook.com", "instagram.com", "twitter.com", "x.com",
                    "linkedin.com", "reddit.com")
# amazon.<tld>: amazon.com, amazon.de, amazon.co.uk, amazon.com.br, ... but not amazon.evil.io.
_AMAZON_SUFFIXES = frozenset({
    "com", "ca", "com.mx", "com.br", "co.uk", "de", "fr", "it", "es", "nl", "se", "pl", "com.be",
    "ie", "com.tr", "ae", "sa", "eg", "in", "co.jp", "jp", "cn", "sg", "com.au", "co.za", "ng",
    "at", "ch", "dk", "fi", "no", "cz", "pt", "lu",
})


def _host_of(url: str) -> str:
    try:
        host = (urlsplit(url.strip()).hostname or "").rstrip(".").lower()
    except ValueError:
        return ""
    return host[4:] if host.startswith("www.") else host


def detect_platform(url: str, own_hosts: Iterable[str] = ()) -> Platform:
    """The platform of a destination URL, from its host alone."""
    host = _host_of(url)
    if not host:
        return Platform.OTHER
    own = {h.lower().rsplit(":", 1)[0] if h.count(":") == 1 else h.lower() for h in own_hosts}
    if host in own or f"www.{host}" in own:
        return Platform.SHORTLINK
    if host in _HOSTS:
        return _HOSTS[host]
    for base in _WITH_SUBDOMAINS:
        if host.endswith("." + base):
            return _HOSTS[base]
    if host.startswith("amazon.") and host[len("amazon."):] in _AMAZON_SUFFIXES:
        return Platform.AMAZON
    if host.startswith("smile.amazon.") and host[len("smile.amazon."):] in _AMAZON_SUFFIXES:
        return Platform.AMAZON
    return Platform.OTHER
