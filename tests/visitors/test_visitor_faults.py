"""Faults found by probing the running service's visitor route: whatever Host, Cookie or
path a client sends, the answer is a page, never a 500."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from shortlink.accounts import service as accounts
from shortlink.visits import password_entry
from tests.conftest import bearer
from tests.support.asgi import call_app, http_scope
from tests.support.visitors import (
    ANDROID_CHROME,
    DESKTOP,
    FACEBOOK_ANDROID,
    FACEBOOK_BOT,
    INSTAGRAM_IOS,
    IPHONE,
    make_link,
)

SERVICE_HOST = "https://127.0.0.1:8811"
PEER = "203.0.113.9"


def asgi_request(
    client: TestClient, method: str, path: str, headers: list[tuple[bytes, bytes]], body: bytes = b""
) -> tuple[int, dict[bytes, bytes], bytes]:
    """One request to the running app exactly as an ASGI server hands it over, from PEER."""
    scope = http_scope(method, path, headers, client=(PEER, 50000), server=("127.0.0.1", 8811), scheme="http")
    with client.portal() as portal:
        return portal.call(call_app, client.app, scope, body)


@pytest.fixture
def served(make_client, new_key):
    """The service on 127.0.0.1:8811 with the extra domain go.example, and a link "abc"."""
    client = make_client(links_short_host=SERVICE_HOST, links_domains=["go.example"])
    make_link(client, bearer(new_key()), customCode="abc", originalUrl="https://example.com/page")
    return client


@pytest.mark.parametrize("host", ["[127.0.0.1]", "[127.0.0.1", "[127.0.0.1]:8811", "[go.example]", "[::1"])
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_bracketed_host_gets_the_page_with_the_configured_short_url(served, host, method):
    # An in-app visitor's page offers the short URL in the real browser, built on the
    # request's host when it is ours; brackets around anything but an IPv6 address are not.
    response = served.request(
        method, "/l/abc", headers={"Host": host, "User-Agent": INSTAGRAM_IOS}, follow_redirects=False
    )
    assert response.status_code == 200
    assert "x-safari-https://127.0.0.1:8811/l/abc?iab=1" in response.text and host not in response.text


@pytest.mark.parametrize("expiry", [b"\xb2\xb3", b"9" * 5000, b"\xd9\xa3" * 10, b"1" * 13])
def test_a_forged_password_cookie_gets_the_form(make_client, new_key, expiry):
    # Raw bytes: the test client would re-encode "\xb2\xb3" (superscript digits once
    # read as Latin-1) as UTF-8.
    client = make_client()
    code = make_link(client, bearer(new_key()), password="open sesame")["shortCode"]
    cookie = password_entry.cookie_name(code).encode() + b"=" + expiry + b".x"
    status, _, body = asgi_request(
        client, "GET", f"/l/{code}", [(b"user-agent", DESKTOP.encode()), (b"cookie", cookie)]
    )
    assert status == 200 and b'name="password"' in body


def test_forged_expiry_digits_are_refused_without_an_error():
    secret = b"s" * 32
    for expiry in ("\xb2\xb3", "9" * 5000, "\u0663" * 10, "1" * 13, "+1", " 1"):
        assert not password_entry.cookie_is_valid(secret, "lnk_a", "hash", f"{expiry}.x", now_s=1000)


@pytest.mark.parametrize("path", ["/l/a/b", "/l/%3Cscript%3Ealert(1)%3C/script%3E", "/l/abc/x/y", "/l/"])
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_visitor_path_that_is_no_code_gets_the_not_found_page_without_the_path(served, path, method):
    response = served.request(method, path, headers={"User-Agent": DESKTOP})
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html") and "not found" in response.text.lower()
    assert "script" not in response.text and "a/b" not in response.text and "abc/x" not in response.text
    assert response.headers["cache-control"] == "no-store"


def test_visitors_behind_a_proxy_writing_ports_or_junk_keep_buckets_of_their_own(make_client, new_key):
    # The peer PEER is the trusted proxy. Had "ip:port" or "unknown" hops fallen back to
    # its address, these visitors would share one bucket and lock each other out.
    client = make_client(limits_password_attempts_per_minute=2, network_trusted_proxies=["203.0.113.0/24"])
    code = make_link(client, bearer(new_key()), password="open sesame")["shortCode"]

    def attempt(forwarded_for: bytes) -> int:
        headers = [
            (b"user-agent", DESKTOP.encode()),
            (b"content-type", b"application/x-www-form-urlencoded"),
            (b"x-forwarded-for", forwarded_for),
        ]
        return asgi_request(client, "POST", f"/l/{code}", headers, b"password=wrong")[0]

    visitors = [b"198.51.100.1:5678", b"198.51.100.2:5678, unknown", b"[2001:db8::3]:443", b"198.51.100.4, junk"]
    assert [[attempt(visitor) for _ in range(2)] for visitor in visitors] == [[403, 403]] * len(visitors)
    assert attempt(b"198.51.100.1:9999") == 429  # the same visitor from another port


# Fragments the faults above were made of, so that generated values combine them.
PIECES = [b"[", b"]", b":", b"8811", b"127.0.0.1", b"::1", b"go.example", b"brand.example", b".", b",", b" ", b"%"]
PIECES += [b"unknown", b"1.2.3.4", b"2001:db8::1", b"\xb2\xb3", b"\xd9\xa3", b"9" * 5000, b"x", b"=", b";", b"\xff"]
AGENTS = [DESKTOP, IPHONE, INSTAGRAM_IOS, ANDROID_CHROME, FACEBOOK_ANDROID, FACEBOOK_BOT, ""]


def header_value() -> st.SearchStrategy[bytes]:
    """What an HTTP server hands over as a header value: any bytes but CR, LF and NUL
    (which HTTP/1.1 parsers refuse), built of PIECES or of arbitrary bytes."""
    allowed = st.binary(max_size=40).map(lambda raw: bytes(b for b in raw if b not in b"\r\n\x00"))
    return st.one_of(st.lists(st.sampled_from(PIECES), max_size=6).map(b"".join), allowed)


def joined(*parts: list[bytes]) -> st.SearchStrategy[bytes]:
    return st.tuples(*(st.sampled_from(choices) for choices in parts)).map(b"".join)


# Hosts of ours and not, in and out of brackets, with good and bad ports.
HOSTS = joined(
    [b"", b"["],
    [b"127.0.0.1", b"go.example", b"brand.example", b"::1", b"sho.rt", b""],
    [b"", b"]", b"."],
    [b"", b":8811", b":", b":x"],
)
# The password link's cookie with expiries of every kind of digit and length.
COOKIES = joined(
    [password_entry.cookie_name("pw1").encode() + b"=", b"a=b; " + password_entry.cookie_name("pw1").encode() + b"="],
    [b"4102444800", b"\xb2\xb3", b"\xd9\xa3" * 10, b"9" * 5000, b"", b"-1", b"1e9"],
    [b".", b"", b".."],
    [b"x", b"0" * 64, b""],
)
FORWARDED = joined([b"", b"1.2.3.4, ", b"unknown, "], [b"198.51.100.7", b"198.51.100.7:5678", b"[2001:db8::1]:443"])


@pytest.fixture
def fuzzed(make_client, new_key, conn):
    """The service behind a trusted proxy (the peer), with a connected custom domain and
    three kinds of link: a YouTube one (app pages), an OTHER one, a password-protected one."""
    auth = bearer(new_key())
    accounts.add_domain(conn, "owner@example.com", "brand.example")
    client = make_client(
        links_short_host=SERVICE_HOST,
        links_domains=["go.example"],
        network_trusted_proxies=["203.0.113.0/24"],
        network_country_header="CF-IPCountry",
    )
    make_link(client, auth, customCode="yt1", originalUrl="https://www.youtube.com/watch?v=dQw4w9WgXcQ")
    make_link(client, auth, customCode="web", originalUrl="https://example.com/page")
    make_link(client, auth, customCode="pw1", password="open sesame")
    return client


@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],  # a failure is reported as found: shrinking takes minutes
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    method=st.sampled_from(["GET", "HEAD", "POST"]),
    code=st.sampled_from(["yt1", "web", "pw1", "nope"]),
    host=st.one_of(HOSTS, header_value()),
    cookie=st.one_of(COOKIES, header_value()),
    agent=st.one_of(st.sampled_from([agent.encode() for agent in AGENTS]), header_value()),
    forwarded_for=st.one_of(FORWARDED, header_value()),
    body=st.one_of(st.just(b"password=open+sesame"), header_value()),
)
@example("GET", "yt1", b"[127.0.0.1]", b"", INSTAGRAM_IOS.encode(), b"", b"")
@example("POST", "yt1", b"[go.example]", b"", INSTAGRAM_IOS.encode(), b"", b"")
@example("GET", "pw1", b"", password_entry.cookie_name("pw1").encode() + b"=\xb2\xb3.x", DESKTOP.encode(), b"", b"")
@example("GET", "pw1", b"", password_entry.cookie_name("pw1").encode() + b"=" + b"9" * 5000, DESKTOP.encode(), b"", b"")
def test_no_header_cookie_or_body_a_visitor_sends_is_a_server_error(
    fuzzed, caplog, method, code, host, cookie, agent, forwarded_for, body
):
    headers = [
        (b"host", host),
        (b"cookie", cookie),
        (b"user-agent", agent),
        (b"x-forwarded-for", forwarded_for),
        (b"cf-ipcountry", agent[:2]),
        (b"content-type", b"application/x-www-form-urlencoded"),
    ]
    status, response_headers, _ = asgi_request(fuzzed, method, f"/l/{code}", headers, body)
    # 400: a header block over its size limit, or a Host that is no host at all.
    assert status in {200, 302, 303, 400, 403, 404, 429}, status
    assert status == 400 or response_headers[b"cache-control"] == b"no-store"
    assert "unhandled error" not in caplog.text
