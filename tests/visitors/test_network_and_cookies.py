import ipaddress

import pytest

from shortlink.client_address import client_ip
from shortlink.visits import password_entry

PROXIES = [ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("10.0.0.0/8")]


@pytest.mark.parametrize(
    ("peer", "forwarded", "trusted", "expected"),
    [
        ("203.0.113.9", None, PROXIES, "203.0.113.9"),
        ("203.0.113.9", "1.2.3.4", PROXIES, "203.0.113.9"),  # untrusted peer: header ignored
        ("203.0.113.9", "1.2.3.4", [], "203.0.113.9"),  # no proxies configured
        ("127.0.0.1", "198.51.100.7", PROXIES, "198.51.100.7"),
        ("127.0.0.1", "6.6.6.6, 198.51.100.7", PROXIES, "198.51.100.7"),  # forged left part ignored
        ("127.0.0.1", "198.51.100.7, 10.1.2.3", PROXIES, "198.51.100.7"),  # through two proxies
        ("127.0.0.1", "garbage, 10.1.2.3", PROXIES, "10.1.2.3"),
        ("127.0.0.1", "10.0.0.1, 10.0.0.2", PROXIES, "10.0.0.1"),
        ("::1", "2001:db8::1", [ipaddress.ip_network("::1/128")], "2001:db8::1"),
        # Ports, as some proxies write them, and hops that are no address, skipped.
        ("127.0.0.1", "198.51.100.7:5678", PROXIES, "198.51.100.7"),
        ("127.0.0.1", "[2001:db8::7]:443, 10.0.0.1:80", PROXIES, "2001:db8::7"),
        ("127.0.0.1", "[2001:db8::7]", PROXIES, "2001:db8::7"),
        ("127.0.0.1", "198.51.100.7, unknown", PROXIES, "198.51.100.7"),
        ("127.0.0.1", "198.51.100.7, , _hidden, 10.0.0.1", PROXIES, "198.51.100.7"),
        ("127.0.0.1", "unknown", PROXIES, "127.0.0.1"),  # nothing better than the proxy
        ("127.0.0.1", "1.2.3.4:x, [::1, 1:2", PROXIES, "127.0.0.1"),
    ],
)
def test_client_ip(peer, forwarded, trusted, expected):
    assert client_ip(peer, forwarded, trusted) == expected


def test_password_cookie_is_bound_to_link_password_and_time():
    secret = b"s" * 32
    value = password_entry.make_cookie_value(secret, "lnk_a", "hash1", now_s=1000)
    assert password_entry.cookie_is_valid(secret, "lnk_a", "hash1", value, now_s=1001)
    assert not password_entry.cookie_is_valid(secret, "lnk_b", "hash1", value, now_s=1001)
    assert not password_entry.cookie_is_valid(secret, "lnk_a", "hash2", value, now_s=1001)
    assert not password_entry.cookie_is_valid(b"t" * 32, "lnk_a", "hash1", value, now_s=1001)
    assert not password_entry.cookie_is_valid(
        secret, "lnk_a", "hash1", value, now_s=1000 + password_entry.REMEMBER_SECONDS + 1
    )
    for forged in ["", "x", "9999999999.abc", value.replace(".", ".0"), None]:
        assert not password_entry.cookie_is_valid(secret, "lnk_a", "hash1", forged, now_s=1001)


def test_cookie_names_differ_per_code_and_are_header_safe():
    assert password_entry.cookie_name("abc") != password_entry.cookie_name("abd")
    assert password_entry.cookie_name("a-b_c").isascii() and ";" not in password_entry.cookie_name("x;y")
