"""What the dashboard's TestClient tests share: accounts with a password, signing in, form
POSTs with the page's CSRF token, the error beside a field."""

from __future__ import annotations

import functools
import re

from argon2 import PasswordHasher
from litestar.testing import TestClient

from shortlink.accounts import passwords
from shortlink.accounts import service as accounts

PASSWORD = "correct horse battery"


# Test accounts' passwords are argon2id hashes at the smallest cost argon2 allows. Signing in
# verifies with the parameters the stored hash names (argon2's rule), so every sign-in of the
# suite runs the product's verification without a fifth of a second of RFC 9106 cost each; the
# hashes the service itself makes are checked for that cost (tests/dashboard/test_dashboard.py).
_TEST_HASHER = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)


@functools.cache
def password_hash(password: str) -> str:
    passwords.validate_password(password)
    return _TEST_HASHER.hash(password)


def make_account(conn, email: str, password: str = PASSWORD) -> int:
    account = accounts.ensure_account(conn, email)
    conn.execute("UPDATE accounts SET password_hash = ? WHERE id = ?", (password_hash(password), account["id"]))
    return account["id"]


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]*)"', html)
    assert found, "the page has a form with a CSRF token"
    return found.group(1)


def field_error(html: str, field: str) -> str:
    found = re.search(rf'<p class="error" id="e-{field}">([^<]*)</p>', html)
    assert found, f"an error beside {field}"
    return found.group(1).replace("&#39;", "'").replace("&gt;", ">").replace("&lt;", "<")


def sign_in(client: TestClient, email: str, password: str = PASSWORD, **headers: str):
    form = client.get("/login")
    return client.post(
        "/login",
        data={"email": email, "password": password, "csrf": csrf_of(form.text)},
        headers=headers,
        follow_redirects=False,
    )


def as_browser(client: TestClient, short_host_overridden: bool) -> TestClient:
    """The app as a browser on the https short host sees it (the cookies are Secure there)."""
    client.base_url = "http://testserver.local" if short_host_overridden else "https://testserver.local"
    return client


def signed_in(make_client, conn, email: str = "owner@example.com", **overrides) -> TestClient:
    make_account(conn, email)
    client = make_client(**overrides)
    assert sign_in(client, email).status_code == 303
    return client


def post(client: TestClient, path: str, data: dict | None = None, page: str | None = None, **kwargs):
    """A form POST with the CSRF token of `page` (default: the dashboard's home)."""
    token = csrf_of(client.get(page or "/").text)
    return client.post(path, data={**(data or {}), "csrf": token}, follow_redirects=False, **kwargs)


def create_link(client: TestClient, **fields: str) -> str:
    response = post(client, "/links", fields)
    assert response.status_code == 303, response.text
    return response.headers["location"].split("/")[2].split("?")[0]
