"""An https dashboard reached over plain http: every form there fails (its Secure cookies never
reach the browser), and the page says where the dashboard is instead of "another site"."""

from __future__ import annotations

from tests.support.dashboard import PASSWORD, csrf_of, make_account


def test_a_sign_in_over_http_names_the_https_address(make_client, conn):
    make_account(conn, "owner@example.com")
    client = make_client()  # the short host is https://sho.rt; testserver.local is no host of ours
    client.base_url = "http://testserver.local"
    form = client.get("/login")
    assert form.status_code == 200
    answer = client.post(
        "/login",
        data={"email": "owner@example.com", "password": PASSWORD, "csrf": csrf_of(form.text)},
        headers={"Origin": "http://testserver.local"},
        follow_redirects=False,
    )
    assert answer.status_code == 403
    assert "This dashboard is served at https://sho.rt; open it there" in answer.text
    assert "another site" not in answer.text
    # Another site is still named as one, and the right address signs in.
    elsewhere = client.post(
        "/login",
        data={"email": "owner@example.com", "password": PASSWORD, "csrf": csrf_of(form.text)},
        headers={"Origin": "http://evil.example"},
        follow_redirects=False,
    )
    assert elsewhere.status_code == 403 and "sent from another site" in elsewhere.text
    client.base_url = "https://testserver.local"
    form = client.get("/login")
    signed_in = client.post(
        "/login",
        data={"email": "owner@example.com", "password": PASSWORD, "csrf": csrf_of(form.text)},
        headers={"Origin": "https://testserver.local"},
        follow_redirects=False,
    )
    assert signed_in.status_code == 303
