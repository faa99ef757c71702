"""Imported links keep their old addresses: once the domain the old service printed
is connected (`shortlink domain add`), `https://OLD/<code>` answers as `/l/<code>` does."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_import import FIXTURES
from tests.conftest import bearer, run_cli
from tests.support.helpers import wait_for_domain
from tests.support.visitors import IPHONE, flush, make_link, visit

EMAIL = "owner@example.com"


@pytest.mark.both_backends
def test_an_imported_short_path_works_on_its_old_domain_once_connected(storage, client, auth, conn):
    imported = run_cli("import", "shlink", str(FIXTURES / "shlink-short_urls.csv"), "--email", EMAIL, "--json",
                       "--db", storage, check=False)  # fmt: skip
    assert json.loads(imported.stdout)["created"] == 2  # `menu` and `taken`; the other rows are refused or skipped
    old = "s.example.com"  # where Shlink served https://s.example.com/menu

    # Before the domain is connected, the old address is nobody's.
    assert client.get("/menu", headers={"Host": old, "User-Agent": IPHONE}, follow_redirects=False).status_code == 404

    run_cli("domain", "add", "--email", EMAIL, old, "--db", storage)
    wait_for_domain(client, old)
    followed = client.get("/menu", headers={"Host": old, "User-Agent": IPHONE}, follow_redirects=False)
    assert followed.status_code == 302 and followed.headers["location"] == "https://example.com/menu?lang=es"
    head = client.head("/menu", headers={"Host": old, "User-Agent": IPHONE}, follow_redirects=False)
    assert head.status_code == 302 and head.content == b""
    assert visit(client, "menu", IPHONE, host=old).status_code == 302  # and /l/menu there, as for any link
    flush(client)
    assert (
        conn.execute("SELECT count(*) FROM clicks").fetchone()[0] == 2
    )  # both GETs counted as clicks (a HEAD never is)

    # Only on the custom domain, and only its own account's codes.
    assert client.get("/menu", headers={"User-Agent": IPHONE}, follow_redirects=False).status_code == 404
    other_key = run_cli("key", "create", "--email", "other@example.com", "--json", "--db", storage)
    other = make_link(client, bearer(json.loads(other_key.stdout)["key"]), customCode="others")
    assert client.get(f"/{other['shortCode']}", headers={"Host": old}, follow_redirects=False).status_code == 404
    assert client.get("/nothing-here", headers={"Host": old}, follow_redirects=False).status_code == 404
    # The service's own paths stay what they are on that host.
    assert client.get("/healthz", headers={"Host": old}).status_code == 200
    assert client.get("/links", headers={"Host": old}, follow_redirects=False).status_code == 303  # to /login

    # A protected link asks for its password at the old address and lets the visitor through.
    made = make_link(client, auth, customCode="secret", password="a good password")
    page = client.get("/secret", headers={"Host": old, "User-Agent": IPHONE}, follow_redirects=False)
    assert page.status_code == 200 and '<form method="post">' in page.text
    unlocked = client.post(
        "/secret", data={"password": "a good password"}, headers={"Host": old, "User-Agent": IPHONE},
        follow_redirects=False,
    )  # fmt: skip
    assert unlocked.status_code == 303 and unlocked.headers["location"] == made["originalUrl"]
