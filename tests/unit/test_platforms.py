import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from shortlink.application.hosts import Hosts
from shortlink.links.platforms import PLATFORM_OF_HOST, WITH_SUBDOMAINS, Platform, detect_platform, host_name

OWN_NAMES = ["sho.rt", "go.brand.example"]
OWN = Hosts("", OWN_NAMES).is_ours


@pytest.mark.parametrize(
    "url, platform",
    [
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
        # Amazon by rule: amazon.<tld>, amazon.co.<cc>, amazon.com.<cc>, with any subdomain.
        ("https://www.amazon.us/dp/B000", Platform.AMAZON),
        ("https://www.amazon.sg/dp/B000", Platform.AMAZON),
        ("https://www.amazon.ae/dp/B000", Platform.AMAZON),
        ("https://amazon.pl/", Platform.AMAZON),
        ("https://www.amazon.co.za/dp/B000", Platform.AMAZON),
        ("https://www.amazon.com.mx/dp/B000", Platform.AMAZON),
        ("https://www.amazon.com.au/dp/B000", Platform.AMAZON),
        ("https://smile.amazon.de/dp/B000", Platform.AMAZON),
        ("https://smile.amazon.co.uk/dp/B000", Platform.AMAZON),
        ("https://m.amazon.com/dp/B000", Platform.AMAZON),
        ("https://music.amazon.fr/albums/B000", Platform.AMAZON),
        ("https://AMAZON.DE./dp/B000", Platform.AMAZON),
        ("https://amazon.de:443/dp/B000", Platform.AMAZON),
        # The service's own hosts, whatever their spelling: SHORTLINK, pages other than /l/ too.
        ("https://sho.rt/", Platform.SHORTLINK),
        ("https://www.sho.rt/about", Platform.SHORTLINK),
        ("https://SHO.RT./l/abc", Platform.SHORTLINK),
        ("https://sho.rt:8443/l/abc", Platform.SHORTLINK),
        ("https://www.go.brand.example/pricing", Platform.SHORTLINK),
        ("https://Go.Brand.Example./", Platform.SHORTLINK),
    ],
)
def test_hosts_map_to_their_platform(url, platform):
    assert detect_platform(url, OWN) is platform


@pytest.mark.parametrize(
    "url",
    [
        "https://youtube.com.evil.io/watch",
        "https://evilyoutube.com/",
        "https://notx.com/",
        "https://amazon.evil.io/",
        "https://spotify.com.attacker.net/",
        "https://google.com/",
        "https://play.google.com.evil.io/",
        "https://sho.rt.evil.io/",
        "https://amazon.com.evil.io/",
        "https://www.amazon.co.uk.evil.io/",
        "https://amazon.evil.io.com/",
        "https://notamazon.com/",
        "https://amazon.c0m/",
        "https://amazon.co.evil/",
        "https://amazon.com.b/",
        "https://amazon/",
        "https://amazon-shop.de/",
        "https://smile.amazon.evil.io/",
        "https://amazon.de.evil.io/",
        "https://evilsho.rt/",
        "https://sho.rt.example/",
        "https://brand.example/",
    ],
)
def test_look_alike_hosts_are_other(url):
    assert detect_platform(url, OWN) is Platform.OTHER


@pytest.mark.parametrize(
    ("own_hosts", "url"),
    [
        ({"go.brand.example:8443"}, "https://go.brand.example/"),  # [links] domains may carry a port
        ({"GO.BRAND.EXAMPLE."}, "https://go.brand.example/"),
        ({"www.go.brand.example"}, "https://go.brand.example/"),
        ({"go.brand.example"}, "https://www.go.brand.example/"),
        ({"bücher.example"}, "https://xn--bcher-kva.example/"),  # IDNs compare in punycode
        ({"xn--bcher-kva.example"}, "https://BÜCHER.example/"),
        ({"[::1]:8000"}, "http://[::1]/"),
    ],
)
def test_own_hosts_are_compared_as_host_names(own_hosts, url):
    assert detect_platform(url, Hosts("", own_hosts).is_ours) is Platform.SHORTLINK
    assert detect_platform(url) is not Platform.SHORTLINK


# Host labels as DNS allows them: letters, digits, inner hyphens.
LABEL = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,14}[a-z0-9])?", fullmatch=True)
PLATFORM_HOSTS = sorted(
    {
        *PLATFORM_OF_HOST,
        *WITH_SUBDOMAINS,
        "amazon.com",
        "amazon.de",
        "amazon.co.uk",
        "amazon.com.br",
        "smile.amazon.de",
        "m.youtube.com",
        *OWN_NAMES,
    }
)


@given(
    labels=st.lists(st.text(max_size=12), max_size=5),
    scheme=st.sampled_from(["https://", "http://", "HTTP://", "", "//", "ftp://", "https:///"]),
    rest=st.text(max_size=12),
    own=st.lists(st.text(max_size=12), max_size=3),
)
@settings(max_examples=300, deadline=None)
def test_any_host_of_any_labels_gets_a_platform(labels, scheme, rest, own):
    # Any text: dots, brackets, colons, non-ASCII, labels too long for IDNA.
    is_ours = Hosts("", own).is_ours
    assert isinstance(detect_platform(scheme + ".".join(labels) + rest, is_ours), Platform)
    assert isinstance(detect_platform(".".join(labels), is_ours), Platform)


@given(host=st.sampled_from(PLATFORM_HOSTS), label=LABEL)
@settings(max_examples=300, deadline=None)
def test_a_platform_host_followed_by_other_labels_is_other(host, label):
    assume(label != "amazon")  # *.amazon.io is an Amazon host by the amazon.<tld> rule
    assert detect_platform(f"https://{host}.{label}.io/", OWN) is Platform.OTHER
    assert detect_platform(f"https://{host.upper()}.{label}.io./", OWN) is Platform.OTHER


@given(labels=st.lists(LABEL, min_size=0, max_size=3), base=st.sampled_from([*PLATFORM_HOSTS, "example.com", ""]))
@settings(max_examples=300, deadline=None)
def test_case_www_and_a_trailing_dot_do_not_change_the_platform(labels, base):
    host = ".".join([*labels, base] if base else labels)
    assume(host and not host.startswith("www."))
    platform = detect_platform(f"https://{host}/path", OWN)
    for variant in (host.upper(), f"www.{host}", f"{host}.", f"WWW.{host.upper()}.", f"{host}:8443"):
        assert detect_platform(f"https://{variant}/path", OWN) is platform, variant


@pytest.mark.parametrize("host", ["[127.0.0.1]", "[127.0.0.1", "[127.0.0.1]:8811", "[go.example]", "[::1", "[v1.x]"])
def test_brackets_around_anything_but_an_ipv6_address_match_no_host(host):
    # No URL parser accepts these, so none may pass for one of the service's own hosts.
    assert not Hosts("", ["127.0.0.1:8811", "go.example", "::1"]).is_ours(host)
    assert host_name("[::1]:8811") == host_name("[::1]") == "::1"
