"""Which URL a phone visitor is sent to, and the app URLs offered on the way.

Table-driven: one AppRoute per platform with a native app says which web URLs
the app opens (and their canonical form), the Android package, and the iOS
custom-scheme URL when the deep-link reference agrees on one. Where the
reference is unsure (Facebook, LinkedIn, Reddit, Amazon and Instagram posts on
iOS) no scheme is guessed: iPhones get the https URL, which the app may claim
as a universal link. Every emitted URL has a whitelisted scheme and every plan
keeps an http(s) web fallback.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import SplitResult, quote, urlsplit, urlunsplit

import msgspec

from shortlink.links.platforms import Platform, detect_platform
from shortlink.visits.classify import Visitor

ESCAPE_MARKER = "iab"
# What may be emitted: web URLs, Android intents, the iOS app schemes of the table
# below and the Safari escape. Anything else falls back to a plain web redirect.
WEB_SCHEMES = frozenset({"http", "https"})
APP_SCHEMES = frozenset({"intent", "youtube", "instagram", "twitter", "spotify", "x-safari-https"})
_EMITTED_SCHEMES = WEB_SCHEMES | APP_SCHEMES

# Characters left as they are when re-encoding a path or a query (existing %XX escapes included).
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"
_QUERY_SAFE = _PATH_SAFE + "?"

# In-app browsers whose escape to the system browser the reference reports working.
# Snapchat, X and WeChat on iOS and TikTok/WeChat on Android have none that works.
_IOS_ESCAPES = frozenset({"instagram", "facebook", "messenger", "threads", "tiktok", "linkedin"})
_ANDROID_ESCAPES = frozenset({"instagram", "facebook", "messenger", "threads", "line"})
# x-safari-https:// stopped working in Instagram 424 (inapp-debugger #22); from then on
# Instagram's own instagram://extbrowser/?url= is the escape (reported working in 445).
INSTAGRAM_EXTBROWSER_FROM = 424


class Plan(msgspec.Struct, frozen=True):
    """A redirect, or one of the pages (ios, store, in_app) with the URLs it offers."""

    action: str  # redirect | ios | store | in_app | own_app
    location: str  # the redirect target, or the page's website ("Continue") link
    app_url: str | None = None  # the "Open in app" button (the App Store's on the store page)
    auto_url: str | None = None  # opened once by the page itself on load
    escape_url: str | None = None  # opens this short URL in the system browser
    copy_url: str | None = None  # the short URL to copy into the browser, where no escape opens it
    fallback: str | None = None  # where the page goes by itself when the app did not open


class AppRoute(msgspec.Struct, frozen=True):
    package: Callable[[str], str]  # host → Android package
    canonical: Callable[[SplitResult], SplitResult | None]  # None: not a URL the app opens
    ios: Callable[[SplitResult], str | None]  # canonical URL → iOS scheme URL


def _rehost(aliases: dict[str, str]) -> Callable[[SplitResult], SplitResult]:
    """Canonical form that maps mobile/bare hosts onto the one the app claims."""

    def canonical(parts: SplitResult) -> SplitResult:
        host = parts.hostname or ""
        return parts._replace(netloc=aliases.get(host, host))

    return canonical


def _package(name: str) -> Callable[[str], str]:
    return lambda host: name


def _no_scheme(parts: SplitResult) -> None:
    return None


# --- YouTube: youtu.be and embeds become /watch?v=; the iOS app takes a scheme swap.
_YOUTUBE_HOSTS = frozenset(
    {"youtube.com", "www.youtube.com", "m.youtube.com", "youtube-nocookie.com", "www.youtube-nocookie.com"}
)
_VIDEO_ID = re.compile(r"[\w-]{11}")


def _youtube_canonical(parts: SplitResult) -> SplitResult | None:
    host, path, query = parts.hostname or "", parts.path, parts.query
    embed = re.fullmatch(r"/(?:embed|v)/([\w-]{11})/?", path)
    if host == "youtu.be" and _VIDEO_ID.fullmatch(path.strip("/")):
        video = path.strip("/")
    elif host in _YOUTUBE_HOSTS and embed:
        video = embed.group(1)
    elif host in _YOUTUBE_HOSTS:
        return parts._replace(scheme="https", netloc="www.youtube.com")
    else:
        return None  # music.youtube.com and other hosts are another app: plain web
    query = f"v={video}&{query}" if query else f"v={video}"
    return SplitResult("https", "www.youtube.com", "/watch", query, "")


def _youtube_ios(parts: SplitResult) -> str:
    return urlunsplit(parts._replace(scheme="youtube", fragment=""))


# --- Instagram: only profiles have a scheme every source agrees on.
_INSTAGRAM_RESERVED = frozenset(
    {
        "explore",
        "accounts",
        "direct",
        "about",
        "p",
        "reel",
        "reels",
        "tv",
        "stories",
        "developer",
        "legal",
        "web",
        "challenge",
    }
)


def _instagram_ios(parts: SplitResult) -> str | None:
    match = re.fullmatch(r"/([\w.]{1,30})/?", parts.path)
    if match is None or match.group(1).lower() in _INSTAGRAM_RESERVED:
        return None
    return "instagram://user?username=" + quote(match.group(1), safe="")


# --- X/Twitter: statuses and profiles.
_TWITTER_RESERVED = frozenset(
    {
        "i",
        "home",
        "explore",
        "search",
        "settings",
        "intent",
        "hashtag",
        "messages",
        "notifications",
        "compose",
        "login",
        "share",
        "tos",
        "privacy",
    }
)


def _twitter_ios(parts: SplitResult) -> str | None:
    status = re.fullmatch(r"/(?:\w{1,15}/status(?:es)?|i/(?:web/)?status)/(\d+)(?:/.*)?", parts.path)
    if status:
        return "twitter://status?id=" + status.group(1)
    profile = re.fullmatch(r"/(\w{1,15})/?", parts.path)
    if profile and profile.group(1).lower() not in _TWITTER_RESERVED:
        return "twitter://user?screen_name=" + profile.group(1)
    return None


# --- Spotify: the official spotify:TYPE:ID URI.
def _spotify_ios(parts: SplitResult) -> str | None:
    match = re.fullmatch(
        r"/(?:intl-[\w-]+/)?(track|album|playlist|artist|episode|show|audiobook)"
        r"/([A-Za-z0-9]{22})/?",
        parts.path,
    )
    return f"spotify:{match.group(1)}:{match.group(2)}" if match else None


def _amazon_package(host: str) -> str:
    return "in.amazon.mShop.android.shopping" if host.endswith("amazon.in") else "com.amazon.mShop.android.shopping"


APPS: dict[Platform, AppRoute] = {
    Platform.YOUTUBE: AppRoute(_package("com.google.android.youtube"), _youtube_canonical, _youtube_ios),
    Platform.INSTAGRAM: AppRoute(
        _package("com.instagram.android"),
        _rehost({"instagram.com": "www.instagram.com", "m.instagram.com": "www.instagram.com"}),
        _instagram_ios,
    ),
    Platform.TWITTER: AppRoute(
        _package("com.twitter.android"),
        _rehost(
            {
                "www.twitter.com": "twitter.com",
                "mobile.twitter.com": "twitter.com",
                "www.x.com": "x.com",
                "mobile.x.com": "x.com",
            }
        ),
        _twitter_ios,
    ),
    Platform.FACEBOOK: AppRoute(
        _package("com.facebook.katana"),
        _rehost(
            dict.fromkeys(
                ("facebook.com", "m.facebook.com", "web.facebook.com", "mbasic.facebook.com", "touch.facebook.com"),
                "www.facebook.com",
            )
        ),
        _no_scheme,
    ),
    Platform.LINKEDIN: AppRoute(
        _package("com.linkedin.android"),
        _rehost({"linkedin.com": "www.linkedin.com", "m.linkedin.com": "www.linkedin.com"}),
        _no_scheme,
    ),
    Platform.REDDIT: AppRoute(
        _package("com.reddit.frontpage"),
        _rehost(
            dict.fromkeys(
                ("reddit.com", "old.reddit.com", "new.reddit.com", "np.reddit.com", "m.reddit.com"), "www.reddit.com"
            )
        ),
        _no_scheme,
    ),
    Platform.SPOTIFY: AppRoute(_package("com.spotify.music"), _rehost({}), _spotify_ios),
    Platform.AMAZON: AppRoute(_amazon_package, _rehost({}), _no_scheme),
}
# Links whose per-OS URLs are where phones go (store links and unknown sites).
PHONE_DESTINATION_PLATFORMS = frozenset({Platform.APPSTORE, Platform.PLAYSTORE, Platform.OTHER})


# Characters a URI may not hold as they are: non-ASCII (IRIs are valid destinations),
# controls, space and the few ASCII ones RFC 3986 excludes.
_NEEDS_ENCODING = re.compile(r'[^\x21-\x7e]|["<>\\^`{|}]')


def web_uri(url: str) -> str:
    """The ASCII URI form of an http(s) URL: IDNA host, everything else percent-encoded.

    A URL that is already a URI is returned unchanged (the common, fast case)."""
    if not _NEEDS_ENCODING.search(url):
        return url
    parts = urlsplit(url)
    netloc = parts.netloc
    if not netloc.isascii():
        userinfo, at, host_port = netloc.rpartition("@")
        host, colon, port = host_port.partition(":")
        netloc = quote(userinfo, safe="%:!$&'()*+,;=-._~") + at + host.encode("idna").decode() + colon + port
    return urlunsplit(
        (
            parts.scheme,
            netloc,
            quote(parts.path, safe=_PATH_SAFE),
            quote(parts.query, safe=_QUERY_SAFE),
            quote(parts.fragment, safe=_QUERY_SAFE),
        )
    )


def _encoded_target(parts: SplitResult) -> str:
    """host[:port]/path?query of a URL, percent-encoded, without user info or fragment."""
    host = (parts.hostname or "").lower()
    if parts.port is not None:
        host += f":{parts.port}"
    target = host + quote(parts.path or "/", safe=_PATH_SAFE)
    return target + "?" + quote(parts.query, safe=_QUERY_SAFE) if parts.query else target


def android_intent(url: str, package: str | None = None, fallback: str | None = None) -> str:
    """An intent:// URL opening `url` (in `package` when given), with a browser fallback."""
    parts = urlsplit(url)
    extras = f"scheme={parts.scheme};"
    if package:
        extras += f"package={package};"
    if fallback:
        extras += f"S.browser_fallback_url={quote(fallback, safe='')};"
    return f"intent://{_encoded_target(parts)}#Intent;{extras}end"


# The install referrer's key under which an own app reads its deferred-link token (applinks.deferred).
REFERRER_KEY = "shortlink_token"


def play_store_url(package: str, token: str | None) -> str:
    """The Play Store page of an own app; with a token, the install referrer carries it."""
    url = f"https://play.google.com/store/apps/details?id={quote(package, safe='')}"
    return f"{url}&referrer={quote(f'{REFERRER_KEY}={token}', safe='')}" if token else url


def app_store_url(app_store_id: str) -> str:
    return f"https://apps.apple.com/app/id{app_store_id}"


def with_escape_marker(short_url: str) -> str:
    """The short URL with the loop-breaking marker set (once), percent-encoded.

    Its query is the request's raw query (bytes as latin-1 text, as ASGI gives them):
    whatever a client sent unencoded (`|`, quotes, raw bytes) is encoded here."""
    parts = urlsplit(short_url)
    kept = [segment for segment in parts.query.split("&") if segment and segment.split("=", 1)[0] != ESCAPE_MARKER]
    query = quote("&".join(kept), safe=_QUERY_SAFE, encoding="latin-1")
    return urlunsplit(
        parts._replace(
            path=quote(parts.path, safe=_PATH_SAFE),
            query=f"{query}&{ESCAPE_MARKER}=1" if query else f"{ESCAPE_MARKER}=1",
        )
    )


def _escape_url(visitor: Visitor, short_url: str) -> str | None:
    marked = with_escape_marker(short_url)
    if visitor.kind == "ios":
        if visitor.in_app == "instagram" and visitor.app_version >= INSTAGRAM_EXTBROWSER_FROM:
            return "instagram://extbrowser/?url=" + quote(marked, safe="")
        if visitor.in_app in _IOS_ESCAPES and marked.startswith("https://"):
            return "x-safari-" + marked
    if visitor.kind == "android" and visitor.in_app in _ANDROID_ESCAPES:
        return android_intent(marked)
    return None


def _scheme(url: str) -> str:
    return url.split(":", 1)[0].lower()


def _is_web(url: str | None) -> bool:
    return url is not None and _scheme(url) in WEB_SCHEMES


def _allowed(plan: Plan) -> bool:
    if not _is_web(plan.location) and not (plan.action == "redirect" and _scheme(plan.location) == "intent"):
        return False
    if plan.fallback is not None and not _is_web(plan.fallback):
        return False
    if plan.copy_url is not None and not _is_web(plan.copy_url):
        return False
    return all(
        url is None or _scheme(url) in _EMITTED_SCHEMES for url in (plan.app_url, plan.auto_url, plan.escape_url)
    )


def _app_plan(
    visitor: Visitor,
    app: AppRoute,
    canonical: SplitResult,
    web_url: str,
    fallback: str,
    escape_url: str | None,
    copy_url: str | None = None,
) -> Plan:
    """A link the platform's app opens; `fallback` is where to go when it is not installed."""
    if visitor.kind == "android":
        intent = android_intent(urlunsplit(canonical), app.package(canonical.hostname or ""), fallback)
        if visitor.in_app:
            # Meta's webviews ignore the intent's fallback when the app is missing ("page
            # can't be loaded"): the page goes there itself unless the app took over.
            return Plan("in_app", web_url, intent, escape_url=escape_url, fallback=fallback)
        # Chrome hands a redirected intent to the app or follows the fallback; Firefox
        # always takes the fallback and Samsung Internet is untested: plain https there.
        return Plan("redirect", intent if visitor.browser == "chrome" else web_url)
    scheme_url = app.ios(canonical)
    if visitor.in_app:
        if scheme_url is None and escape_url is None:
            return Plan("redirect", web_url)
        return Plan("in_app", web_url, scheme_url, escape_url=escape_url, copy_url=copy_url)
    if scheme_url is None:
        return Plan("redirect", web_url)
    # The button is the https universal link (a cross-domain tap opens the app most
    # reliably); the custom scheme is tried once on load.
    universal_link = urlunsplit(canonical._replace(scheme="https"))
    return Plan("ios", web_url, universal_link, auto_url=scheme_url, fallback=fallback)


def _web_plan(visitor: Visitor, destination: str, web_url: str, escape_url: str | None) -> Plan:
    """A destination no app of the table opens: a website or a store page."""
    if escape_url is not None:
        # No app to open, but the system browser (logins, saved passwords) still helps.
        return Plan("in_app", destination, escape_url=escape_url)
    if visitor.kind == "ios" and detect_platform(destination) is Platform.APPSTORE:
        # Redirected straight to the store, Safari asks "Open in App Store?" and Cancel
        # leaves a blank page: a page that opens the store once and keeps a button.
        return Plan("store", web_url, destination, auto_url=destination)
    return Plan("redirect", destination)


def plan_visit(
    visitor: Visitor,
    platform: Platform,
    web_url: str,
    ios_url: str | None,
    android_url: str | None,
    short_url: str,
    escaped: bool = False,
) -> Plan:
    """Where this visitor goes for a link (utm parameters already forwarded onto the URLs).

    Bots and desktops always get the web URL. On phones, iosUrl/androidUrl are where
    store and OTHER links go, and where app links go when the app is not installed.
    `escaped` means the visitor came back through our "Open in browser" link, which is
    then never offered again. `short_url` is only read for in-app visitors.
    """
    web_url = web_uri(web_url)
    web_plan = Plan("redirect", web_url)
    if visitor.is_bot or visitor.kind not in ("ios", "android") or platform is Platform.SHORTLINK:
        # A link to one of our own short URLs: the inner link decides for itself.
        return web_plan
    per_os_url = ios_url if visitor.kind == "ios" else android_url
    phone_url = web_uri(per_os_url) if per_os_url is not None and _is_web(per_os_url) else None
    escape_url = _escape_url(visitor, short_url) if visitor.in_app and not escaped else None
    # On a plain-http short host iOS has no escape (x-safari- needs https): the page that
    # offers the app offers the link to copy into the browser instead.
    copy_url = (
        web_uri(short_url)
        if escape_url is None
        and visitor.kind == "ios"
        and visitor.in_app
        and not escaped
        and _scheme(short_url) == "http"
        else None
    )
    app = APPS.get(platform)
    canonical = app.canonical(urlsplit(web_url)) if app is not None else None
    if app is not None and canonical is not None:
        plan = _app_plan(visitor, app, canonical, web_url, phone_url or web_url, escape_url, copy_url)
    else:
        destination = phone_url if phone_url and platform in PHONE_DESTINATION_PLATFORMS else web_url
        plan = _web_plan(visitor, destination, web_url, escape_url)
    return plan if _allowed(plan) else web_plan
