"""The /domains extension resource and GET /tls/allowed, verified against a real DNS server on
127.0.0.1 (throwaway.dns_server) through the real app."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from shortlink.accounts import service as accounts
from shortlink.domains import service as domains
from shortlink.storage import domains as domain_store
from shortlink.times import from_iso
from tests.conftest import bearer
from tests.support.helpers import error_of, wait_for_domain
from tests.support.visitors import make_link, visit
from throwaway.dns_server import DnsServer

NAME = "go.brand.example"


@pytest.fixture
def dns() -> Iterator[DnsServer]:
    with DnsServer() as server:
        yield server


@pytest.fixture
def with_dns(make_client, dns):
    return make_client(domains_nameservers=[dns.address])


def connect(client, auth, name: str = NAME, **fields) -> dict:
    response = client.post("/api/v1/domains", json={"name": name, **fields}, headers=auth)
    assert response.status_code == 201, response.text
    return response.json()["data"]


def status_and_code(response) -> tuple[int, str]:
    return response.status_code, error_of(response)


def tls_allowed(client, name: str) -> int:
    return client.get("/tls/allowed", params={"domain": name}).status_code


@pytest.mark.both_backends
def test_a_domain_is_served_and_gets_a_certificate_only_once_its_txt_record_is_verified(with_dns, dns, auth):
    client = with_dns
    link = make_link(client, auth)
    created = connect(client, auth)
    # The contract's shape.
    assert created["id"].startswith("dom_") and created["name"] == NAME and created["verified"] is False
    record = created["verification"]
    assert record["type"] == "TXT" and record["name"] == f"_shortlink-verify.{NAME}"
    assert record["value"].startswith("shortlink-verify=") and len(record["value"]) > 30
    assert tls_allowed(client, NAME) == 404
    assert visit(client, link["shortCode"], host=NAME).status_code == 302  # not ours yet: every link shows

    checked = client.post(f"/api/v1/domains/{created['id']}/verify", headers=auth).json()["data"]
    assert checked["verified"] is False and "_shortlink-verify" in checked["checkError"]
    assert tls_allowed(client, NAME) == 404

    dns.set_txt(record["name"], "some-other=thing", record["value"])
    checked = client.post(f"/api/v1/domains/{created['id']}/verify", headers=auth).json()["data"]
    assert checked["verified"] is True and checked["verifiedAt"] and checked["checkError"] is None
    assert tls_allowed(client, NAME) == 200
    assert tls_allowed(client, NAME.upper() + ".") == 200
    assert visit(client, link["shortCode"], host=NAME).status_code == 302
    assert client.get(f"/{link['shortCode']}", headers={"host": NAME}, follow_redirects=False).status_code == 302
    api = client.get(f"/api/v1/links/{link['id']}", headers=auth).json()["data"]
    assert api["shortUrl"] == f"https://{NAME}/l/{link['shortCode']}"

    assert [d["id"] for d in client.get("/api/v1/domains", headers=auth).json()["data"]] == [created["id"]]
    assert client.get(f"/api/v1/domains/{created['id']}", headers=auth).json()["data"]["verified"] is True

    gone = client.delete(f"/api/v1/domains/{created['id']}", headers=auth)
    assert gone.status_code == 200 and gone.json()["data"] == {"id": created["id"], "deleted": True}
    assert tls_allowed(client, NAME) == 404
    assert status_and_code(client.get(f"/api/v1/domains/{created['id']}", headers=auth)) == (404, "NOT_FOUND")


@pytest.mark.both_backends
def test_another_accounts_links_are_not_served_on_a_verified_domain(with_dns, dns, auth, new_key):
    client = with_dns
    other = make_link(client, bearer(new_key("other@example.com")))
    created = connect(client, auth)
    dns.set_txt(created["verification"]["name"], created["verification"]["value"])
    client.post(f"/api/v1/domains/{created['id']}/verify", headers=auth)
    assert visit(client, other["shortCode"], host=NAME).status_code == 404


@pytest.mark.both_backends
def test_a_name_another_account_connected_is_a_conflict_and_tokens_are_never_shared(with_dns, auth, new_key):
    client = with_dns
    mine = connect(client, auth)
    other = bearer(new_key("other@example.com"))
    refused = client.post("/api/v1/domains", json={"name": NAME.upper()}, headers=other)
    assert status_and_code(refused) == (409, "CONFLICT")
    theirs = connect(client, other, "links.other.example")
    assert theirs["verification"]["value"] != mine["verification"]["value"]
    # The account's own name again: the same domain, the same record.
    assert connect(client, auth)["verification"] == mine["verification"]


def test_names_are_checked(client, auth):
    for name, why in [
        ("127.0.0.1", "not an IP address"),
        ("::1", "no scheme, port or path"),
        ("https://go.brand.example", "no scheme, port or path"),
        ("go.brand.example:8443", "no scheme, port or path"),
        ("localhost", "such as links.example.com"),
        ("bad_label.example", "such as links.example.com"),
        ("-bad.example", "such as links.example.com"),
        ("sho.rt", "own hosts"),
        ("www.sho.rt", "own hosts"),
        ("go.example\u202e.com", "control characters"),
    ]:
        response = client.post("/api/v1/domains", json={"name": name}, headers=auth)
        assert status_and_code(response) == (400, "VALIDATION_ERROR"), name
        assert why in response.json()["error"]["message"], (name, response.json())
    # An internationalised name is kept in the form Host headers are compared in.
    assert connect(client, auth, "Bücher.Example.")["name"] == "xn--bcher-kva.example"
    bad = client.post("/api/v1/domains", json={"name": NAME, "rootRedirect": "javascript:alert(1)"}, headers=auth)
    assert status_and_code(bad) == (400, "VALIDATION_ERROR") and "rootRedirect" in bad.json()["error"]["message"]


@pytest.mark.both_backends
def test_root_and_unknown_codes_lead_where_the_account_chose(with_dns, dns, auth):
    client = with_dns
    created = connect(client, auth, notFoundRedirect="https://brand.example/missing")
    dns.set_txt(created["verification"]["name"], created["verification"]["value"])
    client.post(f"/api/v1/domains/{created['id']}/verify", headers=auth)
    unknown = visit(client, "nosuchcode", host=NAME)
    assert unknown.status_code == 302 and unknown.headers["location"] == "https://brand.example/missing"
    old_path = client.get("/nosuchcode", headers={"host": NAME}, follow_redirects=False)
    assert old_path.headers["location"] == "https://brand.example/missing"
    assert client.get("/", headers={"host": NAME}, follow_redirects=False).headers["location"] == "/login"

    changed = client.patch(
        f"/api/v1/domains/{created['id']}", json={"rootRedirect": "https://brand.example/"}, headers=auth
    ).json()["data"]
    assert changed["rootRedirect"] == "https://brand.example/"
    assert changed["notFoundRedirect"] == "https://brand.example/missing"
    root = client.get("/", headers={"host": NAME}, follow_redirects=False)
    assert root.status_code == 302 and root.headers["location"] == "https://brand.example/"
    # The service's own host keeps its dashboard and not-found page.
    assert client.get("/", follow_redirects=False).headers["location"] == "/login"
    assert visit(client, "nosuchcode").status_code == 404

    client.patch(f"/api/v1/domains/{created['id']}", json={"notFoundRedirect": None}, headers=auth)
    assert visit(client, "nosuchcode", host=NAME).status_code == 404
    bad = client.patch(f"/api/v1/domains/{created['id']}", json={"rootRedirect": "ftp://x.example/"}, headers=auth)
    assert status_and_code(bad) == (400, "VALIDATION_ERROR")


def test_the_operators_domains_count_as_verified(client, auth, conn):
    accounts.add_domain(conn, "owner@example.com", NAME)
    wait_for_domain(client, NAME)
    assert tls_allowed(client, NAME) == 200
    (listed,) = client.get("/api/v1/domains", headers=auth).json()["data"]
    assert listed["verified"] is True and listed["verification"] is None
    # Checking now changes nothing: the operator vouched for it.
    assert client.post(f"/api/v1/domains/{listed['id']}/verify", headers=auth).json()["data"]["verified"] is True


def test_tls_allowed_knows_the_service_hosts_and_limits_each_client(make_client):
    client = make_client(links_domains=["go.sho.rt"], domains_tls_asks_per_minute=3)
    assert tls_allowed(client, "sho.rt") == 200
    assert tls_allowed(client, "go.sho.rt") == 200
    assert tls_allowed(client, "elsewhere.example") == 404
    assert tls_allowed(client, "sho.rt") == 429


def test_domains_need_a_key_and_pro(client, conn, new_key):
    assert status_and_code(client.get("/api/v1/domains")) == (401, "UNAUTHORIZED")
    key = new_key("lapsed@example.com")
    accounts.set_subscription(conn, "lapsed@example.com", False)
    refused = client.post("/api/v1/domains", json={"name": NAME}, headers=bearer(key))
    assert status_and_code(refused) == (403, "SUBSCRIPTION_REQUIRED")
    assert "/api/v1/domains/{id}/verify" in client.get("/api/v1/schema/openapi.json").json()["paths"]


def test_a_vanished_record_keeps_a_domain_verified_through_the_grace_period(with_dns, dns, auth, conn):
    client = with_dns
    created = connect(client, auth)
    dns.set_txt(created["verification"]["name"], created["verification"]["value"])
    client.post(f"/api/v1/domains/{created['id']}/verify", headers=auth)
    account_id = accounts.account_for(conn, "owner@example.com")["id"]
    row = domain_store.one(conn, account_id, created["id"])
    seen = from_iso(row["seen_at"])
    # The record is gone: still served within the grace period, checked hourly meanwhile.
    domains.record_outcome(conn, row, False, None, seen + domains.GRACE - timedelta(minutes=1))
    row = domain_store.one(conn, account_id, created["id"])
    assert row["verified_at"] is not None
    assert from_iso(row["check_at"]) - from_iso(row["checked_at"]) == domains.UNVERIFIED_EVERY
    domains.record_outcome(conn, row, False, None, seen + domains.GRACE)
    row = domain_store.one(conn, account_id, created["id"])
    assert row["verified_at"] is None and row["check_at"] is not None
    # A week after that, it is no longer checked on its own.
    domains.record_outcome(conn, row, False, None, seen + domains.GRACE + domains.UNVERIFIED_FOR)
    assert domain_store.one(conn, account_id, created["id"])["check_at"] is None
    # A lookup that gets no answer at all changes nothing.
    row = domain_store.one(conn, account_id, created["id"])
    domains.record_outcome(conn, row, True, None, seen + domains.GRACE * 3)
    row = domain_store.one(conn, account_id, created["id"])
    domains.record_outcome(conn, row, False, "the DNS lookup timed out", seen + domains.GRACE * 9)
    assert domain_store.one(conn, account_id, created["id"])["verified_at"] is not None


@pytest.mark.both_backends
def test_the_periodic_check_verifies_a_domain_whose_record_appeared(with_dns, dns, auth):
    client = with_dns
    created = connect(client, auth)
    dns.set_txt(created["verification"]["name"], created["verification"]["value"])
    services = client.app.state.services
    # Due at once when added (the server's round runs every minute; one round is run here).
    with client.portal() as portal:
        assert portal.call(services.domains.check_due) == 1
        assert tls_allowed(client, NAME) == 200
        assert portal.call(services.domains.check_due) == 0  # next due in a day
