"""Dashboard actions that make work are rate limited, per account and per client network: a
webhook's test event, the app-link check and an import. Over a limit the page says so (429) and
how long to wait, and no work is done."""

from __future__ import annotations

import html
import re

import pytest

from shortlink.accounts import service as accounts
from tests.dashboard.test_dashboard_moving import IMPORTS, upload
from tests.support.dashboard import as_browser, csrf_of, field_error, make_account, sign_in, signed_in
from tests.support.helpers import wait_for_domain


@pytest.fixture
def make_client(make_client):
    return lambda **overrides: as_browser(make_client(**overrides), False)


def message_of(page: str) -> str:
    found = re.search(r"<h1>That did not work</h1>\s*<p>([^<]*)</p>", page)
    assert found, page
    return html.unescape(found.group(1))


def new_webhook(client) -> str:
    token = csrf_of(client.get("/webhooks").text)
    form = {"csrf": token, "url": "http://127.0.0.1:9/hook", "events": ["link.created"]}
    created = client.post("/webhooks", data=form)
    assert created.status_code == 200, created.text
    return re.search(r'href="/webhooks/(\w+)"', created.text).group(1)


def test_test_events_are_limited_per_account_with_a_page_saying_how_long_to_wait(make_client, conn):
    client = signed_in(
        make_client, conn, fetcher_allow_private_addresses=True, dashboard_webhook_tests_per_minute_per_account=2
    )
    hook = new_webhook(client)

    def send():
        return client.post(f"/webhooks/{hook}/test", data={"csrf": csrf_of(client.get(f"/webhooks/{hook}").text)})

    def test_events() -> int:
        return conn.execute("SELECT count(*) FROM webhook_events WHERE type = 'webhook.test'").fetchone()[0]

    assert [send().status_code for _ in range(2)] == [200, 200]  # the redirect, followed
    refused = send()
    assert refused.status_code == 429
    assert re.fullmatch(
        r"Too many webhook tests: at most 2 a minute for one account\. Please wait \d+ s and try again\.",
        message_of(refused.text),
    )
    assert test_events() == 2  # the refused one made no event


def test_app_checks_are_limited_per_account_and_per_network(make_client, conn):
    """The test client is one client address: three accounts share its network's bucket."""
    limits = {"dashboard_app_checks_per_minute_per_account": 1, "dashboard_actions_per_minute_per_address": 2}
    client = signed_in(make_client, conn, **limits)
    token = csrf_of(client.get("/apps").text)
    fields = {"csrf": token, "ios_team_id": "ABCDE12345", "ios_bundle_id": "com.example.app"}
    assert client.post("/apps", data=fields, follow_redirects=False).status_code == 303
    # A private address: refused at once by the address policy, so each check is quick.
    accounts.add_domain(conn, "owner@example.com", "127.0.0.1")
    wait_for_domain(client, "127.0.0.1")

    def check():
        return client.post("/apps/check", data={"csrf": csrf_of(client.get("/apps").text)})

    first = check()
    assert first.status_code == 200 and "could not be fetched" in first.text
    refused = check()
    assert refused.status_code == 429 and "could not be fetched" not in refused.text
    alert = re.search(r'<p class="error" role="alert">([^<]*)</p>', refused.text)
    assert alert and re.fullmatch(
        r"Too many app checks: at most 1 a minute for one account\. Please wait \d+ s and try again\.",
        html.unescape(alert.group(1)),
    )
    # The refused check took nothing from the network's two a minute: a second account gets
    # the other one, and a third, from the same network, is refused for the network.
    for email in ("second@example.com", "third@example.com"):
        make_account(conn, email)
    assert sign_in(client, "second@example.com").status_code == 303
    assert check().status_code == 200
    assert sign_in(client, "third@example.com").status_code == 303
    from_one_network = check()
    assert from_one_network.status_code == 429
    assert "Too many app checks: at most 2 a minute from one network." in html.unescape(from_one_network.text)


def test_imports_are_limited_the_check_and_the_confirmation_alike(make_client, conn):
    client = signed_in(make_client, conn, dashboard_imports_per_minute_per_account=1)
    data = (IMPORTS / "yourls.sql").read_bytes()
    checked = upload(client, "yourls.sql", data, "yourls")
    assert checked.status_code == 200 and "Nothing has changed yet" in checked.text
    payload = re.search(r'name="payload" value="([^"]+)"', checked.text)
    assert payload
    form = {"csrf": csrf_of(checked.text), "source": "yourls", "on_conflict": "skip", "payload": payload[1]}
    refused = client.post("/import", data=form, follow_redirects=False)
    assert refused.status_code == 429
    assert re.fullmatch(
        r"Too many imports: at most 1 a minute for one account\. Please wait \d+ s and try again\.",
        field_error(refused.text, "file"),
    )
    assert conn.execute("SELECT count(*) FROM links").fetchone()[0] == 0  # nothing imported
