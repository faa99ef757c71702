"""The dashboard's Domains page through the real app, verified against a real DNS server on
127.0.0.1 (throwaway.dns_server): add a domain with its errors beside the field, see the DNS
record, check it now (limited per account), choose where `/` and an unknown code lead, remove
it after a confirmation; another account's domain is not found."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pytest

from shortlink.accounts import service as accounts
from tests.support.dashboard import as_browser, csrf_of, field_error, make_account, sign_in, signed_in
from tests.support.helpers import wait_for_domain
from tests.support.visitors import visit
from throwaway.dns_server import DnsServer

NAME = "go.brand.example"


@pytest.fixture
def dns() -> Iterator[DnsServer]:
    with DnsServer() as server:
        yield server


@pytest.fixture
def make_client(make_client, dns):
    """The app as a browser on the https short host sees it, asking the test DNS server."""
    return lambda **overrides: as_browser(make_client(domains_nameservers=[dns.address], **overrides), False)


def post_form(client, path: str, page_path: str, **fields):
    csrf = csrf_of(client.get(page_path).text)
    return client.post(path, data={"csrf": csrf, **fields}, follow_redirects=False)


def add(client, name: str = NAME) -> str:
    added = post_form(client, "/domains", "/domains", name=name)
    assert added.status_code == 303, added.text
    domain_id, done = re.fullmatch(r"/domains/(dom_\w+)\?done=(\w+)", added.headers["location"]).groups()
    assert done == "added"
    return domain_id


def record_of(page: str) -> dict[str, str]:
    """The DNS record as the page shows it: each part as text and on its copy button."""
    shown = dict(re.findall(r"<dt>(Type|Name|Value)</dt><dd><code>([^<]+)</code>", page))
    copied = dict(re.findall(r'data-copy="([^"]+)" hidden>Copy (type|name|value)</button>', page))
    assert {part.lower(): text for part, text in shown.items()} == {part: text for text, part in copied.items()}
    return {part.lower(): html.unescape(text) for part, text in shown.items()}


@pytest.mark.both_backends
def test_a_domain_is_added_checked_verified_pointed_and_removed(make_client, conn, dns):
    client = signed_in(make_client, conn)
    page = client.get("/domains")
    assert page.status_code == 200 and "No domains yet." in page.text and 'href="/domains"' in page.text
    # Each mistake beside the field, with what was typed kept.
    for name, why in (
        ("https://go.brand.example/x", "no scheme, port or path"),
        ("sho.rt", "one of this service's own hosts"),
        ("", "name: must be a bare domain name"),
    ):
        bad = post_form(client, "/domains", "/domains", name=name)
        assert bad.status_code == 400 and why in field_error(bad.text, "name"), name
        assert f'value="{html.escape(name)}"' in bad.text

    domain_id = add(client, "Go.Brand.Example.")
    shown = client.get(f"/domains/{domain_id}?done=added").text
    assert "The domain was added" in shown and "waiting for the DNS record" in shown
    record = record_of(shown)
    assert record["type"] == "TXT" and record["name"] == f"_shortlink-verify.{NAME}"
    assert record["value"].startswith("shortlink-verify=")
    assert "a CNAME record to <code>sho.rt</code>" in shown  # and where the name itself points
    assert client.get("/tls/allowed", params={"domain": NAME}).status_code == 404

    # Checked before the record exists: the page says what the check found.
    checked = post_form(client, f"/domains/{domain_id}/verify", f"/domains/{domain_id}")
    assert checked.status_code == 303 and checked.headers["location"] == f"/domains/{domain_id}?done=checked"
    shown = client.get(checked.headers["location"]).text
    assert "the record was not found yet" in shown and "not verified" in shown and "_shortlink-verify" in shown

    dns.set_txt(record["name"], record["value"])
    checked = post_form(client, f"/domains/{domain_id}/verify", f"/domains/{domain_id}")
    shown = client.get(checked.headers["location"]).text
    assert "the record was found" in shown and '<span class="badge active">verified</span>' in shown
    assert client.get("/tls/allowed", params={"domain": NAME}).status_code == 200
    listed = client.get("/domains").text
    assert f'href="/domains/{domain_id}">{NAME}</a>' in listed and "verified" in listed

    # Where / and an unknown code lead: a bad URL is refused beside its field, typed text kept.
    bad = post_form(
        client,
        f"/domains/{domain_id}",
        f"/domains/{domain_id}",
        rootRedirect="javascript:alert(1)",
        notFoundRedirect="",
    )
    assert bad.status_code == 400 and "rootRedirect" in field_error(bad.text, "rootRedirect")
    assert 'value="javascript:alert(1)"' in bad.text
    saved = post_form(
        client,
        f"/domains/{domain_id}",
        f"/domains/{domain_id}",
        rootRedirect="https://brand.example/",
        notFoundRedirect="https://brand.example/missing",
    )
    assert saved.status_code == 303 and saved.headers["location"] == f"/domains/{domain_id}?done=saved"
    assert 'value="https://brand.example/missing"' in client.get(saved.headers["location"]).text
    root = client.get("/", headers={"host": NAME}, follow_redirects=False)
    assert root.status_code == 302 and root.headers["location"] == "https://brand.example/"
    assert visit(client, "nosuchcode", host=NAME).headers["location"] == "https://brand.example/missing"
    # Emptied, a field is the usual page again.
    post_form(client, f"/domains/{domain_id}", f"/domains/{domain_id}", rootRedirect="https://brand.example/")
    assert visit(client, "nosuchcode", host=NAME).status_code == 404

    # Removing asks first.
    confirm = client.get(f"/domains/{domain_id}/remove")
    assert confirm.status_code == 200 and f"Remove {NAME}?" in confirm.text
    removed = post_form(client, f"/domains/{domain_id}/remove", f"/domains/{domain_id}/remove")
    assert removed.status_code == 303 and removed.headers["location"] == "/domains?done=removed"
    listed = client.get("/domains?done=removed").text
    assert "The domain was removed" in listed and "No domains yet." in listed
    assert client.get("/tls/allowed", params={"domain": NAME}).status_code == 404


def test_a_name_another_account_holds_is_refused_beside_the_field_and_its_pages_are_not_found(make_client, conn):
    client = signed_in(make_client, conn)
    domain_id = add(client)
    make_account(conn, "other@example.com")
    other = make_client()
    assert sign_in(other, "other@example.com").status_code == 303
    taken = post_form(other, "/domains", "/domains", name=NAME)
    assert taken.status_code == 409 and "already connected to another account" in field_error(taken.text, "name")
    token = csrf_of(other.get("/domains").text)
    for method, path in (
        ("GET", f"/domains/{domain_id}"),
        ("GET", f"/domains/{domain_id}/remove"),
        ("POST", f"/domains/{domain_id}"),
        ("POST", f"/domains/{domain_id}/verify"),
        ("POST", f"/domains/{domain_id}/remove"),
    ):
        answer = other.request(method, path, data={"csrf": token} if method == "POST" else None)
        assert answer.status_code == 404 and "belongs to another account" in answer.text, (method, path)
    assert client.get(f"/domains/{domain_id}").status_code == 200  # untouched


def test_check_now_is_limited_per_account_and_every_form_needs_its_token(make_client, conn):
    client = signed_in(make_client, conn, dashboard_domain_checks_per_minute_per_account=1)
    domain_id = add(client)
    assert post_form(client, f"/domains/{domain_id}/verify", f"/domains/{domain_id}").status_code == 303
    checked_at = re.search(r"<dt>Last checked</dt><dd>([^<]+)</dd>", client.get(f"/domains/{domain_id}").text)
    refused = post_form(client, f"/domains/{domain_id}/verify", f"/domains/{domain_id}")
    assert refused.status_code == 429
    alert = re.search(r'<p class="error" role="alert">([^<]*)</p>', refused.text)
    assert alert and re.fullmatch(
        r"Too many domain checks: at most 1 a minute for one account\. Please wait \d+ s and try again\.",
        html.unescape(alert.group(1)),
    )
    assert re.search(r"<dt>Last checked</dt><dd>([^<]+)</dd>", refused.text).group(1) == checked_at.group(1)
    for path in ("/domains", f"/domains/{domain_id}", f"/domains/{domain_id}/verify", f"/domains/{domain_id}/remove"):
        assert client.post(path, data={"name": "x.example"}).status_code == 403, path
    assert client.get(f"/domains/{domain_id}").status_code == 200


def test_the_operators_domain_is_shown_verified_without_a_record(make_client, conn):
    client = signed_in(make_client, conn)
    accounts.add_domain(conn, "owner@example.com", NAME)
    wait_for_domain(client, NAME)
    listed = client.get("/domains").text
    assert "connected by the operator" in listed and '<span class="badge active">verified</span>' in listed
    domain_id = re.search(r'href="/domains/(dom_\w+)"', listed).group(1)
    shown = client.get(f"/domains/{domain_id}").text
    assert "needs no DNS record" in shown and "Check now" not in shown and "data-copy" not in shown
