"""How a destination's host is split for the visitor pages."""

from __future__ import annotations

import pytest

from shortlink.pages.destination import display_host


@pytest.mark.parametrize(
    ("url", "subdomains", "registrable", "ascii"),
    [
        ("https://www.example.co.uk/a?b", "www.", "example.co.uk", "www.example.co.uk"),
        ("https://example.com", "", "example.com", "example.com"),
        ("https://user.github.io/repo", "", "user.github.io", "user.github.io"),  # a private suffix
        ("https://a.b.example.com:8443/", "a.b.", "example.com", "a.b.example.com:8443"),
        # Internationalised names: Unicode for reading, punycode as DNS sees it.
        ("https://xn--mnchen-3ya.de/", "", "münchen.de", "xn--mnchen-3ya.de"),
        ("https://www.münchen.de/", "www.", "münchen.de", "www.xn--mnchen-3ya.de"),
        ("https://xn--pple-43d.com/", "", "\u0430pple.com", "xn--pple-43d.com"),
        ("http://127.0.0.1:8000/x", "", "127.0.0.1", "127.0.0.1:8000"),
        ("http://[::1]/x", "", "[::1]", "[::1]"),
        ("https://localhost/", "", "localhost", "localhost"),
        ("https://xn--broken!.com/", "", "xn--broken!.com", "xn--broken!.com"),  # shown as written
    ],
)
def test_hosts_are_split_into_subdomains_and_the_registrable_name(url, subdomains, registrable, ascii):
    host = display_host(url)
    assert host is not None
    assert (host.subdomains, host.registrable, host.ascii) == (subdomains, registrable, ascii)


def test_punycode_is_offered_only_when_it_reads_differently():
    assert not display_host("https://www.example.com:81/").differs
    assert display_host("https://xn--pple-43d.com/").differs
    assert display_host("https://münchen.de/").unicode == "münchen.de"


def test_scheme_and_hostless_urls():
    assert display_host("https://example.com").secure and not display_host("http://example.com").secure
    assert display_host("mailto:someone@example.com") is None
    assert display_host("http://example.com:99999/") is None  # an impossible port
