"""Who the visitor is on the network: the country stored with a click and the key that
password attempts are counted under, through a real server process on 127.0.0.1 (the
test client's peer is no IP address, so proxies can only be trusted over a real socket).
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from shortlink.visits.password_entry import attempt_key
from tests.support.countries import write_country_file
from tests.support.helpers import wait_for
from tests.support.visitors import DESKTOP, make_link
from throwaway.live_server import LiveServer

pytestmark = pytest.mark.slow

GB_ADDRESS = "81.2.69.142"  # registered in GB (the bundled table)


class Server:
    """A running `shortlink serve` with an account, talked to over plain HTTP."""

    def __init__(self, directory, **settings: str):
        self.live = LiveServer(directory, **settings)
        self.key = self.live.create_key("net@example.com")
        self.live.start()

    def request(self, method: str, path: str, body: bytes | None = None, **headers: str):
        return self.live.request(method, path, body, headers)

    def link(self, **body) -> str:
        status, data = self.request(
            "POST",
            "/api/v1/links",
            json.dumps({"originalUrl": "https://example.com/", **body}).encode(),
            **{"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"},
        )
        assert status == 201, data
        return json.loads(data)["data"]["shortCode"]

    def countries(self, code: str, expected: int) -> list[str]:
        """Countries of the link's clicks, once the writer has stored `expected` of them."""

        def stored() -> list[str]:
            db = sqlite3.connect(self.live.db)
            try:
                rows = db.execute(
                    "SELECT country FROM clicks JOIN links ON links.id = clicks.link_id "
                    "WHERE short_code = ? ORDER BY clicks.id",
                    (code,),
                ).fetchall()
            finally:
                db.close()
            return [row[0] for row in rows]

        wait_for(lambda: len(stored()) >= expected, 10, f"{expected} clicks")
        return stored()

    def attempt(self, code: str, forwarded_for: str | None = None) -> int:
        headers = {"User-Agent": DESKTOP, "Content-Type": "application/x-www-form-urlencoded"}
        if forwarded_for:
            headers["X-Forwarded-For"] = forwarded_for
        return self.request("POST", f"/l/{code}", b"password=wrong", **headers)[0]


@pytest.fixture(scope="module")
def behind_proxy(tmp_path_factory):
    server = Server(
        tmp_path_factory.mktemp("proxied"),
        network_trusted_proxies="127.0.0.0/8",
        network_country_header="CF-IPCountry",
        limits_password_attempts_per_minute="2",
    )
    yield server
    server.live.stop()


@pytest.fixture(scope="module")
def direct(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("direct"), network_country_header="CF-IPCountry")
    yield server
    server.live.stop()


def test_country_comes_from_the_forwarded_address_or_the_trusted_proxys_header(behind_proxy):
    code = behind_proxy.link()
    for headers in (
        {"X-Forwarded-For": GB_ADDRESS},
        {"X-Forwarded-For": f"198.51.100.7, {GB_ADDRESS}"},  # rightmost untrusted hop
        {"X-Forwarded-For": GB_ADDRESS, "CF-IPCountry": "de"},  # the header wins
        {"CF-IPCountry": "XX"},  # "unknown": looked up
        {},
    ):
        assert behind_proxy.request("GET", f"/l/{code}", **{"User-Agent": DESKTOP, **headers})[0] == 302
    assert behind_proxy.countries(code, 5) == ["GB", "GB", "DE", "Unknown", "Unknown"]


def test_an_operators_country_file_places_the_visitors(tmp_path):
    countries = write_country_file(tmp_path / "countries.mmdb", {"81.2.69.0/24": "FR", "2001:db8:5::/48": "SE"})
    server = Server(tmp_path, network_trusted_proxies="127.0.0.0/8", geoip_path=str(countries))
    try:
        code = server.link()
        for forwarded in (GB_ADDRESS, "2001:db8:5::7", "8.8.8.8"):
            assert (
                server.request("GET", f"/l/{code}", **{"User-Agent": DESKTOP, "X-Forwarded-For": forwarded})[0] == 302
            )
        assert server.countries(code, 3) == ["FR", "SE", "Unknown"]  # the file alone decides
    finally:
        server.live.stop()


def test_an_untrusted_peer_cannot_choose_its_address_or_country(direct):
    code = direct.link()
    assert (
        direct.request(
            "GET", f"/l/{code}", **{"User-Agent": DESKTOP, "X-Forwarded-For": GB_ADDRESS, "CF-IPCountry": "FR"}
        )[0]
        == 302
    )
    assert direct.countries(code, 1) == ["Unknown"]  # 127.0.0.1 itself


def test_password_attempts_are_counted_per_visitor_and_link(behind_proxy):
    first, second = behind_proxy.link(password="open sesame"), behind_proxy.link(password="open sesame")
    assert [behind_proxy.attempt(first, "203.0.113.5") for _ in range(3)] == [403, 403, 429]
    assert behind_proxy.attempt(first, "203.0.113.6") == 403  # another visitor
    assert behind_proxy.attempt(second, "203.0.113.5") == 403  # another link


def test_ipv6_visitors_are_counted_by_their_64_prefix(behind_proxy):
    code = behind_proxy.link(password="open sesame")
    assert [behind_proxy.attempt(code, "2001:db8:1:2::1"), behind_proxy.attempt(code, "2001:db8:1:2::2")] == [403, 403]
    assert behind_proxy.attempt(code, "2001:db8:1:2:ffff:ffff:ffff:ffff") == 429  # same /64
    assert behind_proxy.attempt(code, "2001:db8:1:3::1") == 403  # another /64


def test_forwarded_for_from_an_untrusted_peer_cannot_split_the_count(make_client, new_key):
    # Proxies are configured, but the test client's peer is not one of them.
    client = make_client(limits_password_attempts_per_minute=2, network_trusted_proxies=["10.0.0.0/8"])
    code = make_link(client, {"Authorization": f"Bearer {new_key()}"}, password="open sesame")["shortCode"]
    statuses = [
        client.post(
            f"/l/{code}",
            data={"password": "wrong"},
            follow_redirects=False,
            headers={"User-Agent": DESKTOP, "X-Forwarded-For": f"203.0.113.{n}"},
        ).status_code
        for n in range(4)
    ]
    assert statuses == [403, 403, 429, 429]


@pytest.mark.parametrize(
    ("ip", "key"),
    [
        ("203.0.113.5", "203.0.113.5"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
        ("2001:DB8:1:2::", "2001:db8:1:2::/64"),
        ("::ffff:203.0.113.5", "203.0.113.5"),  # an IPv4 visitor on a dual-stack socket
        ("testclient", "testclient"),  # not an address: kept as it is
    ],
)
def test_attempt_key(ip, key):
    assert attempt_key(ip, 7) == (key, 7)
