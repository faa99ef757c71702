"""An endpoint's host name is judged when it is saved, as its address would be: `localhost` is
refused like 127.0.0.1 unless private addresses are allowed, on the API, the dashboard and the
CLI, each saying why and what allows it."""

from __future__ import annotations

import re

from shortlink.accounts import service as accounts
from tests.conftest import run_cli
from tests.support.dashboard import as_browser, field_error, post, signed_in
from tests.support.helpers import error_of

# localhost is 127.0.0.1 in /etc/hosts, and ::1 where glibc adds it.
REFUSED = re.compile(
    r"url: localhost resolves to (127\.0\.0\.1|::1), a loopback address \(this machine\);"
    r" set \[fetcher\] allow_private_addresses = true to allow it"
)


def test_the_api_refuses_a_name_of_a_private_address_when_saving_and_says_why(make_client, auth):
    client = make_client()
    for url in ("http://localhost:9/hooks", "http://LocalHost/hooks"):
        response = client.post("/api/v1/webhooks", json={"url": url, "events": ["link.created"]}, headers=auth)
        assert response.status_code == 400 and error_of(response) == "VALIDATION_ERROR", url
        assert REFUSED.fullmatch(response.json()["error"]["message"]), url
    literal = client.post(
        "/api/v1/webhooks", json={"url": "http://127.0.0.1:9/", "events": ["link.created"]}, headers=auth
    )
    assert literal.json()["error"]["message"] == (
        "url: 127.0.0.1 is a loopback address (this machine); set [fetcher] allow_private_addresses = true to allow it"
    )
    # A change of URL is judged the same way; nothing was saved.
    created = client.post(
        "/api/v1/webhooks", json={"url": "http://192.0.2.80/hooks", "events": ["link.created"]}, headers=auth
    )
    assert created.status_code == 400  # TEST-NET-1: documentation addresses are not public either
    public = client.post(
        "/api/v1/webhooks", json={"url": "https://93.184.215.14/hooks", "events": ["link.created"]}, headers=auth
    )
    assert public.status_code == 201, public.text
    hook = public.json()["data"]["id"]
    patched = client.patch(f"/api/v1/webhooks/{hook}", json={"url": "http://localhost:8000/"}, headers=auth)
    assert patched.status_code == 400 and REFUSED.fullmatch(patched.json()["error"]["message"])
    assert client.get(f"/api/v1/webhooks/{hook}", headers=auth).json()["data"]["url"] == "https://93.184.215.14/hooks"


def test_with_private_addresses_allowed_a_name_of_one_is_saved(make_client, auth):
    client = make_client(fetcher_allow_private_addresses=True)
    response = client.post(
        "/api/v1/webhooks", json={"url": "http://localhost:9/hooks", "events": ["link.created"]}, headers=auth
    )
    assert response.status_code == 201, response.text


def test_the_dashboard_form_says_why_a_name_is_refused(make_client, conn):
    client = signed_in(lambda **overrides: as_browser(make_client(**overrides), False), conn)
    response = post(
        client, "/webhooks", {"url": "http://localhost:9/hooks", "events": "link.created"}, page="/webhooks"
    )
    assert response.status_code == 400
    assert REFUSED.fullmatch(field_error(response.text, "url"))
    assert 'value="http://localhost:9/hooks"' in response.text  # the form keeps what was typed
    assert "No endpoints yet." in response.text


def test_the_cli_refuses_a_name_of_a_private_address_in_one_line(storage, conn):
    accounts.ensure_account(conn, "owner@example.com")
    args = ("webhooks", "add", "http://localhost:9/hooks", "--email", "owner@example.com", "--event", "link.created")
    refused = run_cli(*args, "--db", storage, check=False)
    assert refused.returncode != 0 and refused.stdout == ""
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "localhost resolves to" in lines[0] and "allow_private_addresses" in lines[0], lines
    assert conn.execute("SELECT count(*) FROM webhook_endpoints").fetchone()[0] == 0
