"""Hardening, each finding through the real app or real processes: what an attacker or a
new user tried that did not hold, and now does."""

from __future__ import annotations

import re
import threading
import time
from datetime import UTC, datetime

import httpx
import pytest
from litestar.testing import TestClient

from shortlink.accounts import service as accounts
from shortlink.accounts import sessions
from shortlink.bio.schema import SavePage
from shortlink.links import service as link_service
from shortlink.links.schema import CreateLink
from shortlink.storage import connect, transaction
from shortlink.storage import sessions as session_store
from shortlink.visits import password_entry
from tests.conftest import bearer, run_cli
from tests.support.dashboard import PASSWORD, as_browser, csrf_of, make_account, password_hash, sign_in
from tests.support.visitors import DESKTOP, FACEBOOK_BOT, IPHONE
from throwaway.live_server import LiveServer

OTHER_PASSWORD = "another good password"


@pytest.fixture
def make_client(make_client):
    """The app as a browser on the https short host sees it (the cookies are Secure there)."""

    def make(**overrides) -> TestClient:
        return as_browser(make_client(**overrides), "links_short_host" in overrides)

    return make


# 1 and 8: sign-in limits group an IPv6 /64, and guessing from one address locks nobody else out


@pytest.mark.slow
def test_sign_in_limits_count_an_ipv6_64_as_one_client_and_never_lock_the_owner_out(tmp_path):
    server = LiveServer(
        tmp_path,
        network_trusted_proxies="127.0.0.0/8",
        dashboard_signins_per_minute_per_address="5",
        dashboard_signins_per_minute_per_account="3",
    ).start()
    try:
        with httpx.Client(base_url=server.base_url) as browser:

            def attempt(client_address: str, email: str = "nobody@example.com", password: str = "wrong password!"):
                token = csrf_of(browser.get("/login").text)
                form = {"email": email, "password": password, "csrf": token}
                headers = {"X-Forwarded-For": client_address}
                return browser.post("/login", data=form, headers=headers, follow_redirects=False).status_code

            # Five addresses of one /64 share one bucket: the sixth try is refused.
            sprayed = [attempt(f"2001:db8:1:2::{n}", f"guess{n}@example.com") for n in range(1, 7)]
            assert sprayed == [401] * 5 + [429]
            assert attempt("2001:db8:1:3::1", "guess1@example.com") == 401  # the next /64 is someone else

            make_account_in(server, "owner@example.com")
            # Three wrong passwords from one address: that address is held up for this account…
            assert [attempt("198.51.100.7", "owner@example.com") for _ in range(3)] == [401] * 3
            assert attempt("198.51.100.7", "owner@example.com", PASSWORD) == 429
            # …and the owner, signing in from elsewhere, is not.
            assert attempt("203.0.113.9", "owner@example.com", PASSWORD) == 303
    finally:
        server.stop()


def make_account_in(server: LiveServer, email: str) -> None:
    conn = connect(str(server.db))
    try:
        make_account(conn, email)
    finally:
        conn.close()


# 3: a sign-in racing a password change does not survive it


def test_a_sign_in_checked_against_the_old_password_does_not_outlive_the_change(make_client, conn):
    make_account(conn, "owner@example.com")
    client = make_client()
    account_id = conn.execute("SELECT id FROM accounts WHERE email = 'owner@example.com'").fetchone()[0]
    token = csrf_of(client.get("/login").text)
    answers: list[int] = []
    form = {"email": "owner@example.com", "password": PASSWORD, "csrf": token}
    racing = threading.Thread(
        target=lambda: answers.append(client.post("/login", data=form, follow_redirects=False).status_code)
    )
    # The change is written but not yet committed while the sign-in reads the old hash and
    # checks the old password; it commits before the sign-in writes its session.
    with transaction(conn):
        session_store.set_password_hash(conn, account_id, password_hash(OTHER_PASSWORD))
        session_store.delete_sessions_of(conn, account_id)
        racing.start()
        time.sleep(0.5)  # a pause, not a wait: the sign-in reads the old hash meanwhile (no hook shows it)
    racing.join()
    assert answers == [401]
    assert conn.execute("SELECT count(*) FROM dashboard_sessions").fetchone()[0] == 0
    assert sign_in(client, "owner@example.com", OTHER_PASSWORD).status_code == 303


# 2: requests anyone can send get an answer, never a 500

INSTAGRAM_ANDROID = (
    "Mozilla/5.0 (Linux; Android 13; Pixel 7 Build/TQ3A.230805.001; wv) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Version/4.0 Chrome/116.0.0.0 Mobile Safari/537.36 Instagram 298.0.0.31.110 Android "
    "(33/13; 420dpi; 1080x2400; Google/google; Pixel 7; panther; panther; en_US; 508133178)"
)


def make_link(client: TestClient, key: str, **body: str) -> dict:
    response = client.post(
        "/api/v1/links", headers=bearer(key), json={"originalUrl": "https://www.youtube.com/watch?v=x", **body}
    )
    assert response.status_code == 201, response.text
    return response.json()["data"]


def test_non_ascii_cookies_and_csrf_tokens_are_refused_not_crashed_on(make_client, new_key, conn):
    key = new_key("owner@example.com")
    client = make_client(public_enabled=True, public_account="owner@example.com")
    code = make_link(client, key, password="open sesame")["shortCode"]
    cookie = {"Cookie": f"{password_entry.cookie_name(code)}=9999999999.é".encode()}
    form = client.get(f"/l/{code}", headers=cookie)
    assert form.status_code == 200 and "Password required" in form.text
    login = client.post("/login", data={"email": "a@example.com", "password": "x" * 12, "csrf": "é"})
    assert login.status_code == 403 and "This form has expired" in login.text
    client.get("/")  # the public form's cookie
    shortened = client.post("/shorten", data={"url": "https://example.com/", "csrf": "é"})
    assert shortened.status_code == 403 and "The form had expired" in shortened.text
    make_account(conn, "person@example.com")
    assert sign_in(client, "person@example.com").status_code == 303
    signed_in_post = client.post("/links", data={"originalUrl": "https://example.com/", "csrf": "é"})
    assert signed_in_post.status_code == 403 and "This form has expired" in signed_in_post.text


@pytest.mark.parametrize(
    "host",
    [
        "example.com:abc",
        "example.com:99999",
        "sho.rt:0x50",
        # Past int()'s 4,300 digits: a ValueError, once a 500.
        "sho.rt:" + "9" * 4301,
        "sho.rt:" + "0" * 4400 + "80",
        "[::1]:" + "1" * 5000,
    ],
)
def test_a_host_header_with_a_bad_port_is_a_400(client, new_key, host):
    code = make_link(client, new_key())["shortCode"]
    headers = {"Host": host, "User-Agent": INSTAGRAM_ANDROID}
    for path in ("/login", "/nowhere", f"/l/{code}", "/mcp"):
        response = client.get(path, headers=headers)
        assert response.status_code == 400, (path, response.text)
        assert response.json()["error"]["code"] == "VALIDATION_ERROR"
    # A path no route matches skips middleware; its 404 is written without reading the Host.
    unknown = client.get("/api/v1/nowhere", headers=headers)
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "NOT_FOUND"
    # A good Host still gets the Android app-opening answer.
    assert client.get(f"/l/{code}", headers={"Host": "sho.rt:443", "User-Agent": INSTAGRAM_ANDROID}).status_code < 400


# 8: the JSON 404 names nothing from the request


def test_the_json_404_and_405_do_not_repeat_the_requested_path(client):
    planted = "/api/v1/Call-0800-123-now-to-claim-your-refund"
    for response in (client.get(planted), client.delete("/healthz")):
        assert response.status_code in (404, 405)
        assert "claim" not in response.text and "healthz" not in response.text
        assert response.json()["error"]["code"] == "NOT_FOUND"


# 6: a script reloading a bio page does not inflate its views; 8: the page's own CSP


def test_a_bio_page_counts_one_view_per_visitor_a_day_and_sends_its_own_csp(client, new_key, conn):
    new_key()
    owner = accounts.account_for(conn, "owner@example.com")["id"]
    bio = client.app.state.services.bio
    body = SavePage(handle="alice", title="Alice's links", is_published=True)
    client.blocking_portal.call(lambda: bio.save(owner, body))
    for _ in range(100):
        page = client.get("/@alice", headers={"User-Agent": DESKTOP})
    client.get("/@alice", headers={"User-Agent": IPHONE})  # another visitor
    client.get("/@alice", headers={"User-Agent": FACEBOOK_BOT})  # a previewer: never a view
    client.blocking_portal.call(bio.flush_views)
    stats = client.blocking_portal.call(lambda: bio.stats(owner, 1))
    assert stats.total_views == 2
    policy = page.headers["content-security-policy"]
    assert "script-src" not in policy and "data:" not in policy and "default-src 'none'" in policy
    assert "<script" not in page.text and "<img" not in page.text


# 8: static files are never sniffed; the CSRF Origin check compares the scheme too


def test_dashboard_static_files_send_nosniff(client):
    for name in ("dashboard.css", "dashboard.js"):
        response = client.get(f"/static/dashboard/{name}")
        assert response.status_code == 200 and response.headers["x-content-type-options"] == "nosniff"


def test_a_post_from_our_host_over_another_scheme_is_cross_site(make_client, conn):
    make_account(conn, "owner@example.com")
    client = make_client()  # the short host is https://sho.rt
    assert sign_in(client, "owner@example.com").status_code == 303
    token = csrf_of(client.get("/").text)
    form = {"originalUrl": "https://example.com/a", "csrf": token}
    plain = client.post("/links", data=form, headers={"Origin": "http://testserver.local"}, follow_redirects=False)
    assert plain.status_code == 403
    secure = client.post("/links", data=form, headers={"Origin": "https://testserver.local"}, follow_redirects=False)
    assert secure.status_code == 303


# 4: control characters are refused where text is stored, and never reach a terminal raw

CONTROLS = ["\x1b]0;pwned\x07", "\x1b[2J", "\u200e", "\u200f", "\u061c", "\u202e", "\u2066", "\x9b"]


@pytest.mark.parametrize("control", CONTROLS)
def test_control_and_bidi_characters_are_refused_in_stored_text(make_client, api_key, conn, control):
    client = make_client(dashboard_signup=True)
    signup = client.get("/signup")
    email = f"new{control}@example.com"
    answer = client.post("/signup", data={"email": email, "password": PASSWORD, "csrf": csrf_of(signup.text)})
    assert answer.status_code == 400 and "must not contain control characters" in answer.text
    assert conn.execute("SELECT count(*) FROM accounts WHERE email LIKE 'new%'").fetchone()[0] == 0
    link = client.post(
        "/api/v1/links",
        headers=bearer(api_key),
        json={"originalUrl": "https://example.com/", "description": f"about{control}this"},
    )
    assert link.status_code == 400 and link.json()["error"]["message"].startswith("description: must not contain")
    make_account(conn, "person@example.com")
    assert sign_in(client, "person@example.com").status_code == 303
    keys = client.get("/keys")
    named = client.post("/keys", data={"name": f"laptop{control}", "csrf": csrf_of(keys.text)})
    assert named.status_code == 400 and "must not contain control characters" in named.text
    cli = run_cli(
        "key", "create", "--email", "cli@example.com", "--name", f"x{control}", "--db", db_path_of(conn), check=False
    )
    assert cli.returncode != 0 and "must not contain control characters" in cli.stderr


def db_path_of(conn) -> str:
    return conn.execute("PRAGMA database_list").fetchone()["file"]


def test_the_cli_prints_stored_control_characters_escaped(storage, conn):
    """Text stored before the rules (or written around them) is printed as escapes."""
    key = accounts.create_key(conn, "owner@example.com", "laptop")
    evil = "\x1b]0;pwned\x07\x1b[2J\u202e"
    conn.execute("UPDATE accounts SET email = ? WHERE email = 'owner@example.com'", (f"owner{evil}@example.com",))
    conn.execute("UPDATE api_keys SET name = ? WHERE public_id = ?", (f"laptop{evil}", key.key_id))
    account_id = conn.execute("SELECT id FROM accounts").fetchone()[0]
    link = link_service.create_link(
        conn,
        account_id,
        CreateLink(original_url="https://example.com/", description="plain"),
        is_ours=lambda _host: False,
        base="https://sho.rt",
        daily_limit=10,
        now=datetime.now(UTC),
    )
    conn.execute("UPDATE links SET description = ? WHERE public_id = ?", (f"about{evil}", link.id))
    listed = (
        run_cli("accounts", "list", "--db", storage).stdout
        + run_cli("key", "list", "--email", f"owner{evil}@example.com", "--db", storage).stdout
        + run_cli("links", "show", link.id, "--db", storage).stdout
    )
    for raw in ("\x1b", "\x07", "\u202e"):
        assert raw not in listed
    assert "owner\\x1b]0;pwned\\x07\\x1b[2J\\u202e@example.com" in listed
    assert "laptop\\x1b]0;pwned" in listed
    assert "about\\x1b]0;pwned" in listed


# 5: the public form compares addresses too, and every door honours the blocklist


def public_form_post(client: TestClient, url: str):
    form = client.get("/", headers={"User-Agent": IPHONE})
    token = re.search(r'name="csrf" value="([^"]+)"', form.text).group(1)  # type: ignore[union-attr]
    return client.post("/shorten", data={"url": url, "csrf": token}, headers={"User-Agent": IPHONE})


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://[::ffff:127.0.0.1]:8000/l/abc", "names its host by IP address"),
        ("http://127.0.0.1:8000/", "names its host by IP address"),
        ("https://67.199.248.10/", "names its host by IP address"),  # bit.ly, by address
        ("http://localhost:8000/l/abc", "leads to this server or a private network"),
        ("http://app.localhost/", "leads to this server or a private network"),
    ],
)
def test_the_public_form_refuses_addresses_and_names_of_this_machine(make_client, new_key, conn, url, reason):
    key = new_key()
    client = make_client(public_enabled=True, public_account="owner@example.com", public_blocked_hosts=["bit.ly"])
    client.base_url = "https://testserver.local"
    answer = public_form_post(client, url)
    assert answer.status_code == 400 and reason in answer.text, answer.text
    listed = client.get("/api/v1/links", headers=bearer(key)).json()["data"]
    assert listed == []


def test_links_from_the_dashboard_and_the_api_honour_the_blocklist(make_client, api_key, conn):
    make_account(conn, "person@example.com")
    client = make_client(public_blocked_hosts=["bit.ly"])
    assert sign_in(client, "person@example.com").status_code == 303
    token = csrf_of(client.get("/links/new").text)
    dashboard = client.post("/links", data={"originalUrl": "https://bit.ly/x", "csrf": token})
    assert dashboard.status_code == 400 and "leads to bit.ly, which this service does not link to" in dashboard.text
    api = client.post(
        "/api/v1/links",
        headers=bearer(api_key),
        json={"originalUrl": "https://example.com/", "androidUrl": "https://www.BIT.ly./y"},
    )
    assert api.status_code == 400
    assert api.json()["error"]["message"] == "androidUrl: leads to bit.ly, which this service does not link to"
    assert conn.execute("SELECT count(*) FROM links").fetchone()[0] == 0


# 8: the database alone cannot forge a CSRF token or a password cookie


def test_the_databases_secret_alone_signs_nothing(make_client, new_key, conn, db_path):
    client = make_client()
    code = make_link(client, new_key(), password="open sesame")["shortCode"]
    stored = bytes.fromhex(conn.execute("SELECT value FROM settings WHERE name = 'cookie_secret'").fetchone()[0])
    # A CSRF token for a form cookie of our choosing, signed with what the database holds.
    form_cookie = "f" * 43
    client.cookies.set("sl_form", form_cookie)
    forged = sessions.csrf_token(stored, form_cookie)
    login = client.post("/login", data={"email": "a@example.com", "password": "x" * 12, "csrf": forged})
    assert login.status_code == 403 and "This form has expired" in login.text
    link = conn.execute("SELECT public_id, password_hash FROM links WHERE short_code = ?", (code,)).fetchone()
    cookie = password_entry.make_cookie_value(stored, link["public_id"], link["password_hash"])
    form = client.get(f"/l/{code}", headers={"Cookie": f"{password_entry.cookie_name(code)}={cookie}"})
    assert form.status_code == 200 and "Password required" in form.text
    key_file = db_path.parent / "secret.key"
    assert key_file.stat().st_mode & 0o777 == 0o600 and len(key_file.read_bytes()) == 64
