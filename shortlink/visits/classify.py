"""Who is visiting a short URL, decided from the request headers alone.

One pure function, memoised because it runs on every redirect. The order
matters (see the deep-link reference): link-preview fetchers first (their
agents contain words like "facebook" and "WhatsApp"), then in-app browsers
(crawler lists name the WhatsApp in-app browser), then published crawler
rules (visits/automated.py), then the operating system and the browser family.
"""

from __future__ import annotations

import re
from functools import lru_cache

import msgspec

from shortlink.in_app_browsers import IN_APP_TOKENS
from shortlink.visits.automated import is_automated

# Link-preview fetchers and other agents that never are a person, checked before
# anything else. Maintained by hand: add a token when a new previewer shows up.
PREVIEW_AGENTS = (
    "facebookexternalhit",
    "facebookcatalog",
    "meta-externalagent",
    "meta-externalfetcher",
    "Facebot",
    "Twitterbot",
    "Slackbot",
    "Slack-ImgProxy",
    "Discordbot",
    "^WhatsApp/",  # the preview fetcher ("WhatsApp/2.23.20.0 A"); not the in-app browser
    "TelegramBot",
    "LinkedInBot",
    "Applebot",
    "iframely",
    "Embedly",
    "SkypeUriPreview",
    "Pinterestbot",
    "redditbot",
    "Mastodon/",
    "Pleroma",
    "Akkoma",
    "Google-PageRenderer",
    "vkShare",
    "Bluesky Cardyb",
    "Snap URL Preview Service",
    "KakaoTalk-Scrap",
    "Yahoo Link Preview",
    "Discourse Forum Onebox",
    "MicrosoftPreview",
    "HeadlessChrome",
    "Google-InspectionTool",
    "googlemessages",  # Google Messages' link previewer ("… Safari/537.36 googlemessages/15.1")
    "thirdLandingPageFeInfra",  # TikTok's link preloader, otherwise an ordinary Android agent
    r"^node\b",  # Node's built-in fetch ("node"); other clients are in the crawler lists
)
# Matched lowercased against the lowercased agent: with re.IGNORECASE the search cost several
# times as much, on every new agent (docs/bots.md). No token may hold an escape whose meaning
# lowercasing changes (\S, \W, \D, \B).
_PREVIEW = re.compile("|".join(PREVIEW_AGENTS).lower())

_IN_APP = tuple((name, re.compile(token)) for name, token in IN_APP_TOKENS)

_OS = (
    ("iOS", re.compile(r"iPhone|iPod|iPad")),
    ("Android", re.compile(r"Android")),
    ("Windows", re.compile(r"Windows")),
    ("ChromeOS", re.compile(r"CrOS")),
    ("macOS", re.compile(r"Macintosh|Mac OS X")),  # iPadOS "request desktop site" lands here
    ("Linux", re.compile(r"Linux|X11")),
    # The Facebook and Google apps' own agents may name no platform: FB4A is Facebook for
    # Android, FBIOS for iOS, and only the Android Google app writes "GoogleApp/" (iOS: "GSA/").
    # Last, so that an agent naming its platform pays nothing for them.
    ("Android", re.compile(r"FB4A|GoogleApp/")),
    ("iOS", re.compile(r"FBIOS")),
)
_BROWSERS = (
    ("samsung", re.compile(r"SamsungBrowser/")),
    ("firefox", re.compile(r"Firefox/|FxiOS/")),
    ("edge", re.compile(r"Edg/|EdgA/|EdgiOS/|Edge/")),
    ("opera", re.compile(r"OPR/|OPT/|OPiOS/|Opera")),
    # Chromium-based browsers and WebViews that do not handle intents like Chrome.
    (
        "other",
        re.compile(
            r"; wv\)|Version/4\.0 Chrome/|UCBrowser|MiuiBrowser|HuaweiBrowser|"
            r"YaBrowser|Puffin|HeyTapBrowser|VivoBrowser|DuckDuckGo/"
        ),
    ),
    ("chrome", re.compile(r"Chrome/|CriOS/|Chromium/")),
    ("safari", re.compile(r"Safari/")),
)
# In-app browsers whose agent may be the app's own and nothing else, no engine named:
# "[FBAN/FB4A;FBAV/…;]", "GoogleApp/14.35.18.28.arm64". There the app's token is what shows a
# person's browser (docs/bots.md); other apps' bare agents are their HTTP clients.
_APPS_WITHOUT_ENGINE = frozenset({"facebook", "google"})
# The browser families the Android rules tell apart.
_ANDROID_BROWSERS = frozenset({"chrome", "firefox", "samsung"})


class Visitor(msgspec.Struct, frozen=True):
    kind: str = "desktop"  # bot | desktop | ios | android
    os: str = "other"  # iOS | Android | Windows | macOS | ChromeOS | Linux | other
    browser: str = "other"  # chrome | firefox | samsung | safari | edge | opera | other
    in_app: str | None = None  # instagram, facebook, messenger, threads, tiktok, ...
    app_version: int = 0  # the in-app browser's major version where it matters, else 0
    is_bot: bool = False


def _client_hint(value: str) -> str:
    return value.strip().strip('"').lower()


def _os_of(user_agent: str, ch_platform: str, ch_mobile: str) -> str:
    hinted = _client_hint(ch_platform)
    # Chromium sends these hints even when its user agent is reduced or "desktop site".
    if hinted == "android":
        return "Android"
    if hinted == "ios":
        return "iOS"
    os = next((name for name, pattern in _OS if pattern.search(user_agent)), "other")
    if os == "Linux" and not hinted and ch_mobile.strip() == "?1":
        return "Android"
    return os


def _browser_of(user_agent: str, os: str) -> str:
    browser = next((name for name, pattern in _BROWSERS if pattern.search(user_agent)), "other")
    if os == "Android" and browser not in _ANDROID_BROWSERS:
        return "other"
    return browser


def _kind_of(os: str) -> str:
    return {"iOS": "ios", "Android": "android"}.get(os, "desktop")


def _in_app_of(user_agent: str, os: str) -> tuple[str, re.Match[str]] | None:
    if os not in ("iOS", "Android"):
        return None
    for name, pattern in _IN_APP:
        match = pattern.search(user_agent)
        if match is not None:
            return name, match
    return None


@lru_cache(maxsize=4096)
def classify(user_agent: str, ch_platform: str = "", ch_mobile: str = "") -> Visitor:
    """The visitor class of a request. An empty user agent counts as a bot (a script)."""
    if not user_agent.strip() or _PREVIEW.search(user_agent.lower()):
        return Visitor(kind="bot", is_bot=True)
    os = _os_of(user_agent, ch_platform, ch_mobile)
    browser = _browser_of(user_agent, os)
    in_app = _in_app_of(user_agent, os)
    # An app's own token is no sign of a bot (crawler lists name "WhatsApp" and "MetaIAB"),
    # but a crawler's name elsewhere in an in-app agent still is.
    agent = user_agent if in_app is None else user_agent[: in_app[1].start()] + user_agent[in_app[1].end() :]
    if is_automated(agent, app_shaped=in_app is not None and in_app[0] in _APPS_WITHOUT_ENGINE):
        return Visitor(kind="bot", is_bot=True)
    if in_app is None:
        return Visitor(kind=_kind_of(os), os=os, browser=browser)
    name, match = in_app
    version = match.groupdict().get("version")
    return Visitor(kind=_kind_of(os), os=os, browser=browser, in_app=name, app_version=int(version) if version else 0)
