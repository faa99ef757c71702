"""Public shortening: the rules, the configuration, and GET / + POST /shorten through the real app."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from shortlink.config import ConfigError
from shortlink.errors import ValidationError
from shortlink.http.public import CSRF_COOKIE
from shortlink.links.public import blocked_hosts, blocking_entry, refuse_for_public
from shortlink.web.asgi import create_app
from tests.support.visitors import FACEBOOK_BOT, IPHONE

OWNER = "owner@example.com"

# rules


def test_a_blocked_host_covers_itself_and_its_subdomains_in_any_spelling():
    blocked = blocked_hosts(["Evil.example", "bücher.example.", "1.2.3.4"])
    for host in ["evil.example", "EVIL.example.", "a.b.evil.example", "evil.example:8080", "xn--bcher-kva.example"]:
        assert blocking_entry(host, blocked) is not None, host
    assert blocking_entry("1.2.3.4", blocked) == "1.2.3.4"
    for host in ["notevil.example", "evil.example.org", "example", "2.3.4"]:
        assert blocking_entry(host, blocked) is None, host


def test_public_links_may_not_lead_to_the_service_or_a_blocked_host():
    blocked = blocked_hosts(["evil.example"])

    def is_ours(host):
        return host == "sho.rt"

    refuse_for_public("url", "https://fine.example/x", is_ours, blocked)
    with pytest.raises(ValidationError, match=r"^url: is already a link of this service"):
        refuse_for_public("url", "https://sho.rt/l/abc", is_ours, blocked)
    with pytest.raises(ValidationError, match=r"^url: leads to evil\.example, which this service does not link to"):
        refuse_for_public("url", "https://www.evil.example/x", is_ours, blocked)


# configuration


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"public_enabled": True}, r"\[public\] account: must be the email"),
        ({"public_blocked_hosts": ["https://evil.example/"]}, r"\[public\] blocked_hosts: 'https://evil.example/'"),
        ({"public_links_per_hour": 0}, r"\[public\] links_per_hour: must be greater than 0"),
        ({"public_expire_days": 0}, r"\[public\] expire_days: must be greater than 0"),
        ({"public_expire_days": 366}, r"\[public\] expire_days: must be at most 365"),
    ],
)
def test_bad_public_settings_stop_start_up_in_one_line(make_config, overrides, message):
    with pytest.raises(ConfigError, match=message):
        make_config(**overrides)


def test_an_unknown_public_account_stops_start_up_in_one_line(make_config):
    with pytest.raises(ConfigError, match=r"\[public\] account: no account with email 'nobody@example.com'"):
        create_app(make_config(public_enabled=True, public_account="nobody@example.com"))


# the pages


def public_client(make_client, **overrides):
    client = make_client(public_enabled=True, public_account=OWNER, **overrides)
    # Over https, as the short host is: the form's cookie is Secure.
    client.base_url = "https://testserver.local"
    return client


@pytest.fixture
def public(make_client, api_key):
    return public_client(make_client, public_links_per_hour=3)


def form_token(response) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', response.text).group(1)


def shorten(client, url, ua=IPHONE, **headers):
    token = form_token(client.get("/", headers={"User-Agent": ua}))
    return client.post("/shorten", data={"url": url, "csrf": token}, headers={"User-Agent": ua, **headers})


def all_links(client, auth):
    return client.get("/api/v1/links?limit=100", headers=auth).json()["data"]


def test_disabled_by_default(client):
    assert client.get("/", follow_redirects=False).headers["location"] == "/login"  # the dashboard's sign-in
    assert client.post("/shorten", data={"url": "https://example.com"}).status_code == 404


def test_the_form_makes_an_expiring_public_link_of_the_operators_account(public, auth):
    form = public.get("/", headers={"User-Agent": IPHONE})
    assert form.status_code == 200
    assert '<label for="url">Long URL</label>' in form.text
    assert "default-src 'none'" in form.headers["content-security-policy"]
    cookie = form.headers["set-cookie"]
    assert f"{CSRF_COOKIE}={form_token(form)}" in cookie
    assert "HttpOnly" in cookie and "samesite=strict" in cookie.lower() and "Secure" in cookie
    response = shorten(public, "https://example.com/a/long/path?x=1")
    assert response.status_code == 200, response.text
    [link] = all_links(public, auth)
    assert f'value="{link["shortUrl"]}"' in response.text
    assert 'src="data:image/svg+xml;base64,' in response.text  # the QR code
    data = public.get(f"/api/v1/links/{link['id']}", headers=auth).json()["data"]
    assert (data["source"], data["originalUrl"], data["isPasswordProtected"]) == (
        "PUBLIC",
        "https://example.com/a/long/path?x=1",
        False,
    )
    expires = datetime.fromisoformat(data["expiresAt"].replace("Z", "+00:00"))
    assert abs(expires - (datetime.now(UTC) + timedelta(days=30))) < timedelta(minutes=5)
    assert re.fullmatch(r"[A-Za-z0-9]{6}", data["shortCode"])  # a random code, never chosen


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("", "This URL is missing"),
        ("ftp://example.com/file", "This URL must be an http or https URL"),
        ("https://evil.com\\@www.youtube.com/", "This URL must not contain a backslash"),
        ("https://sho.rt/l/abc", "This URL is already a link of this service"),
        ("https://cdn.blocked.example/x", "This URL leads to blocked.example, which this service does not link to"),
    ],
)
def test_refused_urls_get_the_form_with_the_reason(make_client, api_key, auth, url, reason):
    client = public_client(make_client, public_blocked_hosts=["blocked.example"])
    response = shorten(client, url)
    assert response.status_code == 400
    assert f'<p class="error" id="url-error" role="alert">{reason}' in response.text
    assert 'aria-invalid="true"' in response.text
    assert all_links(client, auth) == []


def test_a_bot_or_previewer_gets_the_form_and_no_link(public, auth):
    for ua in [FACEBOOK_BOT, "curl/8.5.0", ""]:
        response = shorten(public, "https://example.com/", ua=ua)
        assert response.status_code == 200 and 'name="url"' in response.text
        assert "Your short link" not in response.text
    assert all_links(public, auth) == []


def test_a_post_without_the_forms_token_makes_nothing(public, auth):
    public.get("/")  # the cookie is set
    for data in [{"url": "https://example.com/"}, {"url": "https://example.com/", "csrf": "x" * 43}]:
        response = public.post("/shorten", data=data)
        assert response.status_code == 403
        assert "The form had expired" in response.text
    public.cookies.clear()
    response = public.post("/shorten", data={"url": "https://example.com/", "csrf": "y" * 43})
    assert response.status_code == 403
    assert all_links(public, auth) == []


def test_an_address_over_its_hourly_limit_gets_a_429_page(public, auth):
    for n in range(3):
        assert shorten(public, f"https://example.com/{n}").status_code == 200
    response = shorten(public, "https://example.com/over")
    assert response.status_code == 429
    retry_after = int(response.headers["retry-after"])
    assert 0 < retry_after <= 3600 / 3 + 1
    assert "Too many links for now. 3 links an hour from one address." in response.text
    assert len(all_links(public, auth)) == 3
    # Refused URLs spend nothing: the limit counts links.
    assert shorten(public, "ftp://example.com").status_code == 400


def test_a_forwarded_for_header_from_an_untrusted_peer_does_not_split_the_limit(public):
    for n in range(3):
        assert shorten(public, f"https://example.com/{n}", **{"X-Forwarded-For": f"203.0.113.{n}"}).status_code == 200
    assert shorten(public, "https://example.com/x", **{"X-Forwarded-For": "198.51.100.9"}).status_code == 429
