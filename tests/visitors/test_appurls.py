"""The app-URL builder and the visit plan: every platform × visitor class."""

from __future__ import annotations

from urllib.parse import quote, unquote, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shortlink.application.hosts import Hosts
from shortlink.links.platforms import Platform, detect_platform
from shortlink.visits.appurls import (
    APP_SCHEMES,
    Plan,
    android_intent,
    plan_visit,
    web_uri,
    with_escape_marker,
)
from shortlink.visits.classify import Visitor
from shortlink.visits.utm import forward_utm
from tests.support.visitors import DESKTOP, make_link

SHO_RT = Hosts("", ["sho.rt"]).is_ours

SHORT = "https://sho.rt/l/abc"
BOT = Visitor(kind="bot", is_bot=True)
DESKTOP_VISITOR = Visitor("desktop", "Windows", "chrome")
IOS = Visitor("ios", "iOS", "safari")
IOS_CHROME = Visitor("ios", "iOS", "chrome")
ANDROID_CHROME = Visitor("android", "Android", "chrome")
ANDROID_FIREFOX = Visitor("android", "Android", "firefox")
ANDROID_SAMSUNG = Visitor("android", "Android", "samsung")
ANDROID_OTHER = Visitor("android", "Android", "other")
IOS_INSTAGRAM = Visitor("ios", "iOS", "other", in_app="instagram")
IOS_SNAPCHAT = Visitor("ios", "iOS", "safari", in_app="snapchat")
ANDROID_FACEBOOK = Visitor("android", "Android", "other", in_app="facebook")
ANDROID_WECHAT = Visitor("android", "Android", "other", in_app="wechat")

# (destination, detected platform, iPhone: (scheme tried on load, https "Open in app" button),
#  or None for a plain redirect to the web URL, or STORE for the store page; Android Chrome redirect)
STORE = "store"
BUILDER = [
    (
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
        Platform.YOUTUBE,
        ("youtube://www.youtube.com/watch?v=dQw4w9WgXcQ", "https://www.youtube.com/watch?v=dQw4w9WgXcQ"),
        "intent://www.youtube.com/watch?v=dQw4w9WgXcQ#Intent;scheme=https;package=com.google.android.youtube;S.browser_fallback_url=https%3A%2F%2Fwww.youtube.com%2Fwatch%3Fv%3DdQw4w9WgXcQ;end",
    ),
    (
        "https://youtu.be/dQw4w9WgXcQ?t=42",
        Platform.YOUTUBE,
        ("youtube://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42", "https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42"),
        "intent://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42#Intent;scheme=https;package=com.google.android.youtube;S.browser_fallback_url=https%3A%2F%2Fyoutu.be%2FdQw4w9WgXcQ%3Ft%3D42;end",
    ),
    (
        "https://m.youtube.com/shorts/abcdefghijk",
        Platform.YOUTUBE,
        ("youtube://www.youtube.com/shorts/abcdefghijk", "https://www.youtube.com/shorts/abcdefghijk"),
        "intent://www.youtube.com/shorts/abcdefghijk#Intent;scheme=https;package=com.google.android.youtube;S.browser_fallback_url=https%3A%2F%2Fm.youtube.com%2Fshorts%2Fabcdefghijk;end",
    ),
    (
        "https://www.youtube.com/embed/dQw4w9WgXcQ?start=10",
        Platform.YOUTUBE,
        (
            "youtube://www.youtube.com/watch?v=dQw4w9WgXcQ&start=10",
            "https://www.youtube.com/watch?v=dQw4w9WgXcQ&start=10",
        ),
        "intent://www.youtube.com/watch?v=dQw4w9WgXcQ&start=10#Intent;scheme=https;package=com.google.android.youtube;S.browser_fallback_url=https%3A%2F%2Fwww.youtube.com%2Fembed%2FdQw4w9WgXcQ%3Fstart%3D10;end",
    ),
    (
        "https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ",
        Platform.YOUTUBE,
        ("youtube://www.youtube.com/watch?v=dQw4w9WgXcQ", "https://www.youtube.com/watch?v=dQw4w9WgXcQ"),
        "intent://www.youtube.com/watch?v=dQw4w9WgXcQ#Intent;scheme=https;package=com.google.android.youtube;S.browser_fallback_url=https%3A%2F%2Fwww.youtube-nocookie.com%2Fembed%2FdQw4w9WgXcQ;end",
    ),
    (
        "https://www.youtube.com/@MrBeast",
        Platform.YOUTUBE,
        ("youtube://www.youtube.com/@MrBeast", "https://www.youtube.com/@MrBeast"),
        "intent://www.youtube.com/@MrBeast#Intent;scheme=https;package=com.google.android.youtube;S.browser_fallback_url=https%3A%2F%2Fwww.youtube.com%2F%40MrBeast;end",
    ),
    (
        "https://youtube.com/playlist?list=PL590L5WQmH8fJ54F369BLDSqIwcs-TCfs",
        Platform.YOUTUBE,
        (
            "youtube://www.youtube.com/playlist?list=PL590L5WQmH8fJ54F369BLDSqIwcs-TCfs",
            "https://www.youtube.com/playlist?list=PL590L5WQmH8fJ54F369BLDSqIwcs-TCfs",
        ),
        "intent://www.youtube.com/playlist?list=PL590L5WQmH8fJ54F369BLDSqIwcs-TCfs#Intent;scheme=https;package=com.google.android.youtube;S.browser_fallback_url=https%3A%2F%2Fyoutube.com%2Fplaylist%3Flist%3DPL590L5WQmH8fJ54F369BLDSqIwcs-TCfs;end",
    ),
    # YouTube Music is another app (its scheme is unverified): the web for everyone.
    (
        "https://music.youtube.com/watch?v=dQw4w9WgXcQ",
        Platform.YOUTUBE,
        None,
        "https://music.youtube.com/watch?v=dQw4w9WgXcQ",
    ),
    (
        "https://instagram.com/nasa/",
        Platform.INSTAGRAM,
        ("instagram://user?username=nasa", "https://www.instagram.com/nasa/"),
        "intent://www.instagram.com/nasa/#Intent;scheme=https;package=com.instagram.android;S.browser_fallback_url=https%3A%2F%2Finstagram.com%2Fnasa%2F;end",
    ),
    (
        "https://www.instagram.com/natgeo",
        Platform.INSTAGRAM,
        ("instagram://user?username=natgeo", "https://www.instagram.com/natgeo"),
        "intent://www.instagram.com/natgeo#Intent;scheme=https;package=com.instagram.android;S.browser_fallback_url=https%3A%2F%2Fwww.instagram.com%2Fnatgeo;end",
    ),
    # Posts need a numeric id for the scheme: iPhones get the universal link.
    (
        "https://www.instagram.com/p/C1a2b3c4d5e/",
        Platform.INSTAGRAM,
        None,
        "intent://www.instagram.com/p/C1a2b3c4d5e/#Intent;scheme=https;package=com.instagram.android;S.browser_fallback_url=https%3A%2F%2Fwww.instagram.com%2Fp%2FC1a2b3c4d5e%2F;end",
    ),
    (
        "https://www.instagram.com/reel/C9xYz12AbCd/?igsh=abc",
        Platform.INSTAGRAM,
        None,
        "intent://www.instagram.com/reel/C9xYz12AbCd/?igsh=abc#Intent;scheme=https;package=com.instagram.android;S.browser_fallback_url=https%3A%2F%2Fwww.instagram.com%2Freel%2FC9xYz12AbCd%2F%3Figsh%3Dabc;end",
    ),
    (
        "https://www.instagram.com/explore/tags/cats/",
        Platform.INSTAGRAM,
        None,
        "intent://www.instagram.com/explore/tags/cats/#Intent;scheme=https;package=com.instagram.android;S.browser_fallback_url=https%3A%2F%2Fwww.instagram.com%2Fexplore%2Ftags%2Fcats%2F;end",
    ),
    (
        "https://x.com/jack/status/20",
        Platform.TWITTER,
        ("twitter://status?id=20", "https://x.com/jack/status/20"),
        "intent://x.com/jack/status/20#Intent;scheme=https;package=com.twitter.android;S.browser_fallback_url=https%3A%2F%2Fx.com%2Fjack%2Fstatus%2F20;end",
    ),
    (
        "https://twitter.com/jack/statuses/20?s=21",
        Platform.TWITTER,
        ("twitter://status?id=20", "https://twitter.com/jack/statuses/20?s=21"),
        "intent://twitter.com/jack/statuses/20?s=21#Intent;scheme=https;package=com.twitter.android;S.browser_fallback_url=https%3A%2F%2Ftwitter.com%2Fjack%2Fstatuses%2F20%3Fs%3D21;end",
    ),
    (
        "https://x.com/i/web/status/1780000000000000000",
        Platform.TWITTER,
        ("twitter://status?id=1780000000000000000", "https://x.com/i/web/status/1780000000000000000"),
        "intent://x.com/i/web/status/1780000000000000000#Intent;scheme=https;package=com.twitter.android;S.browser_fallback_url=https%3A%2F%2Fx.com%2Fi%2Fweb%2Fstatus%2F1780000000000000000;end",
    ),
    (
        "https://mobile.twitter.com/NASA",
        Platform.TWITTER,
        ("twitter://user?screen_name=NASA", "https://twitter.com/NASA"),
        "intent://twitter.com/NASA#Intent;scheme=https;package=com.twitter.android;S.browser_fallback_url=https%3A%2F%2Fmobile.twitter.com%2FNASA;end",
    ),
    (
        "https://x.com/home",
        Platform.TWITTER,
        None,
        "intent://x.com/home#Intent;scheme=https;package=com.twitter.android;S.browser_fallback_url=https%3A%2F%2Fx.com%2Fhome;end",
    ),
    (
        "https://x.com/search?q=%23python&src=typed",
        Platform.TWITTER,
        None,
        "intent://x.com/search?q=%23python&src=typed#Intent;scheme=https;package=com.twitter.android;S.browser_fallback_url=https%3A%2F%2Fx.com%2Fsearch%3Fq%3D%2523python%26src%3Dtyped;end",
    ),
    (
        "https://m.facebook.com/zuck",
        Platform.FACEBOOK,
        None,
        "intent://www.facebook.com/zuck#Intent;scheme=https;package=com.facebook.katana;S.browser_fallback_url=https%3A%2F%2Fm.facebook.com%2Fzuck;end",
    ),
    (
        "https://www.facebook.com/watch/?v=10153231379946729",
        Platform.FACEBOOK,
        None,
        "intent://www.facebook.com/watch/?v=10153231379946729#Intent;scheme=https;package=com.facebook.katana;S.browser_fallback_url=https%3A%2F%2Fwww.facebook.com%2Fwatch%2F%3Fv%3D10153231379946729;end",
    ),
    (
        "https://fb.watch/abcDEF123/",
        Platform.FACEBOOK,
        None,
        "intent://fb.watch/abcDEF123/#Intent;scheme=https;package=com.facebook.katana;S.browser_fallback_url=https%3A%2F%2Ffb.watch%2FabcDEF123%2F;end",
    ),
    (
        "https://www.linkedin.com/in/williamhgates/",
        Platform.LINKEDIN,
        None,
        "intent://www.linkedin.com/in/williamhgates/#Intent;scheme=https;package=com.linkedin.android;S.browser_fallback_url=https%3A%2F%2Fwww.linkedin.com%2Fin%2Fwilliamhgates%2F;end",
    ),
    (
        "https://uk.linkedin.com/company/microsoft",
        Platform.LINKEDIN,
        None,
        "intent://uk.linkedin.com/company/microsoft#Intent;scheme=https;package=com.linkedin.android;S.browser_fallback_url=https%3A%2F%2Fuk.linkedin.com%2Fcompany%2Fmicrosoft;end",
    ),
    (
        "https://lnkd.in/abc123",
        Platform.LINKEDIN,
        None,
        "intent://lnkd.in/abc123#Intent;scheme=https;package=com.linkedin.android;S.browser_fallback_url=https%3A%2F%2Flnkd.in%2Fabc123;end",
    ),
    (
        "https://old.reddit.com/r/python/comments/abc123/hello_world/",
        Platform.REDDIT,
        None,
        "intent://www.reddit.com/r/python/comments/abc123/hello_world/#Intent;scheme=https;package=com.reddit.frontpage;S.browser_fallback_url=https%3A%2F%2Fold.reddit.com%2Fr%2Fpython%2Fcomments%2Fabc123%2Fhello_world%2F;end",
    ),
    (
        "https://www.reddit.com/r/python/",
        Platform.REDDIT,
        None,
        "intent://www.reddit.com/r/python/#Intent;scheme=https;package=com.reddit.frontpage;S.browser_fallback_url=https%3A%2F%2Fwww.reddit.com%2Fr%2Fpython%2F;end",
    ),
    (
        "https://redd.it/abc123",
        Platform.REDDIT,
        None,
        "intent://redd.it/abc123#Intent;scheme=https;package=com.reddit.frontpage;S.browser_fallback_url=https%3A%2F%2Fredd.it%2Fabc123;end",
    ),
    (
        "https://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC",
        Platform.SPOTIFY,
        ("spotify:track:4uLU6hMCjMI75M1A2tKUQC", "https://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC"),
        "intent://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC#Intent;scheme=https;package=com.spotify.music;S.browser_fallback_url=https%3A%2F%2Fopen.spotify.com%2Ftrack%2F4uLU6hMCjMI75M1A2tKUQC;end",
    ),
    (
        "https://open.spotify.com/intl-de/album/1DFixLWuPkv3KT3TnV35m3?si=x",
        Platform.SPOTIFY,
        ("spotify:album:1DFixLWuPkv3KT3TnV35m3", "https://open.spotify.com/intl-de/album/1DFixLWuPkv3KT3TnV35m3?si=x"),
        "intent://open.spotify.com/intl-de/album/1DFixLWuPkv3KT3TnV35m3?si=x#Intent;scheme=https;package=com.spotify.music;S.browser_fallback_url=https%3A%2F%2Fopen.spotify.com%2Fintl-de%2Falbum%2F1DFixLWuPkv3KT3TnV35m3%3Fsi%3Dx;end",
    ),
    (
        "https://open.spotify.com/playlist/37i9dQZF1DXcBWIGoYBM5M",
        Platform.SPOTIFY,
        ("spotify:playlist:37i9dQZF1DXcBWIGoYBM5M", "https://open.spotify.com/playlist/37i9dQZF1DXcBWIGoYBM5M"),
        "intent://open.spotify.com/playlist/37i9dQZF1DXcBWIGoYBM5M#Intent;scheme=https;package=com.spotify.music;S.browser_fallback_url=https%3A%2F%2Fopen.spotify.com%2Fplaylist%2F37i9dQZF1DXcBWIGoYBM5M;end",
    ),
    (
        "https://spotify.link/AbCdEf",
        Platform.SPOTIFY,
        None,
        "intent://spotify.link/AbCdEf#Intent;scheme=https;package=com.spotify.music;S.browser_fallback_url=https%3A%2F%2Fspotify.link%2FAbCdEf;end",
    ),
    (
        "https://www.amazon.com/dp/B08N5WRWNW?tag=mytag-20",
        Platform.AMAZON,
        None,
        "intent://www.amazon.com/dp/B08N5WRWNW?tag=mytag-20#Intent;scheme=https;package=com.amazon.mShop.android.shopping;S.browser_fallback_url=https%3A%2F%2Fwww.amazon.com%2Fdp%2FB08N5WRWNW%3Ftag%3Dmytag-20;end",
    ),
    (
        "https://www.amazon.in/dp/B0C1234567",
        Platform.AMAZON,
        None,
        "intent://www.amazon.in/dp/B0C1234567#Intent;scheme=https;package=in.amazon.mShop.android.shopping;S.browser_fallback_url=https%3A%2F%2Fwww.amazon.in%2Fdp%2FB0C1234567;end",
    ),
    (
        "https://www.amazon.co.uk/gp/product/B07FZ8S74R/",
        Platform.AMAZON,
        None,
        "intent://www.amazon.co.uk/gp/product/B07FZ8S74R/#Intent;scheme=https;package=com.amazon.mShop.android.shopping;S.browser_fallback_url=https%3A%2F%2Fwww.amazon.co.uk%2Fgp%2Fproduct%2FB07FZ8S74R%2F;end",
    ),
    (
        "https://amzn.to/3xYzAbC",
        Platform.AMAZON,
        None,
        "intent://amzn.to/3xYzAbC#Intent;scheme=https;package=com.amazon.mShop.android.shopping;S.browser_fallback_url=https%3A%2F%2Famzn.to%2F3xYzAbC;end",
    ),
    # iPhones get the store page, which opens the App Store once and keeps a button.
    (
        "https://apps.apple.com/us/app/spotify-music-and-podcasts/id324684580",
        Platform.APPSTORE,
        STORE,
        "https://apps.apple.com/us/app/spotify-music-and-podcasts/id324684580",
    ),
    (
        "https://play.google.com/store/apps/details?id=com.spotify.music&hl=en",
        Platform.PLAYSTORE,
        None,
        "https://play.google.com/store/apps/details?id=com.spotify.music&hl=en",
    ),
    ("https://example.com/a?b=1#top", Platform.OTHER, None, "https://example.com/a?b=1#top"),
    # An IRI destination is sent as its ASCII URI form.
    (
        "https://bücher.example/日本?q=ä#x",
        Platform.OTHER,
        None,
        "https://xn--bcher-kva.example/%E6%97%A5%E6%9C%AC?q=%C3%A4#x",
    ),
    ("https://sho.rt/l/other", Platform.SHORTLINK, None, "https://sho.rt/l/other"),
]


def test_the_builder_table_covers_every_platform():
    assert len(BUILDER) >= 40
    assert {platform for _, platform, _, _ in BUILDER} == set(Platform)


@pytest.mark.parametrize(("url", "platform", "iphone", "android_location"), BUILDER, ids=[row[0] for row in BUILDER])
def test_builder(url, platform, iphone, android_location):
    assert detect_platform(url, SHO_RT) is platform
    web = web_uri(url)
    if iphone is None:
        expected_ios = Plan("redirect", web)
    elif iphone == STORE:
        expected_ios = Plan("store", web, web, auto_url=web)
    else:
        scheme_url, universal_link = iphone
        expected_ios = Plan("ios", web, universal_link, auto_url=scheme_url, fallback=web)
    assert plan_visit(IOS, platform, url, None, None, SHORT) == expected_ios
    assert plan_visit(ANDROID_CHROME, platform, url, None, None, SHORT) == Plan("redirect", android_location)


YOUTUBE = "https://www.youtube.com/watch?v=dQw4w9WgXcQ"
YT_IOS = "youtube://www.youtube.com/watch?v=dQw4w9WgXcQ"
YT_INTENT = android_intent(YOUTUBE, "com.google.android.youtube", YOUTUBE)
ESCAPE_IOS = "x-safari-https://sho.rt/l/abc?iab=1"
ESCAPE_ANDROID = "intent://sho.rt/l/abc?iab=1#Intent;scheme=https;end"
SAMPLES = {
    Platform.YOUTUBE: YOUTUBE,
    Platform.INSTAGRAM: "https://www.instagram.com/nasa/",
    Platform.TWITTER: "https://x.com/jack/status/20",
    Platform.FACEBOOK: "https://www.facebook.com/zuck",
    Platform.LINKEDIN: "https://www.linkedin.com/in/x/",
    Platform.REDDIT: "https://www.reddit.com/r/python/",
    Platform.SPOTIFY: "https://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC",
    Platform.AMAZON: "https://www.amazon.com/dp/B08N5WRWNW",
    Platform.SHORTLINK: "https://sho.rt/l/xyz",
    Platform.APPSTORE: "https://apps.apple.com/app/id324684580",
    Platform.PLAYSTORE: "https://play.google.com/store/apps/details?id=com.spotify.music",
    Platform.OTHER: "https://example.com/",
}
VISITORS = {
    "bot": BOT,
    "desktop": DESKTOP_VISITOR,
    "ios": IOS,
    "ios-chrome": IOS_CHROME,
    "ios-instagram": IOS_INSTAGRAM,
    "ios-snapchat": IOS_SNAPCHAT,
    "android-chrome": ANDROID_CHROME,
    "android-firefox": ANDROID_FIREFOX,
    "android-samsung": ANDROID_SAMSUNG,
    "android-other": ANDROID_OTHER,
    "android-facebook": ANDROID_FACEBOOK,
    "android-wechat": ANDROID_WECHAT,
}
# The action each visitor class gets per platform (no per-OS URLs set).
R, I, A, S = "redirect", "ios", "in_app", "store"  # noqa: E741
ACTIONS = {  # bot desk ios ios-ch ios-ig ios-snap and-ch and-ff and-sam and-oth and-fb and-wechat
    Platform.YOUTUBE: (R, R, I, I, A, A, "intent", R, R, R, A, A),
    Platform.INSTAGRAM: (R, R, I, I, A, A, "intent", R, R, R, A, A),
    Platform.TWITTER: (R, R, I, I, A, A, "intent", R, R, R, A, A),
    Platform.SPOTIFY: (R, R, I, I, A, A, "intent", R, R, R, A, A),
    # No iOS scheme the reference trusts: universal link by redirect, escape offered in apps.
    Platform.FACEBOOK: (R, R, R, R, A, R, "intent", R, R, R, A, A),
    Platform.LINKEDIN: (R, R, R, R, A, R, "intent", R, R, R, A, A),
    Platform.REDDIT: (R, R, R, R, A, R, "intent", R, R, R, A, A),
    Platform.AMAZON: (R, R, R, R, A, R, "intent", R, R, R, A, A),
    # No app: in-app browsers are offered the system browser where an escape works, and
    # iPhones get the store page for App Store destinations (Snapchat has no escape).
    Platform.APPSTORE: (R, R, S, S, A, S, R, R, R, R, A, R),
    Platform.PLAYSTORE: (R, R, R, R, A, R, R, R, R, R, A, R),
    Platform.OTHER: (R, R, R, R, A, R, R, R, R, R, A, R),
    # A link to another short link: that link decides, nothing is offered on the way.
    Platform.SHORTLINK: (R,) * 12,
}


@pytest.mark.parametrize("platform", list(Platform))
@pytest.mark.parametrize("name", list(VISITORS))
def test_every_platform_for_every_visitor_class(platform, name):
    url = SAMPLES[platform]
    plan = plan_visit(VISITORS[name], platform, url, None, None, SHORT)
    expected = ACTIONS[platform][list(VISITORS).index(name)]
    if expected == "intent":
        assert plan.action == "redirect" and plan.location.startswith("intent://")
    else:
        assert plan.action == expected
        assert plan.location == url  # the page's website link or the redirect: the web URL
    if expected == R:
        assert plan == Plan(R, url)


def test_bots_and_desktops_never_get_an_app_url():
    for platform, url in SAMPLES.items():
        for visitor in (
            BOT,
            DESKTOP_VISITOR,
            Visitor(kind="bot", os="Android", browser="chrome", in_app="instagram", is_bot=True),
        ):
            assert plan_visit(
                visitor,
                platform,
                url,
                "https://apps.apple.com/app/id1",
                "https://play.google.com/store/apps/details?id=x",
                SHORT,
            ) == Plan("redirect", url)


def test_intent_structure_and_encoded_fallback():
    web = "https://www.youtube.com/watch?v=dQw4w9WgXcQ&utm_source=a;b#t=1"
    plan = plan_visit(ANDROID_CHROME, Platform.YOUTUBE, web, None, None, SHORT)
    target, _, extras = plan.location.partition("#Intent;")
    assert target == "intent://www.youtube.com/watch?v=dQw4w9WgXcQ&utm_source=a;b"  # fragment dropped
    fields = extras.split(";")
    assert fields[-1] == "end"
    assert fields[:2] == ["scheme=https", "package=com.google.android.youtube"]
    fallback = fields[2].removeprefix("S.browser_fallback_url=")
    assert ";" not in fallback and "#" not in fallback and "/" not in fallback
    assert unquote(fallback) == web


def test_per_os_urls_are_the_phone_destination_for_store_and_other_links():
    ios_url, android_url = (
        "https://apps.apple.com/app/id324684580",
        "https://play.google.com/store/apps/details?id=com.spotify.music",
    )
    for platform in (Platform.APPSTORE, Platform.PLAYSTORE, Platform.OTHER):
        web = SAMPLES[platform]
        # An App Store destination on an iPhone: the store page, never a bare redirect.
        assert plan_visit(IOS, platform, web, ios_url, android_url, SHORT) == Plan(S, web, ios_url, auto_url=ios_url)
        assert plan_visit(IOS_CHROME, platform, web, ios_url, None, SHORT) == Plan(S, web, ios_url, auto_url=ios_url)
        assert plan_visit(IOS_SNAPCHAT, platform, web, ios_url, None, SHORT) == Plan(S, web, ios_url, auto_url=ios_url)
        assert plan_visit(IOS_INSTAGRAM, platform, web, ios_url, None, SHORT) == Plan(A, ios_url, escape_url=ESCAPE_IOS)
        # Google Play on Android: a plain https redirect (the market intent is a guess).
        assert plan_visit(ANDROID_CHROME, platform, web, ios_url, android_url, SHORT) == Plan(R, android_url)
        assert plan_visit(ANDROID_FIREFOX, platform, web, ios_url, android_url, SHORT) == Plan(R, android_url)
        assert plan_visit(ANDROID_SAMSUNG, platform, web, ios_url, android_url, SHORT) == Plan(R, android_url)
        assert plan_visit(ANDROID_WECHAT, platform, web, ios_url, android_url, SHORT) == Plan(R, android_url)
        assert plan_visit(ANDROID_FACEBOOK, platform, web, ios_url, android_url, SHORT) == Plan(
            A, android_url, escape_url=ESCAPE_ANDROID
        )
        assert plan_visit(DESKTOP_VISITOR, platform, web, ios_url, android_url, SHORT) == Plan(R, web)
    # The store page offers the website too when there is one besides the store.
    assert plan_visit(IOS, Platform.OTHER, "https://example.com/", ios_url, None, SHORT) == Plan(
        S, "https://example.com/", ios_url, auto_url=ios_url
    )
    # An iosUrl that is not the App Store is an ordinary redirect.
    assert plan_visit(IOS, Platform.OTHER, "https://example.com/", "https://m.example.com/ios", None, SHORT) == Plan(
        R, "https://m.example.com/ios"
    )
    # An App Store link on Android without androidUrl goes to the web page, and vice versa.
    assert plan_visit(ANDROID_CHROME, Platform.APPSTORE, SAMPLES[Platform.APPSTORE], ios_url, None, SHORT) == Plan(
        R, SAMPLES[Platform.APPSTORE]
    )
    assert plan_visit(IOS, Platform.PLAYSTORE, SAMPLES[Platform.PLAYSTORE], None, android_url, SHORT) == Plan(
        R, SAMPLES[Platform.PLAYSTORE]
    )
    # The service's own links ignore them.
    for visitor in (IOS, IOS_INSTAGRAM, ANDROID_CHROME, ANDROID_FACEBOOK):
        assert plan_visit(
            visitor, Platform.SHORTLINK, SAMPLES[Platform.SHORTLINK], ios_url, android_url, SHORT
        ) == Plan(R, SAMPLES[Platform.SHORTLINK])


def test_per_os_urls_are_the_not_installed_fallback_for_app_platforms():
    ios_url, android_url = (
        "https://apps.apple.com/app/id544007664",
        "https://play.google.com/store/apps/details?id=com.google.android.youtube",
    )
    # "Continue to website" is the website; only the automatic fallback goes to the store.
    assert plan_visit(IOS, Platform.YOUTUBE, YOUTUBE, ios_url, android_url, SHORT) == Plan(
        I, YOUTUBE, YOUTUBE, auto_url=YT_IOS, fallback=ios_url
    )
    assert plan_visit(IOS, Platform.YOUTUBE, YOUTUBE, None, android_url, SHORT) == Plan(
        I, YOUTUBE, YOUTUBE, auto_url=YT_IOS, fallback=YOUTUBE
    )
    intent = android_intent(YOUTUBE, "com.google.android.youtube", android_url)
    assert intent == (
        "intent://www.youtube.com/watch?v=dQw4w9WgXcQ#Intent;scheme=https;"
        "package=com.google.android.youtube;S.browser_fallback_url=https%3A%2F%2Fplay.google.com"
        "%2Fstore%2Fapps%2Fdetails%3Fid%3Dcom.google.android.youtube;end"
    )
    assert plan_visit(ANDROID_CHROME, Platform.YOUTUBE, YOUTUBE, ios_url, android_url, SHORT) == Plan(R, intent)
    assert plan_visit(ANDROID_FACEBOOK, Platform.YOUTUBE, YOUTUBE, ios_url, android_url, SHORT) == Plan(
        A, YOUTUBE, intent, escape_url=ESCAPE_ANDROID, fallback=android_url
    )
    # Browsers that cannot use the intent get the website, not the store.
    assert plan_visit(ANDROID_FIREFOX, Platform.YOUTUBE, YOUTUBE, ios_url, android_url, SHORT) == Plan(R, YOUTUBE)


def test_the_iphone_button_is_the_https_universal_link():
    # Canonical host, https even for an http destination; the scheme is only tried on load.
    plan = plan_visit(IOS, Platform.TWITTER, "http://mobile.twitter.com/NASA?s=20", None, None, SHORT)
    assert plan == Plan(
        I,
        "http://mobile.twitter.com/NASA?s=20",
        "https://twitter.com/NASA?s=20",
        auto_url="twitter://user?screen_name=NASA",
        fallback="http://mobile.twitter.com/NASA?s=20",
    )


def test_in_app_browsers_get_the_app_and_an_escape_with_the_marker():
    assert plan_visit(IOS_INSTAGRAM, Platform.YOUTUBE, YOUTUBE, None, None, SHORT) == Plan(
        A, YOUTUBE, YT_IOS, escape_url=ESCAPE_IOS
    )
    # Android in-app pages go to the fallback themselves if the app does not open.
    assert plan_visit(ANDROID_FACEBOOK, Platform.YOUTUBE, YOUTUBE, None, None, SHORT) == Plan(
        A, YOUTUBE, YT_INTENT, escape_url=ESCAPE_ANDROID, fallback=YOUTUBE
    )
    # The marker is set once, other parameters of the short URL kept.
    assert (
        plan_visit(IOS_INSTAGRAM, Platform.YOUTUBE, YOUTUBE, None, None, SHORT + "?utm_source=ig&iab=0").escape_url
        == "x-safari-https://sho.rt/l/abc?utm_source=ig&iab=1"
    )
    # Where no escape works (Snapchat on iOS, WeChat) none is offered.
    assert plan_visit(IOS_SNAPCHAT, Platform.YOUTUBE, YOUTUBE, None, None, SHORT) == Plan(A, YOUTUBE, YT_IOS)
    assert plan_visit(ANDROID_WECHAT, Platform.YOUTUBE, YOUTUBE, None, None, SHORT) == Plan(
        A, YOUTUBE, YT_INTENT, fallback=YOUTUBE
    )
    # No app scheme and no escape: nothing to offer, a plain redirect.
    assert plan_visit(IOS_SNAPCHAT, Platform.FACEBOOK, SAMPLES[Platform.FACEBOOK], None, None, SHORT) == Plan(
        R, SAMPLES[Platform.FACEBOOK]
    )
    # x-safari exists only for https.
    assert plan_visit(IOS_INSTAGRAM, Platform.YOUTUBE, YOUTUBE, None, None, "http://sho.rt/l/abc").escape_url is None


def test_instagram_from_424_escapes_through_its_own_extbrowser_url():
    for version, escape in [
        (0, ESCAPE_IOS),
        (423, ESCAPE_IOS),
        (424, "instagram://extbrowser/?url=https%3A%2F%2Fsho.rt%2Fl%2Fabc%3Fiab%3D1"),
        (445, "instagram://extbrowser/?url=https%3A%2F%2Fsho.rt%2Fl%2Fabc%3Fiab%3D1"),
    ]:
        visitor = Visitor("ios", "iOS", "safari", in_app="instagram", app_version=version)
        assert plan_visit(visitor, Platform.YOUTUBE, YOUTUBE, None, None, SHORT) == Plan(
            A, YOUTUBE, YT_IOS, escape_url=escape
        ), version
    # Android keeps the intent, which works there.
    android = Visitor("android", "Android", "other", in_app="instagram", app_version=445)
    assert plan_visit(android, Platform.YOUTUBE, YOUTUBE, None, None, SHORT).escape_url == ESCAPE_ANDROID


@pytest.mark.parametrize(
    ("query", "encoded"),
    [
        ("utm_source=a|b", "utm_source=a%7Cb"),
        ('q="x"&r=<y>', "q=%22x%22&r=%3Cy%3E"),
        ("q=a b^c`d{e}", "q=a%20b%5Ec%60d%7Be%7D"),
        ("q=caf\xc3\xa9", "q=caf%C3%A9"),  # raw UTF-8 bytes, as latin-1 text from ASGI
        ("q=%7C&s=a%2Fb", "q=%7C&s=a%2Fb"),  # already encoded: kept as sent
    ],
)
def test_every_escape_url_is_percent_encoded(query, encoded):
    short = SHORT + "?" + query
    ios = plan_visit(IOS_INSTAGRAM, Platform.YOUTUBE, YOUTUBE, None, None, short)
    assert ios.escape_url == f"x-safari-https://sho.rt/l/abc?{encoded}&iab=1"
    extbrowser = Visitor("ios", "iOS", "safari", in_app="instagram", app_version=445)
    assert plan_visit(
        extbrowser, Platform.YOUTUBE, YOUTUBE, None, None, short
    ).escape_url == "instagram://extbrowser/?url=" + quote(f"https://sho.rt/l/abc?{encoded}&iab=1", safe="")
    android = plan_visit(ANDROID_FACEBOOK, Platform.YOUTUBE, YOUTUBE, None, None, short)
    assert android.escape_url == f"intent://sho.rt/l/abc?{encoded}&iab=1#Intent;scheme=https;end"
    for url in (ios.escape_url, android.escape_url):
        assert _is_uri(url)


def test_in_app_browsers_are_offered_the_system_browser_for_links_without_an_app():
    for platform in (Platform.OTHER, Platform.PLAYSTORE, Platform.APPSTORE):
        url = SAMPLES[platform]
        assert plan_visit(IOS_INSTAGRAM, platform, url, None, None, SHORT) == Plan(A, url, escape_url=ESCAPE_IOS)
        assert plan_visit(ANDROID_FACEBOOK, platform, url, None, None, SHORT) == Plan(A, url, escape_url=ESCAPE_ANDROID)
        # Back from the escape, or no escape that works: straight on.
        assert plan_visit(ANDROID_FACEBOOK, platform, url, None, None, SHORT, escaped=True) == Plan(R, url)
        assert plan_visit(ANDROID_WECHAT, platform, url, None, None, SHORT) == Plan(R, url)
    # YouTube Music is no app of the table: like any website.
    music = "https://music.youtube.com/watch?v=dQw4w9WgXcQ"
    assert plan_visit(IOS_INSTAGRAM, Platform.YOUTUBE, music, None, None, SHORT) == Plan(
        A, music, escape_url=ESCAPE_IOS
    )


def test_coming_back_through_the_escape_never_offers_it_again():
    for visitor in (IOS_INSTAGRAM, ANDROID_FACEBOOK):
        plan = plan_visit(visitor, Platform.YOUTUBE, YOUTUBE, None, None, SHORT + "?iab=1", escaped=True)
        assert plan.action == A and plan.escape_url is None and plan.app_url is not None


def test_with_escape_marker():
    assert with_escape_marker("https://sho.rt/l/abc") == "https://sho.rt/l/abc?iab=1"
    assert with_escape_marker("https://sho.rt/l/abc?iab=1") == "https://sho.rt/l/abc?iab=1"
    assert with_escape_marker("https://sho.rt/l/abc?a=1&iab=x&b=2") == "https://sho.rt/l/abc?a=1&b=2&iab=1"
    assert with_escape_marker("https://sho.rt/l/abc?a=|&iab") == "https://sho.rt/l/abc?a=%7C&iab=1"


def test_an_iri_destination_is_redirected_as_a_uri_through_the_app(client, auth):
    link = make_link(client, auth, originalUrl="https://bücher.example/日本?q=ä#x")
    response = client.get(f"/l/{link['shortCode']}", headers={"User-Agent": DESKTOP}, follow_redirects=False)
    assert response.status_code == 302
    assert response.headers["location"] == "https://xn--bcher-kva.example/%E6%97%A5%E6%9C%AC?q=%C3%A4#x"


# --- Properties over generated destinations and visitors.
_hosts = st.sampled_from(
    [
        "www.youtube.com",
        "youtu.be",
        "m.youtube.com",
        "instagram.com",
        "x.com",
        "twitter.com",
        "m.facebook.com",
        "fb.watch",
        "www.linkedin.com",
        "old.reddit.com",
        "open.spotify.com",
        "www.amazon.in",
        "apps.apple.com",
        "play.google.com",
        "example.com",
        "bücher.example",
        "sho.rt",
    ]
)
_segment = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zs")), max_size=12)
_urls = st.builds(
    lambda scheme, host, path, query, fragment: (
        f"{scheme}://{host}/{path}" + (f"?{query}" if query else "") + (f"#{fragment}" if fragment else "")
    ),
    st.sampled_from(["https", "http"]),
    _hosts,
    _segment,
    _segment,
    _segment,
)
_store_urls = st.none() | st.sampled_from(
    ["https://apps.apple.com/app/id1", "https://play.google.com/store/apps/details?id=a.b"]
)
# Raw queries as ASGI gives them (latin-1 text of the bytes sent), unencoded characters included.
_queries = st.sampled_from(
    [
        "",
        "utm_source=a",
        "utm_source=a&utm_medium=b%20c",
        "x=1&utm_term=%3B%23",
        "iab=1&utm_campaign=z",
        'utm_source=a|b&q="x"',
        "utm_content=caf\xc3\xa9&r=<y>",
    ]
)
_visitors = st.sampled_from([*VISITORS.values(), Visitor("ios", "iOS", "safari", in_app="instagram", app_version=445)])


def _is_uri(url: str) -> bool:
    return url.isascii() and not any(ch in url for ch in ' "<>\\^`{|}') and all(ch.isprintable() for ch in url)


@given(_urls, _visitors, _store_urls, _store_urls, _queries)
def test_every_plan_is_a_valid_url_with_a_web_fallback(url, visitor, ios_url, android_url, query):
    web = forward_utm(url, query)
    platform = detect_platform(url, SHO_RT)
    plan = plan_visit(
        visitor,
        platform,
        web,
        forward_utm(ios_url, query) if ios_url else None,
        forward_utm(android_url, query) if android_url else None,
        SHORT + ("?" + query if query else ""),
        escaped="iab=1" in query,
    )
    assert plan.action in (R, I, A, S)
    for emitted in (plan.location, plan.app_url, plan.auto_url, plan.escape_url, plan.fallback):
        if emitted is not None:
            assert _is_uri(emitted), emitted
            assert emitted.split(":", 1)[0] in APP_SCHEMES | {"http", "https"}
    if plan.location.startswith("intent:"):
        extras = plan.location.split("#Intent;", 1)[1]
        fallback = unquote(extras.split("S.browser_fallback_url=", 1)[1].split(";", 1)[0])
        assert urlsplit(fallback).scheme in ("http", "https") and urlsplit(fallback).hostname
    else:
        assert urlsplit(plan.location).scheme in ("http", "https") and urlsplit(plan.location).hostname
    if visitor.is_bot or visitor.kind == "desktop":
        assert plan == Plan(R, web_uri(web))


@given(_urls, _visitors, _queries)
def test_utm_forwarding_into_a_plan_is_idempotent(url, visitor, query):
    platform = detect_platform(url, SHO_RT)
    once = forward_utm(url, query)
    assert plan_visit(visitor, platform, forward_utm(once, query), None, None, SHORT) == plan_visit(
        visitor, platform, once, None, None, SHORT
    )
