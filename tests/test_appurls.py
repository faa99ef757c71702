"""The app-URL builder and the visit plan: every platform × visitor class."""
from __future__ import annotations

from urllib.parse import unquote, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shortlink.links.platforms import Platform, detect_platform
from shortlink.visits.appurls import (
    APP_SCHEMES, Plan, android_intent, plan_visit, web_uri, with_escape_marker,
)
from shortlink.visits.classify import Visitor
from shortlink.visits.utm import forward_utm
from tests.test_visitor_route import DESKTOP, make_link

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

# (destination, detected platform, iPhone app URL (None: plain redirect), Android Chrome redirect)
BUILDER = [
    ('https://www.youtube.com/watch?v=dQw4w9WgXcQ', Platform.YOUTUBE, 'youtube://www.youtube.com/watch?v=dQw4w9WgXcQ',
     'intent://www.youtube.com/watch?v=dQw4w9WgXcQ#Intent;scheme=https;package=com.google.android.youtube;S.browser_fallback_url=https%3A%2F%2Fwww.youtube.com%2Fwatch%3Fv%3DdQw4w9WgXcQ;end'),
    ('https://youtu.be/dQw4w9WgXcQ?t=42', Platform.YOUTUBE, 'youtube://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42',
     'intent://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42#Intent;scheme=https;package=com.google.android.youtube;S.browser_fallback_url=https%3A%2F%2Fyoutu.be%2FdQw4w9WgXcQ%3Ft%3D42;end'),
    ('https://m.youtube.com/shorts/abcdefghijk', Platform.YOUTUBE, 'youtube://www.youtube.com/shorts/abcdefghijk',
     'intent://www.youtube.com/shorts/abcdefghijk#Intent;scheme=https;package=com.google.android.youtube;S.browser_fallback_url=https%3A%2F%2Fm.youtube.com%2Fshorts%2Fabcdefghijk;end'),
    ('https://www.youtube.com/embed/dQw4w9WgXcQ?start=10', Platform.YOUTUBE, 'youtube://www.youtube.com/watch?v=dQw4w9WgXcQ&start=10',
     'intent://www.youtube.com/watch?v=dQw4w9WgXcQ&start=10#Intent;scheme=https;package=com.google.android.youtube;S.browser_fallback_url=https%3A%2F%2Fwww.youtube.com%2Fembed%2FdQw4w9WgXcQ%3Fstart%3D10;end'),
    ('https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ', Platform.YOUTUBE, 'youtube://www.youtube.com/watch?v=dQw4w9WgXcQ',
     'intent://www.youtube.com/watch?v=dQw4w9WgXcQ#Intent;scheme=https;package=com.google.android.youtube;S.browser_fallback_url=https%3A%2F%2Fwww.youtube-nocookie.com%2Fembed%2FdQw4w9WgXcQ;end'),
    ('https://www.youtube.com/@MrBeast', Platform.YOUTUBE, 'youtube://www.youtube.com/@MrBeast',
     'intent://www.youtube.com/@MrBeast#Intent;scheme=https;package=com.google.android.youtube;S.browser_fallback_url=https%3A%2F%2Fwww.youtube.com%2F%40MrBeast;end'),
    ('https://youtube.com/playlist?list=PL590L5WQmH8fJ54F369BLDSqIwcs-TCfs', Platform.YOUTUBE, 'youtube://www.youtube.com/playlist?list=PL590L5WQmH8fJ54F369BLDSqIwcs-TCfs',
     'intent://www.youtube.com/playlist?list=PL590L5WQmH8fJ54F369BLDSqIwcs-TCfs#Intent;scheme=https;package=com.google.android.youtube;S.browser_fallback_url=https%3A%2F%2Fyoutube.com%2Fplaylist%3Flist%3DPL590L5WQmH8fJ54F369BLDSqIwcs-TCfs;end'),
    # YouTube Music is another app (its scheme is unverified): the web for everyone.
    ('https://music.youtube.com/watch?v=dQw4w9WgXcQ', Platform.YOUTUBE, None,
     'https://music.youtube.com/watch?v=dQw4w9WgXcQ'),
    ('https://instagram.com/nasa/', Platform.INSTAGRAM, 'instagram://user?username=nasa',
     'intent://www.instagram.com/nasa/#Intent;scheme=https;package=com.instagram.android;S.browser_fallback_url=https%3A%2F%2Finstagram.com%2Fnasa%2F;end'),
    ('https://www.instagram.com/natgeo', Platform.INSTAGRAM, 'instagram://user?username=natgeo',
     'intent://www.instagram.com/natgeo#Intent;scheme=https;package=com.instagram.android;S.browser_fallback_url=https%3A%2F%2Fwww.instagram.com%2Fnatgeo;end'),
    # Posts need a numeric id for the scheme: iPhones get the universal link.
    ('https://www.instagram.com/p/C1a2b3c4d5e/', Platform.INSTAGRAM, None,
     'intent://www.instagram.com/p/C1a2b3c4d5e/#Intent;scheme=https;package=com.instagram.android;S.browser_fallback_url=https%3A%2F%2Fwww.instagram.com%2Fp%2FC1a2b3c4d5e%2F;end'),
    ('https://www.instagram.com/reel/C9xYz12AbCd/?igsh=abc', Platform.INSTAGRAM, None,
     'intent://www.instagram.com/reel/C9xYz12AbCd/?igsh=abc#Intent;scheme=https;package=com.instagram.android;S.browser_fallback_url=https%3A%2F%2Fwww.instagram.com%2Freel%2FC9xYz12AbCd%2F%3Figsh%3Dabc;end'),
    ('https://www.instagram.com/explore/tags/cats/', Platform.INSTAGRAM, None,
     'intent://www.instagram.com/explore/tags/cats/#Intent;scheme=https;package=com.instagram.android;S.browser_fallback_url=https%3A%2F%2Fwww.instagram.com%2Fexplore%2Ftags%2Fcats%2F;end'),
    ('https://x.com/jack/status/20', Platform.TWITTER, 'twitter://status?id=20',
     'intent://x.com/jack/status/20#Intent;scheme=https;package=com.twitter.android;S.browser_fallback_url=https%3A%2F%2Fx.com%2Fjack%2Fstatus%2F20;end'),
    ('https://twitter.com/jack/statuses/20?s=21', Platform.TWITTER, 'twitter://status?id=20',
     'intent://twitter.com/jack/statuses/20?s=21#Intent;scheme=https;package=com.twitter.android;S.browser_fallback_url=https%3A%2F%2Ftwitter.com%2Fjack%2Fstatuses%2F20%3Fs%3D21;end'),
    ('https://x.com/i/web/status/1780000000000000000', Platform.TWITTER, 'twitter://status?id=1780000000000000000',
     'intent://x.com/i/web/status/1780000000000000000#Intent;scheme=https;package=com.twitter.android;S.browser_fallback_url=https%3A%2F%2Fx.com%2Fi%2Fweb%2Fstatus%2F1780000000000000000;end'),
    ('https://mobile.twitter.com/NASA', Platform.TWITTER, 'twitter://user?screen_name=NASA',
     'intent://twitter.com/NASA#Intent;scheme=https;package=com.twitter.android;S.browser_fallback_url=https%3A%2F%2Fmobile.twitter.com%2FNASA;end'),
    ('https://x.com/home', Platform.TWITTER, None,
     'intent://x.com/home#Intent;scheme=https;package=com.twitter.android;S.browser_fallback_url=https%3A%2F%2Fx.com%2Fhome;end'),
    ('https://x.com/search?q=%23python&src=typed', Platform.TWITTER, None,
     'intent://x.com/search?q=%23python&src=typed#Intent;scheme=https;package=com.twitter.android;S.browser_fallback_url=https%3A%2F%2Fx.com%2Fsearch%3Fq%3D%2523python%26src%3Dtyped;end'),
    ('https://m.facebook.com/zuck', Platform.FACEBOOK, None,
     'intent://www.facebook.com/zuck#Intent;scheme=https;package=com.facebook.katana;S.browser_fallback_url=https%3A%2F%2Fm.facebook.com%2Fzuck;end'),
    ('https://www.facebook.com/watch/?v=10153231379946729', Platform.FACEBOOK, None,
     'intent://www.facebook.com/watch/?v=10153231379946729#Intent;scheme=https;package=com.facebook.katana;S.browser_fallback_url=https%3A%2F%2Fwww.facebook.com%2Fwatch%2F%3Fv%3D10153231379946729;end'),
    ('https://fb.watch/abcDEF123/', Platform.FACEBOOK, None,
     'intent://fb.watch/abcDEF123/#Intent;scheme=https;package=com.facebook.katana;S.browser_fallback_url=https%3A%2F%2Ffb.watch%2FabcDEF123%2F;end'),
    ('https://www.linkedin.com/in/williamhgates/', Platform.LINKEDIN, None,
     'intent://www.linkedin.com/in/williamhgates/#Intent;scheme=https;package=com.linkedin.android;S.browser_fallback_url=https%3A%2F%2Fwww.linkedin.com%2Fin%2Fwilliamhgates%2F;end'),
    ('https://uk.linkedin.com/company/microsoft', Platform.LINKEDIN, None,
     'intent://uk.linkedin.com/company/microsoft#Intent;scheme=https;package=com.linkedin.android;S.browser_fallback_url=https%3A%2F%2Fuk.linkedin.com%2Fcompany%2Fmicrosoft;end'),
    ('https://lnkd.in/abc123', Platform.LINKEDIN, None,
     'intent://lnkd.in/abc123#Intent;scheme=https;package=com.linkedin.android;S.browser_fallback_url=https%3A%2F%2Flnkd.in%2Fabc123;end'),
    ('https://old.reddit.com/r/python/comments/abc123/hello_world/', Platform.REDDIT, None,
     'intent://www.reddit.com/r/python/comments/abc123/hello_world/#Intent;scheme=https;package=com.reddit.frontpage;S.browser_fallback_url=https%3A%2F%2Fold.reddit.com%2Fr%2Fpython%2Fcomments%2Fabc123%2Fhello_world%2F;end'),
    ('https://www.reddit.com/r/python/', Platform.REDDIT, None,
     'intent://www.reddit.com/r/python/#Intent;scheme=https;package=com.reddit.frontpage;S.browser_fallback_url=https%3A%2F%2Fwww.reddit.com%2Fr%2Fpython%2F;end'),
    ('https://redd.it/abc123', Platform.REDDIT, None,
     'intent://redd.it/abc123#Intent;scheme=https;package=com.reddit.frontpage;S.browser_fallback_url=https%3A%2F%2Fredd.it%2Fabc123;end'),
    ('https://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC', Platform.SPOTIFY, 'spotify:track:4uLU6hMCjMI75M1A2tKUQC',
     'intent://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC#Intent;scheme=https;package=com.spotify.music;S.browser_fallback_url=https%3A%2F%2Fopen.spotify.com%2Ftrack%2F4uLU6hMCjMI75M1A2tKUQC;end'),
    ('https://open.spotify.com/intl-de/album/1DFixLWuPkv3KT3TnV35m3?si=x', Platform.SPOTIFY, 'spotify:album:1DFixLWuPkv3KT3TnV35m3',
     'intent://open.spotify.com/intl-de/album/1DFixLWuPkv3KT3TnV35m3?si=x#Intent;scheme=https;package=com.spotify.music;S.browser_fallback_url=https%3A%2F%2Fopen.spotify.com%2Fintl-de%2Falbum%2F1DFixLWuPkv3KT3TnV35m3%3Fsi%3Dx;end'),
    ('https://open.spotify.com/playlist/37i9dQZF1DXcBWIGoYBM5M', Platform.SPOTIFY, 'spotify:playlist:37i9dQZF1DXcBWIGoYBM5M',
     'intent://open.spotify.com/playlist/37i9dQZF1DXcBWIGoYBM5M#Intent;scheme=https;package=com.spotify.music;S.browser_fallback_url=https%3A%2F%2Fopen.spotify.com%2Fplaylist%2F37i9dQZF1DXcBWIGoYBM5M;end'),
    ('https://spotify.link/AbCdEf', Platform.SPOTIFY, None,
     'intent://spotify.link/AbCdEf#Intent;scheme=https;package=com.spotify.music;S.browser_fallback_url=https%3A%2F%2Fspotify.link%2FAbCdEf;end'),
    ('https://www.amazon.com/dp/B08N5WRWNW?tag=mytag-20', Platform.AMAZON, None,
     'intent://www.amazon.com/dp/B08N5WRWNW?tag=mytag-20#Intent;scheme=https;package=com.amazon.mShop.android.shopping;S.browser_fallback_url=https%3A%2F%2Fwww.amazon.com%2Fdp%2FB08N5WRWNW%3Ftag%3Dmytag-20;end'),
    ('https://www.amazon.in/dp/B0C1234567', Platform.AMAZON, None,
     'intent://www.amazon.in/dp/B0C1234567#Intent;scheme=https;package=in.amazon.mShop.android.shopping;S.browser_fallback_url=https%3A%2F%2Fwww.amazon.in%2Fdp%2FB0C1234567;end'),
    ('https://www.amazon.co.uk/gp/product/B07FZ8S74R/', Platform.AMAZON, None,
     'intent://www.amazon.co.uk/gp/product/B07FZ8S74R/#Intent;scheme=https;package=com.amazon.mShop.android.shopping;S.browser_fallback_url=https%3A%2F%2Fwww.amazon.co.uk%2Fgp%2Fproduct%2FB07FZ8S74R%2F;end'),
    ('https://amzn.to/3xYzAbC', Platform.AMAZON, None,
     'intent://amzn.to/3xYzAbC#Intent;scheme=https;package=com.amazon.mShop.android.shopping;S.browser_fallback_url=https%3A%2F%2Famzn.to%2F3xYzAbC;end'),
    ('https://apps.apple.com/us/app/spotify-music-and-podcasts/id324684580', Platform.APPSTORE, None,
     'https://apps.apple.com/us/app/spotify-music-and-podcasts/id324684580'),
    ('https://play.google.com/store/apps/details?id=com.spotify.music&hl=en', Platform.PLAYSTORE, None,
     'https://play.google.com/store/apps/details?id=com.spotify.music&hl=en'),
    ('https://example.com/a?b=1#top', Platform.OTHER, None,
     'https://example.com/a?b=1#top'),
    # An IRI destination is sent as its ASCII URI form.
    ('https://bücher.example/日本?q=ä#x', Platform.OTHER, None,
     'https://xn--bcher-kva.example/%E6%97%A5%E6%9C%AC?q=%C3%A4#x'),
    ('https://sho.rt/l/other', Platform.SHORTLINK, None,
     'https://sho.rt/l/other'),
]


def test_the_builder_table_covers_every_platform():
    assert len(BUILDER) >= 40
    assert {platform for _, platform, _, _ in BUILDER} == set(Platform)


@pytest.mark.parametrize(("url", "platform", "ios_app_url", "android_location"), BUILDER,
                         ids=[row[0] for row in BUILDER])
def test_builder(url, platform, ios_app_url, android_location):
    assert detect_platform(url, ["sho.rt"]) is platform
    web = web_uri(url)
    expected_ios = Plan("ios", web, ios_app_url) if ios_app_url else Plan("redirect", web)
    assert plan_visit(IOS, platform, url, None, None, SHORT) == expected_ios
    assert plan_visit(ANDROID_CHROME, platform, url, None, None, SHORT) == \
        Plan("redirect", android_location)


YOUTUBE = "https://www.youtube.com/watch?v=dQw4w9WgXcQ"
YT_IOS = "youtube://www.youtube.com/watch?v=dQw4w9WgXcQ"
YT_INTENT = android_intent(YOUTUBE, "com.google.android.youtube", YOUTUBE)
ESCAPE_IOS = "x-safari-https://sho.rt/l/abc?iab=1"
ESCAPE_ANDROID = "intent://sho.rt/l/abc?iab=1#Intent;scheme=https;end"
SAMPLES = {
    Platform.YOUTUBE: YOUTUBE, Platform.INSTAGRAM: "https://www.instagram.com/nasa/",
    Platform.TWITTER: "https://x.com/jack/status/20", Platform.FACEBOOK: "https://www.facebook.com/zuck",
    Platform.LINKEDIN: "https://www.linkedin.com/in/x/", Platform.REDDIT: "https://www.reddit.com/r/python/",
    Platform.SPOTIFY: "https://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC",
    Platform.AMAZON: "https://www.amazon.com/dp/B08N5WRWNW", Platform.SHORTLINK: "https://sho.rt/l/xyz",
    Platform.APPSTORE: "https://apps.apple.com/app/id324684580",
    Platform.PLAYSTORE: "https://play.google.com/store/apps/details?id=com.spotify.music",
    Platform.OTHER: "https://example.com/",
}
VISITORS = {"bot": BOT, "desktop": DESKTOP_VISITOR, "ios": IOS, "ios-chrome": IOS_CHROME,
            "ios-instagram": IOS_INSTAGRAM, "ios-snapchat": IOS_SNAPCHAT,
            "android-chrome": ANDROID_CHROME, "android-firefox": ANDROID_FIREFOX,
            "android-samsung": ANDROID_SAMSUNG, "android-other": ANDROID_OTHER,
            "android-facebook": ANDROID_FACEBOOK, "android-wechat": ANDROID_WECHAT}
# The action each visitor class gets per platform (no per-OS URLs set).
R, I, A = "redirect", "ios", "in_app"
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
    **{platform: (R,) * 12 for platform in (Platform.SHORTLINK, Platform.APPSTORE,
                                             Platform.PLAYSTORE, Platform.OTHER)},
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
        assert plan.location == url        # the page's fallback or the redirect: the web URL
    if expected == R:
        assert plan.app_url is None and plan.escape_url is None


def test_bots_and_desktops_never_get_an_app_url():
    for platform, url in SAMPLES.items():
        for visitor in (BOT, DESKTOP_VISITOR, Visitor(kind="bot", os="Android", browser="chrome",
                                                      in_app="instagram", is_bot=True)):
            assert plan_visit(visitor, platform, url, "https://apps.apple.com/app/id1",
                              "https://play.google.com/store/apps/details?id=x", SHORT) == Plan("redirect", url)


def test_intent_structure_and_encoded_fallback():
    web = "https://www.youtube.com/watch?v=dQw4w9WgXcQ&utm_source=a;b#t=1"
    plan = plan_visit(ANDROID_CHROME, Platform.YOUTUBE, web, None, None, SHORT)
    target, _, extras = plan.location.partition("#Intent;")
    assert target == "intent://www.youtube.com/watch?v=dQw4w9WgXcQ&utm_source=a;b"   # fragment dropped
    fields = extras.split(";")
    assert fields[-1] == "end"
    assert fields[:2] == ["scheme=https", "package=com.google.android.youtube"]
    fallback = fields[2].removeprefix("S.browser_fallback_url=")
    assert ";" not in fallback and "#" not in fallback and "/" not in fallback
    assert unquote(fallback) == web


def test_per_os_urls_are_the_phone_destination_for_store_and_other_links():
    ios_url, android_url = "https://apps.apple.com/app/id324684580", \
        "https://play.google.com/store/apps/details?id=com.spotify.music"
    for platform in (Platform.APPSTORE, Platform.PLAYSTORE, Platform.OTHER):
        web = SAMPLES[platform]
        assert plan_visit(IOS, platform, web, ios_url, android_url, SHORT) == Plan(R, ios_url)
        assert plan_visit(IOS_INSTAGRAM, platform, web, ios_url, None, SHORT) == Plan(R, ios_url)
        assert plan_visit(ANDROID_CHROME, platform, web, ios_url, android_url, SHORT) == Plan(R, android_url)
        assert plan_visit(ANDROID_FIREFOX, platform, web, ios_url, android_url, SHORT) == Plan(R, android_url)
        assert plan_visit(DESKTOP_VISITOR, platform, web, ios_url, android_url, SHORT) == Plan(R, web)
    # An App Store link on Android without androidUrl goes to the web page, and vice versa.
    assert plan_visit(ANDROID_CHROME, Platform.APPSTORE, SAMPLES[Platform.APPSTORE], ios_url, None,
                      SHORT) == Plan(R, SAMPLES[Platform.APPSTORE])
    assert plan_visit(IOS, Platform.PLAYSTORE, SAMPLES[Platform.PLAYSTORE], None, android_url,
                      SHORT) == Plan(R, SAMPLES[Platform.PLAYSTORE])
    # The service's own links ignore them.
    assert plan_visit(IOS, Platform.SHORTLINK, SAMPLES[Platform.SHORTLINK], ios_url, android_url,
                      SHORT) == Plan(R, SAMPLES[Platform.SHORTLINK])


def test_per_os_urls_are_the_not_installed_fallback_for_app_platforms():
    ios_url, android_url = "https://apps.apple.com/app/id544007664", \
        "https://play.google.com/store/apps/details?id=com.google.android.youtube"
    assert plan_visit(IOS, Platform.YOUTUBE, YOUTUBE, ios_url, android_url, SHORT) == \
        Plan("ios", ios_url, YT_IOS)
    assert plan_visit(ANDROID_CHROME, Platform.YOUTUBE, YOUTUBE, ios_url, android_url, SHORT) == \
        Plan(R, android_intent(YOUTUBE, "com.google.android.youtube", android_url))
    # Browsers that cannot use the intent get the website, not the store.
    assert plan_visit(ANDROID_FIREFOX, Platform.YOUTUBE, YOUTUBE, ios_url, android_url, SHORT) == \
        Plan(R, YOUTUBE)


def test_in_app_browsers_get_the_app_and_an_escape_with_the_marker():
    assert plan_visit(IOS_INSTAGRAM, Platform.YOUTUBE, YOUTUBE, None, None, SHORT) == \
        Plan(A, YOUTUBE, YT_IOS, ESCAPE_IOS)
    assert plan_visit(ANDROID_FACEBOOK, Platform.YOUTUBE, YOUTUBE, None, None, SHORT) == \
        Plan(A, YOUTUBE, YT_INTENT, ESCAPE_ANDROID)
    # The marker is set once, other parameters of the short URL kept.
    assert plan_visit(IOS_INSTAGRAM, Platform.YOUTUBE, YOUTUBE, None, None,
                      SHORT + "?utm_source=ig&iab=0").escape_url == \
        "x-safari-https://sho.rt/l/abc?utm_source=ig&iab=1"
    # Where no escape works (Snapchat on iOS, WeChat) none is offered.
    assert plan_visit(IOS_SNAPCHAT, Platform.YOUTUBE, YOUTUBE, None, None, SHORT) == \
        Plan(A, YOUTUBE, YT_IOS, None)
    assert plan_visit(ANDROID_WECHAT, Platform.YOUTUBE, YOUTUBE, None, None, SHORT) == \
        Plan(A, YOUTUBE, YT_INTENT, None)
    # No app scheme and no escape: nothing to offer, a plain redirect.
    assert plan_visit(IOS_SNAPCHAT, Platform.FACEBOOK, SAMPLES[Platform.FACEBOOK], None, None,
                      SHORT) == Plan(R, SAMPLES[Platform.FACEBOOK])
    # x-safari exists only for https.
    assert plan_visit(IOS_INSTAGRAM, Platform.YOUTUBE, YOUTUBE, None, None,
                      "http://sho.rt/l/abc").escape_url is None


def test_coming_back_through_the_escape_never_offers_it_again():
    for visitor in (IOS_INSTAGRAM, ANDROID_FACEBOOK):
        plan = plan_visit(visitor, Platform.YOUTUBE, YOUTUBE, None, None, SHORT + "?iab=1",
                          escaped=True)
        assert plan.action == A and plan.escape_url is None and plan.app_url is not None


def test_with_escape_marker():
    assert with_escape_marker("https://sho.rt/l/abc") == "https://sho.rt/l/abc?iab=1"
    assert with_escape_marker("https://sho.rt/l/abc?iab=1") == "https://sho.rt/l/abc?iab=1"
    assert with_escape_marker("https://sho.rt/l/abc?a=1&iab=x&b=2") == "https://sho.rt/l/abc?a=1&b=2&iab=1"


def test_an_iri_destination_is_redirected_as_a_uri_through_the_app(client, auth):
    link = make_link(client, auth, originalUrl="https://bücher.example/日本?q=ä#x")
    response = client.get(f"/l/{link['shortCode']}", headers={"User-Agent": DESKTOP},
                          follow_redirects=False)
    assert response.status_code == 302
    assert response.headers["location"] == "https://xn--bcher-kva.example/%E6%97%A5%E6%9C%AC?q=%C3%A4#x"


# --- Properties over generated destinations and visitors.
_hosts = st.sampled_from(["www.youtube.com", "youtu.be", "m.youtube.com", "instagram.com", "x.com",
                          "twitter.com", "m.facebook.com", "fb.watch", "www.linkedin.com",
                          "old.reddit.com", "open.spotify.com", "www.amazon.in", "apps.apple.com",
                          "play.google.com", "example.com", "bücher.example", "sho.rt"])
_segment = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zs")), max_size=12)
_urls = st.builds(
    lambda scheme, host, path, query, fragment: f"{scheme}://{host}/{path}"
    + (f"?{query}" if query else "") + (f"#{fragment}" if fragment else ""),
    st.sampled_from(["https", "http"]), _hosts, _segment, _segment, _segment)
_store_urls = st.none() | st.sampled_from(["https://apps.apple.com/app/id1",
                                           "https://play.google.com/store/apps/details?id=a.b"])
_queries = st.sampled_from(["", "utm_source=a", "utm_source=a&utm_medium=b%20c", "x=1&utm_term=%3B%23",
                            "iab=1&utm_campaign=z"])


def _is_uri(url: str) -> bool:
    return url.isascii() and not any(ch in url for ch in ' "<>\\^`{|}') and \
        all(ch.isprintable() for ch in url)


@given(_urls, st.sampled_from(list(VISITORS.values())), _store_urls, _store_urls, _queries)
def test_every_plan_is_a_valid_url_with_a_web_fallback(url, visitor, ios_url, android_url, query):
    web = forward_utm(url, query)
    platform = detect_platform(url, ["sho.rt"])
    plan = plan_visit(visitor, platform, web, forward_utm(ios_url, query) if ios_url else None,
                      forward_utm(android_url, query) if android_url else None,
                      SHORT + ("?" + query if query else ""), escaped="iab=1" in query)
    assert plan.action in (R, I, A)
    for emitted in (plan.location, plan.app_url, plan.escape_url):
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


@given(_urls, st.sampled_from(list(VISITORS.values())), _queries)
def test_utm_forwarding_into_a_plan_is_idempotent(url, visitor, query):
    platform = detect_platform(url, ["sho.rt"])
    once = forward_utm(url, query)
    assert plan_visit(visitor, platform, forward_utm(once, query), None, None, SHORT) == \
        plan_visit(visitor, platform, once, None, None, SHORT)
