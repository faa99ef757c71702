"""The dashboard through the real app (TestClient): sign-in, sessions, CSRF, throttling,
one account never reaching another's things, forms answering in the API's words.

The browser end to end (Chromium, screenshots, axe-core) is tests/test_dashboard_browser.py.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from litestar.testing import TestClient

from shortlink.accounts import passwords
from shortlink.accounts import service as accounts
from tests.conftest import bearer, run_cli
from tests.support.dashboard import (
    PASSWORD,
    as_browser,
    create_link,
    csrf_of,
    field_error,
    make_account,
    post,
    sign_in,
    signed_in,
)
from tests.support.helpers import wait_for
from throwaway.live_server import LiveServer

pytestmark = pytest.mark.both_backends

OTHER_PASSWORD = "another good password"


@pytest.fixture
def make_client(make_client):
    """The app as a browser on the https short host sees it (the cookies are Secure there)."""

    def make(**overrides) -> TestClient:
        return as_browser(make_client(**overrides), "links_short_host" in overrides)

    return make


# Signing in and out


def test_signed_out_visitors_are_sent_to_a_sign_in_form_with_the_named_fields(client):
    response = client.get("/", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/login"
    page = client.get("/login")
    assert page.status_code == 200
    assert re.search(r'<label for="f-email">Email</label>', page.text)
    assert re.search(r'<label for="f-password">Password</label>', page.text)
    assert '<button type="submit">Sign in</button>' in page.text
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "style-src 'self'" in policy and "unsafe-inline" not in policy
    assert page.headers["cache-control"] == "no-store"
    for path in ("/links", "/keys", "/account", "/analytics", "/links/lnk_x/analytics"):
        assert client.get(path, follow_redirects=False).headers["location"] == "/login"


def test_sign_in_sets_a_hardened_session_cookie_with_a_new_id_each_time(make_client, conn):
    make_account(conn, "owner@example.com")
    client = make_client()  # the short host is https
    first = sign_in(client, "owner@example.com")
    assert first.status_code == 303 and first.headers["location"] == "/"
    cookie = next(value for value in first.headers.get_list("set-cookie") if value.startswith("sl_session="))
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Secure" in cookie
    old_token = client.cookies["sl_session"]
    assert client.get("/").status_code == 200
    # Only a hash of the token is stored.
    assert conn.execute("SELECT count(*) FROM dashboard_sessions WHERE token_hash = ?", (old_token,)).fetchone()[0] == 0
    assert sign_in(client, "owner@example.com").status_code == 303
    assert client.cookies["sl_session"] != old_token
    stale = TestClient(app=client.app, base_url="https://testserver.local", cookies={"sl_session": old_token})
    assert stale.get("/", follow_redirects=False).status_code == 303  # the previous session ended


def test_the_cookie_is_not_secure_on_a_plain_http_short_host(make_client, conn):
    make_account(conn, "owner@example.com")
    client = make_client(links_short_host="http://127.0.0.1:8000")
    response = sign_in(client, "owner@example.com")
    cookie = next(value for value in response.headers.get_list("set-cookie") if value.startswith("sl_session="))
    assert "HttpOnly" in cookie and "Secure" not in cookie


def test_a_wrong_email_and_a_wrong_password_get_the_same_answer(make_client, conn):
    make_account(conn, "owner@example.com")
    client = make_client()
    wrong_password = sign_in(client, "owner@example.com", "not the password")
    wrong_email = sign_in(client, "nobody@example.com", PASSWORD)
    assert wrong_password.status_code == wrong_email.status_code == 401
    message = "That e-mail address and password do not match an account."
    assert message in wrong_password.text and message in wrong_email.text
    assert "sl_session" not in client.cookies


def test_sign_in_is_throttled_per_account(make_client, conn):
    make_account(conn, "owner@example.com")
    client = make_client(dashboard_signins_per_minute_per_account=3)
    for _ in range(3):
        assert sign_in(client, "owner@example.com", "wrong password!").status_code == 401
    refused = sign_in(client, "Owner@example.com", PASSWORD)  # even the right password, any case
    assert refused.status_code == 429 and "Too many sign-in attempts" in refused.text
    assert "sl_session" not in client.cookies
    assert sign_in(client, "other@example.com", "whatever it is").status_code == 401  # other accounts are not held up


def test_sign_in_is_throttled_per_client_address(make_client, conn):
    client = make_client(dashboard_signins_per_minute_per_address=2)
    for number in range(2):
        assert sign_in(client, f"guess{number}@example.com", "wrong password!").status_code == 401
    assert sign_in(client, "guess9@example.com", "wrong password!").status_code == 429


def test_sign_out_ends_the_session_on_the_server(make_client, conn):
    client = signed_in(make_client, conn)
    token = client.cookies["sl_session"]
    response = post(client, "/logout")
    assert response.status_code == 303 and response.headers["location"] == "/login"
    replayed = TestClient(app=client.app, base_url="https://testserver.local", cookies={"sl_session": token})
    assert replayed.get("/links", follow_redirects=False).headers["location"] == "/login"
    assert conn.execute("SELECT count(*) FROM dashboard_sessions").fetchone()[0] == 0


def test_changing_the_password_signs_out_every_other_session(make_client, conn):
    laptop = signed_in(make_client, conn, dashboard_signins_per_minute_per_account=20)
    phone = TestClient(app=laptop.app, base_url="https://testserver.local")
    assert sign_in(phone, "owner@example.com").status_code == 303
    old_laptop_token = laptop.cookies["sl_session"]
    wrong = post(laptop, "/account/password", {"current": "nope", "password": OTHER_PASSWORD, "again": OTHER_PASSWORD})
    assert wrong.status_code == 400 and "not the account" in field_error(wrong.text, "current")
    short = post(laptop, "/account/password", {"current": PASSWORD, "password": "short", "again": "short"})
    assert field_error(short.text, "password") == "password: must be 10 to 256 characters"
    changed = post(
        laptop, "/account/password", {"current": PASSWORD, "password": OTHER_PASSWORD, "again": OTHER_PASSWORD}
    )
    assert changed.status_code == 303 and changed.headers["location"] == "/account?changed=1"
    assert laptop.cookies["sl_session"] != old_laptop_token
    assert laptop.get("/account").status_code == 200  # this browser stays signed in, on a new session
    assert phone.get("/account", follow_redirects=False).status_code == 303
    assert (
        TestClient(app=laptop.app, base_url="https://testserver.local", cookies={"sl_session": old_laptop_token})
        .get("/", follow_redirects=False)
        .status_code
        == 303
    )
    assert (
        sign_in(
            TestClient(app=laptop.app, base_url="https://testserver.local"), "owner@example.com", OTHER_PASSWORD
        ).status_code
        == 303
    )


def test_idle_and_absolute_expiry(make_client, conn):
    client = signed_in(make_client, conn, dashboard_idle_minutes=30, dashboard_max_days=1)
    assert client.get("/links").status_code == 200
    now_ms = int(time.time() * 1000)
    conn.execute("UPDATE dashboard_sessions SET seen_ms = ?", (now_ms - 31 * 60_000,))
    assert client.get("/links", follow_redirects=False).status_code == 303
    assert sign_in(client, "owner@example.com").status_code == 303
    conn.execute("UPDATE dashboard_sessions SET created_ms = ?", (now_ms - 86_400_000 - 1000,))
    assert client.get("/links", follow_redirects=False).status_code == 303


def test_the_cli_sets_a_password_creating_the_account_and_ends_its_sessions(storage, make_client, conn):
    stdin_flags = ("--password-stdin", "--db", storage)

    def set_password(password: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "shortlink", "account", "password", "--email", "cli@example.com", *stdin_flags],
            input=password + "\n",
            capture_output=True,
            text=True,
            timeout=300,
        )

    assert set_password("short").returncode == 1
    assert set_password(PASSWORD).returncode == 0
    row = conn.execute(
        "SELECT a.password_hash, s.is_active FROM accounts a JOIN subscriptions s ON s.account_id = a.id"
        " WHERE email = 'cli@example.com'"
    ).fetchone()
    # argon2id at RFC 9106's second recommendation (64 MiB, 3 passes, 4 lanes)
    assert row["password_hash"].startswith("$argon2id$v=19$m=65536,t=3,p=4$") and row["is_active"] == 1
    client = make_client()
    assert sign_in(client, "cli@example.com").status_code == 303
    assert set_password(OTHER_PASSWORD).returncode == 0
    assert client.get("/", follow_redirects=False).status_code == 303
    listed = run_cli("key", "list", "--email", "cli@example.com", "--db", storage)
    assert listed.returncode == 0  # the same account model as `key create`


def test_self_sign_up_is_off_by_default_and_makes_a_pro_account_when_on(make_client, conn):
    closed = make_client()
    assert closed.get("/signup", follow_redirects=False).headers["location"] == "/login"
    assert "/signup" not in closed.get("/login").text
    opened = make_client(dashboard_signup=True)
    form = opened.get("/signup")
    response = opened.post(
        "/signup",
        data={"email": "new@example.com", "password": PASSWORD, "csrf": csrf_of(form.text)},
        follow_redirects=False,
    )
    assert response.status_code == 303
    assert opened.get("/account").status_code == 200
    assert conn.execute("SELECT count(*) FROM accounts WHERE email = 'new@example.com'").fetchone()[0] == 1
    again = TestClient(app=opened.app, base_url="https://testserver.local")
    taken = again.post(
        "/signup",
        data={"email": "new@example.com", "password": OTHER_PASSWORD, "csrf": csrf_of(again.get("/signup").text)},
    )
    assert (
        taken.status_code == 400
        and field_error(taken.text, "email") == "email: already has an account: sign in instead"
    )


# CSRF


def test_state_changing_posts_need_this_sessions_token_and_our_origin(make_client, conn):
    client = signed_in(make_client, conn)
    body = {"originalUrl": "https://example.com/a"}
    assert client.post("/links", data=body, follow_redirects=False).status_code == 403
    assert client.post("/links", data={**body, "csrf": "0" * 64}, follow_redirects=False).status_code == 403
    other = signed_in(make_client, conn, "other@example.com")
    foreign_token = csrf_of(other.get("/").text)
    assert client.post("/links", data={**body, "csrf": foreign_token}, follow_redirects=False).status_code == 403
    cross_site = post(client, "/links", body, headers={"Origin": "https://evil.example"})
    assert cross_site.status_code == 403 and "This form has expired" in cross_site.text
    assert client.get("/links").text.count("example.com/a") == 0
    assert post(client, "/links", body, headers={"Origin": "https://testserver.local"}).status_code == 303


def test_the_sign_in_form_needs_its_own_token(make_client, conn):
    make_account(conn, "owner@example.com")
    client = make_client()
    forged = client.post("/login", data={"email": "owner@example.com", "password": PASSWORD}, follow_redirects=False)
    assert forged.status_code == 403 and "sl_session" not in client.cookies


# Links


def test_links_made_here_have_source_dashboard_and_show_in_the_table(make_client, conn, new_key):
    client = signed_in(make_client, conn)
    link_id = create_link(client, originalUrl="https://www.youtube.com/watch?v=dQw4w9WgXcQ", customCode="rick")
    key = new_key("owner@example.com")
    link = client.get(f"/api/v1/links/{link_id}", headers=bearer(key)).json()["data"]
    assert link["source"] == "DASHBOARD" and link["platform"] == "YOUTUBE"
    table = client.get("/links?search=rick").text
    assert "https://sho.rt/l/rick" in table and "YOUTUBE" in table and 'class="badge active"' in table
    assert "rick" not in client.get("/links?platform=SPOTIFY").text.split("</form>")[1]


def test_form_errors_are_shown_beside_the_field_in_the_apis_words(make_client, conn, auth):
    client = signed_in(make_client, conn)
    bad_url = post(client, "/links", {"originalUrl": "ftp://example.com/file"})
    api = client.post("/api/v1/links", json={"originalUrl": "ftp://example.com/file"}, headers=auth).json()
    assert bad_url.status_code == 400
    assert field_error(bad_url.text, "originalUrl") == api["error"]["message"]
    assert 'value="ftp://example.com/file"' in bad_url.text  # what was typed is kept
    reserved = post(client, "/links", {"originalUrl": "https://example.com", "customCode": "api"})
    assert field_error(reserved.text, "customCode") == "customCode: 'api' is a reserved word"
    past = post(client, "/links", {"originalUrl": "https://example.com", "expiresAt": "2001-01-01T00:00"})
    assert field_error(past.text, "expiresAt") == "expiresAt: must be in the future"
    link_id = create_link(client, originalUrl="https://example.com/x")
    too_long = post(client, f"/links/{link_id}", {"title": "t" * 201})
    assert too_long.status_code == 400 and field_error(too_long.text, "title").startswith("title: ")
    bad_qr = client.get(f"/links/{link_id}?color=ffffff&bgColor=ffffff")
    assert "contrast ratio" in field_error(bad_qr.text, "color")
    bad_range = client.get("/analytics?from=2026-13-01")
    assert bad_range.status_code == 400
    assert field_error(bad_range.text, "from") == "from: '2026-13-01' is not a calendar date"


def test_edit_pause_resume_and_delete(make_client, conn):
    client = signed_in(make_client, conn)
    link_id = create_link(client, originalUrl="https://example.com/e", customCode="edited")
    saved = post(
        client, f"/links/{link_id}", {"title": "A title", "expiresAt": "2099-01-01T10:30", "password": "open sesame"}
    )
    assert saved.status_code == 303
    page = client.get(f"/links/{link_id}").text
    assert "A title" in page and "2099-01-01 10:30 UTC" in page and 'class="badge password"' in page
    assert (
        post(client, f"/links/{link_id}", {"title": "A title", "expiresAt": "", "removePassword": "1"}).status_code
        == 303
    )
    page = client.get(f"/links/{link_id}").text
    # The year in its forms (the page's random tokens may hold the digits "2099" anywhere).
    assert 'class="badge password"' not in page and "2099-01-01" not in page
    assert post(client, f"/links/{link_id}/active", {"active": "false"}).status_code == 303
    assert "currently unavailable" in client.get("/l/edited").text  # the link cache forgot it at once
    assert 'class="badge paused"' in client.get("/links?state=paused").text
    assert post(client, f"/links/{link_id}/active", {"active": "true"}).status_code == 303
    assert client.get("/l/edited", follow_redirects=False).status_code == 302
    confirm = client.get(f"/links/{link_id}/delete")
    assert "cannot be undone" in confirm.text
    assert post(client, f"/links/{link_id}/delete").headers["location"] == "/links?deleted=1"
    assert client.get(f"/links/{link_id}").status_code == 404
    assert client.get("/l/edited", follow_redirects=False).status_code == 404


def test_qr_downloads_in_both_formats_with_the_apis_options(make_client, conn):
    import io

    import zxingcpp
    from PIL import Image

    client = signed_in(make_client, conn)
    link_id = create_link(client, originalUrl="https://example.com/q", customCode="qrcode")
    png = client.get(f"/links/{link_id}/qr?format=png&size=300&color=%23112233&margin=2&errorCorrection=H&download=1")
    assert png.headers["content-type"] == "image/png"
    assert png.headers["content-disposition"] == 'attachment; filename="qrcode.png"'
    image = Image.open(io.BytesIO(png.content))
    assert image.size == (300, 300)
    assert [result.text for result in zxingcpp.read_barcodes(image)] == ["https://sho.rt/l/qrcode"]
    svg = client.get(f"/links/{link_id}/qr?format=svg&download=1")
    assert svg.headers["content-type"].startswith("image/svg+xml") and b"<svg" in svg.content
    assert client.get(f"/links/{link_id}/qr?format=gif").status_code == 400


# Keys and the account


def test_keys_are_shown_once_used_and_revoked_at_the_next_request(make_client, conn):
    client = signed_in(make_client, conn)
    created = post(client, "/keys", {"name": "build server"}, page="/keys")
    key = re.search(r'value="(sl_live_[A-Za-z0-9]{32})"', created.text).group(1)
    assert "it will not be shown again" in created.text
    assert client.get("/api/v1/me", headers=bearer(key)).status_code == 200
    listing = client.get("/keys").text
    assert key not in listing and key[:12] in listing and "build server" in listing
    key_id = re.search(r'href="/keys/(key_\w+)/revoke"', listing).group(1)
    wait_for(  # "last used" is written in the background
        lambda: "never" not in re.search(r"build server.*?</tr>", client.get("/keys").text, re.S).group(0),
        10,
        "the key's last use to be shown",
    )
    assert "cannot be undone" in client.get(f"/keys/{key_id}/revoke").text
    assert post(client, f"/keys/{key_id}/revoke").headers["location"] == "/keys?revoked=1"
    assert client.get("/api/v1/me", headers=bearer(key)).status_code == 401


def test_the_account_page_says_what_an_inactive_subscription_means(make_client, conn):
    client = signed_in(make_client, conn)
    create_link(client, originalUrl="https://example.com/1")
    page = client.get("/account").text
    assert "owner@example.com" in page and "Pro, active" in page
    assert "60 per minute per key" in page and "1,000 per day (UTC); 1 used today" in page
    accounts.add_domain(conn, "owner@example.com", "go.brand.example")
    accounts.set_subscription(conn, "owner@example.com", False)
    page = client.get("/account").text
    assert "go.brand.example" in page
    assert "Your API keys get 403 Subscription required from the API" in page


# One account never reaches another's things


def test_no_dashboard_url_reaches_another_accounts_links_keys_or_analytics(make_client, conn, new_key):
    owner = signed_in(make_client, conn, "owner@example.com")
    link_id = create_link(owner, originalUrl="https://example.com/private", customCode="private")
    key_id = accounts.create_key(conn, "owner@example.com", "owner's key").key_id
    intruder = signed_in(make_client, conn, "intruder@example.com")
    for path in (
        f"/links/{link_id}",
        f"/links/{link_id}/delete",
        f"/links/{link_id}/qr?format=png",
        f"/links/{link_id}/analytics",
        f"/keys/{key_id}/revoke",
    ):
        response = intruder.get(path)
        assert response.status_code == 404, path
        assert "private" not in response.text and "owner" not in response.text
    for path, data in (
        (f"/links/{link_id}", {"title": "mine now"}),
        (f"/links/{link_id}/active", {"active": "false"}),
        (f"/links/{link_id}/delete", {}),
        (f"/keys/{key_id}/revoke", {}),
    ):
        assert post(intruder, path, data).status_code == 404, path
    for path in ("/links", "/links?search=private", "/analytics", "/keys"):
        text = intruder.get(path).text
        assert "example.com/private" not in text and key_id not in text, path
    link = owner.get(f"/links/{link_id}").text
    assert "mine now" not in link and 'class="badge active"' in link
    assert "revoked" not in owner.get("/keys").text


def test_every_page_sends_the_security_headers(make_client, conn):
    client = signed_in(make_client, conn)
    link_id = create_link(client, originalUrl="https://example.com/h")
    for path in ("/", "/links", "/links/new", f"/links/{link_id}", f"/links/{link_id}/delete", "/keys", "/account"):
        response = client.get(path)
        assert response.status_code == 200, path
        assert "unsafe-inline" not in response.headers["content-security-policy"]
        assert response.headers["x-frame-options"] == "DENY" and response.headers["cache-control"] == "no-store"
    for path in (f"/links/{link_id}/analytics", "/analytics?days=7", "/analytics?days=365"):
        assert client.get(path).status_code == 200, path
    assert client.get("/links/lnk_nothing").status_code == 404


def test_odd_filters_show_the_first_page_and_say_what_is_wrong(make_client, conn):
    client = signed_in(make_client, conn)
    for page_number in ("0", "-1", "x", "99999999999"):
        assert client.get(f"/links?page={page_number}").status_code == 200
    unknown = client.get("/links?platform=NOPE")
    assert field_error(unknown.text, "platform") == "platform: not a platform this service knows"


@pytest.mark.slow
def test_sign_in_throttling_reads_the_client_address_through_trusted_proxies(tmp_path):
    """A real server behind a trusted proxy (127.0.0.0/8): each forwarded client has its own
    bucket, and a forged X-Forwarded-For from an untrusted peer would be ignored."""
    server = LiveServer(
        tmp_path,
        network_trusted_proxies="127.0.0.0/8",
        dashboard_signins_per_minute_per_address="2",
    )
    server.start()
    try:
        with httpx.Client(base_url=server.base_url) as browser:

            def attempt(client_address: str) -> int:
                token = csrf_of(browser.get("/login").text)
                form = {"email": "nobody@example.com", "password": "wrong password!", "csrf": token}
                return browser.post("/login", data=form, headers={"X-Forwarded-For": client_address}).status_code

            assert [attempt("203.0.113.7") for _ in range(3)] == [401, 401, 429]
            assert attempt("203.0.113.8") == 401  # another client behind the same proxy
    finally:
        server.stop()


def test_a_preset_is_whole_utc_days_and_a_custom_range_follows_the_apis_rules(make_client, conn):
    client = signed_in(make_client, conn)
    first_day = (datetime.now(UTC).date() - timedelta(days=6)).isoformat()
    assert f"{first_day} 00:00 UTC to " in client.get("/analytics?days=7").text
    custom = client.get("/analytics?from=2026-01-01&to=2026-01-31").text
    assert "2026-01-01 00:00 UTC to 2026-01-31 23:59 UTC" in custom
    reversed_range = client.get("/analytics?from=2026-02-01&to=2026-01-01")
    assert reversed_range.status_code == 400 and field_error(reversed_range.text, "from").startswith("from: ")
    assert field_error(client.get("/analytics?days=999").text, "days") == "days: must be a whole number from 1 to 366"


def test_the_cli_asks_for_the_password_twice_on_a_terminal(storage, conn):
    pid, terminal = pty.fork()
    if pid == 0:  # the child: the real command, its terminal the pty
        os.execv(
            sys.executable,
            [
                sys.executable,
                "-m",
                "shortlink",
                "account",
                "password",
                "--email",
                "tty@example.com",
                "--db",
                storage,
            ],
        )
    output = b""
    for answer in (PASSWORD, PASSWORD):
        while b": " not in output.rsplit(b"\n", 1)[-1]:
            output += os.read(terminal, 1024)
        os.write(terminal, answer.encode() + b"\n")
        output = b""
    while True:
        try:
            chunk = os.read(terminal, 1024)
        except OSError:  # the child has exited
            break
        if not chunk:
            break
        output += chunk
    assert os.waitpid(pid, 0)[1] == 0
    assert PASSWORD.encode() not in output  # never echoed
    assert b"password set for tty@example.com" in output
    stored = conn.execute("SELECT password_hash FROM accounts WHERE email = 'tty@example.com'").fetchone()[0]
    assert passwords.verify_password(PASSWORD, stored)


def test_with_public_shortening_on_signed_out_visitors_get_its_form_and_people_their_dashboard(make_client, conn):
    make_account(conn, "owner@example.com")
    client = make_client(public_enabled=True, public_account="owner@example.com")
    signed_out = client.get("/", follow_redirects=False)
    assert signed_out.status_code == 200 and 'action="/shorten"' in signed_out.text
    assert sign_in(client, "owner@example.com").status_code == 303
    assert "<h1>Links</h1>" in client.get("/").text
