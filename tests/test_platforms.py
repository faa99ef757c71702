import pytest

from shortlink.links.platforms import Platform, detect_platform

OWN = {"sho.rt", "go.brand.example"}


@pytest.mark.parametrize("url, platform", [
    ("https://www.youtube.com/watch?v=dQw4w9WgXcQ", Platform.YOUTUBE),
    ("https://m.youtube.com/watch?v=x", Platform.YOUTUBE),
    ("https://music.youtube.com/watch?v=x", Platform.YOUTUBE),
    ("https://youtu.be/dQw4w9WgXcQ", Platform.YOUTUBE),
    ("HTTPS://WWW.YOUTUBE.COM/watch", Platform.YOUTUBE),
    ("https://www.instagram.com/p/abc/", Platform.INSTAGRAM),
    ("https://twitter.com/jack/status/20", Platform.TWITTER),
    ("https://x.com/jack", Platform.TWITTER),
    ("https://www.facebook.com/zuck", Platform.FACEBOOK),
    ("https://m.facebook.com/zuck", Platform.FACEBOOK),
    ("https://fb.com/zuck", Platform.FACEBOOK),
    ("https://fb.watch/abc", Platform.FACEBOOK),
    ("https://www.linkedin.com/in/someone", Platform.LINKEDIN),
    ("https://www.reddit.com/r/python", Platform.REDDIT),
    ("https://redd.it/abc", Platform.REDDIT),
    ("https://open.spotify.com/track/abc", Platform.SPOTIFY),
    ("https://spotify.link/abc", Platform.SPOTIFY),
    ("https://www.amazon.com/dp/B000", Platform.AMAZON),
    ("https://www.amazon.co.uk/dp/B000", Platform.AMAZON),
    ("https://amazon.de/dp/B000", Platform.AMAZON),
    ("https://amzn.to/abc", Platform.AMAZON),
    ("https://a.co/d/abc", Platform.AMAZON),
    ("https://apps.apple.com/app/id123", Platform.APPSTORE),
    ("https://itunes.apple.com/app/id123", Platform.APPSTORE),
    ("https://play.google.com/store/apps/details?id=com.x", Platform.PLAYSTORE),
    ("https://sho.rt/l/abc", Platform.SHORTLINK),
    ("https://go.brand.example/l/abc", Platform.SHORTLINK),
    ("https://www.youtube.com/shorts/abc123", Platform.YOUTUBE),
    ("https://youtube.com/@channel", Platform.YOUTUBE),
    ("https://mobile.twitter.com/jack", Platform.TWITTER),
    ("https://old.reddit.com/r/python", Platform.REDDIT),
    ("https://uk.linkedin.com/in/someone", Platform.LINKEDIN),
    ("https://www.amazon.co.jp/dp/B000", Platform.AMAZON),
    ("https://www.amazon.com.br/dp/B000", Platform.AMAZON),
    ("http://WWW.INSTAGRAM.COM/reel/xyz", Platform.INSTAGRAM),
    ("https://example.com/", Platform.OTHER),
    ("https://github.com/litestar-org/litestar", Platform.OTHER),
])
def test_hosts_map_to_their_platform(url, platform):
    assert detect_platform(url, OWN) is platform


@pytest.mark.parametrize("url", [
    "https://youtube.com.evil.io/watch", "https://evilyoutube.com/", "https://notx.com/",
    "https://amazon.evil.io/", "https://spotify.com.attacker.net/", "https://google.com/",
    "https://play.google.com.evil.io/", "https://sho.rt.evil.io/",
])
def test_look_alike_hosts_are_other(url):
    assert detect_platform(url, OWN) is Platform.OTHER
