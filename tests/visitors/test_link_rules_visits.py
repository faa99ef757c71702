"""Link rules on the visitor route, through the real app: each condition and action with real
user agents, Accept-Language and referrers, countries from a trusted proxy's header or the
[geoip] file; the start time, the cap on human clicks and the fallback; the rule and variant
each click keeps."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.conftest import bearer
from tests.support.asgi import call_app, http_scope
from tests.support.countries import write_country_file
from tests.support.visitors import (
    ANDROID_CHROME,
    DESKTOP,
    FACEBOOK_BOT,
    INSTAGRAM_IOS,
    IPHONE,
    YOUTUBE,
    flush,
    make_link,
)

pytestmark = pytest.mark.both_backends

PEER = "203.0.113.9"  # the trusted proxy
IPAD = (
    "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.5 Mobile/15E148 Safari/604.1"
)
GALAXY_TAB = (
    "Mozilla/5.0 (Linux; Android 13; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"
)
FRENCH_ADDRESS = "81.2.69.10"  # in the test's [geoip] file


class Service:
    def __init__(self, client, auth):
        self.client, self.auth = client, auth

    def link(self, rules: dict, **fields) -> dict:
        link = make_link(self.client, self.auth, **fields)
        response = self.client.put(f"/api/v1/links/{link['id']}/rules", json=rules, headers=self.auth)
        assert response.status_code == 200, response.text
        return link

    def visit(
        self, code: str, ua: str = DESKTOP, query: str = "", *, ip: str = "198.51.100.7", method="GET", **headers
    ):
        """(status, location or body) of a visit from `ip` behind the trusted proxy."""
        raw = [(b"user-agent", ua.encode()), (b"x-forwarded-for", ip.encode()), (b"host", b"127.0.0.1:8811")]
        raw += [(name.replace("_", "-").lower().encode(), value.encode()) for name, value in headers.items()]
        scope = http_scope(method, f"/l/{code}", raw, client=(PEER, 50000), server=("127.0.0.1", 8811), scheme="http")
        scope["query_string"] = query.encode()
        with self.client.portal() as portal:
            status, answer_headers, body = portal.call(call_app, self.client.app, scope)
        return status, answer_headers.get(b"location", b"").decode() or body.decode()


@pytest.fixture
def service(make_client, new_key, tmp_path):
    countries = write_country_file(tmp_path / "countries.mmdb", {"81.2.69.0/24": "FR"})
    client = make_client(
        links_short_host="http://127.0.0.1:8811",
        network_trusted_proxies=["203.0.113.0/24"],
        network_country_header="CF-IPCountry",
        geoip_path=str(countries),
    )
    return Service(client, bearer(new_key()))


RULES = {
    "rules": [
        {"conditions": [{"type": "device", "values": ["tablet"]}], "url": "https://example.com/tablet"},
        {"conditions": [{"type": "inApp", "values": ["instagram"]}], "url": "https://example.com/insta"},
        {"conditions": [{"type": "os", "values": ["ios"]}], "url": YOUTUBE},
        {
            "conditions": [{"type": "country", "values": ["DE", "FR"]}],
            "rewrite": {"table": "amazon", "hosts": {"FR": "www.amazon.fr"}},
        },
        {"conditions": [{"type": "language", "values": ["es"]}], "url": "https://example.com/es"},
        {"conditions": [{"type": "query", "values": ["ref=news"]}], "url": "https://example.com/news"},
        {"conditions": [{"type": "referrerHost", "values": ["ycombinator.com"]}], "url": "https://example.com/hn"},
        {
            "conditions": [{"type": "time", "values": ["2001-01-01T00:00:00Z/2001-01-02T00:00:00Z"]}],
            "url": "https://example.com/2001",
        },
        {
            "conditions": [{"type": "device", "values": ["phone"]}, {"type": "os", "values": ["android"]}],
            "split": [{"url": "https://example.com/a", "weight": 50}, {"url": "https://example.com/b", "weight": 50}],
        },
    ]
}


def test_each_condition_and_action_routes_the_visitor_and_the_click_keeps_its_rule(service, conn):
    link = service.link(RULES, originalUrl="https://www.amazon.com/dp/B0TEST?tag=shop-20")
    code = link["shortCode"]
    # device: real iPad and Android-tablet agents are tablets (before the iOS rule).
    assert service.visit(code, IPAD) == (302, "https://example.com/tablet")
    assert service.visit(code, GALAXY_TAB) == (302, "https://example.com/tablet")
    # inApp: Instagram's in-app browser.
    assert service.visit(code, INSTAGRAM_IOS) == (302, "https://example.com/insta")
    # os: the rule's URL is treated as a destination is: YouTube on an iPhone opens the app.
    plain = make_link(service.client, service.auth, originalUrl=YOUTUBE)["shortCode"]
    assert service.visit(code, IPHONE) == service.visit(plain, IPHONE)
    assert service.visit(code, IPHONE)[0] == 200 and "youtube://" in service.visit(code, IPHONE)[1]
    # country from the trusted proxy's header: the Amazon table keeps path and query.
    assert service.visit(code, ip="198.51.100.8", CF_IPCountry="DE") == (
        302,
        "https://www.amazon.de/dp/B0TEST?tag=shop-20",
    )
    # country from the [geoip] file, rewritten by the owner's own map; utm_* forwarded.
    assert service.visit(code, query="utm_source=mail", ip=FRENCH_ADDRESS) == (
        302,
        "https://www.amazon.fr/dp/B0TEST?tag=shop-20&utm_source=mail",
    )
    # language: the visitor's first choice counts.
    assert service.visit(code, Accept_Language="es-MX,es;q=0.9,en;q=0.8") == (302, "https://example.com/es")
    assert service.visit(code, Accept_Language="en-US,en;q=0.9,es;q=0.8")[1] == link["originalUrl"]
    # query and referrer host (a subdomain of the one named).
    assert service.visit(code, query="ref=news") == (302, "https://example.com/news")
    assert service.visit(code, Referer="https://news.ycombinator.com/item?id=1") == (302, "https://example.com/hn")
    # A past time window and no other rule: the link's own destination.
    assert service.visit(code) == (302, link["originalUrl"])
    # split on Android phones.
    assert service.visit(code, ANDROID_CHROME)[1] in ("https://example.com/a", "https://example.com/b")
    flush(service.client)
    kept = conn.execute(
        "SELECT rule, variant FROM click_rows WHERE link_id = (SELECT id FROM links WHERE short_code = ?) ORDER BY id",
        (code,),
    ).fetchall()
    rules = [row[0] for row in kept]
    assert rules == [0, 0, 1, 2, 2, 2, 3, 3, 4, None, 5, 6, None, 8]
    assert kept[-1][1] in (0, 1) and all(row[1] is None for row in kept[:-1])
    days = conn.execute("SELECT rule, variant, clicks FROM link_rule_days ORDER BY rule, variant").fetchall()
    assert [tuple(row) for row in days][:4] == [(0, -1, 2), (1, -1, 1), (2, -1, 3), (3, -1, 2)]


def test_a_split_is_sticky_per_visitor_and_uses_every_variant(service):
    split = [{"url": f"https://example.com/{n}", "weight": weight} for n, weight in enumerate((50, 30, 20))]
    code = service.link({"rules": [{"split": split}]})["shortCode"]
    first = [service.visit(code, ip=f"198.51.100.{n}")[1] for n in range(1, 121)]
    again = [service.visit(code, ip=f"198.51.100.{n}")[1] for n in range(1, 121)]
    assert first == again  # the same variant all day
    assert {urlsplit(url).path for url in first} == {"/0", "/1", "/2"}
    assert first.count("https://example.com/0") > first.count("https://example.com/2")


def test_start_time_cap_and_fallback_replace_the_closed_pages(service, conn):
    later = service.link({"rules": [], "startsAt": "2999-01-01T00:00:00Z"})["shortCode"]
    status, page = service.visit(later)
    assert status == 200 and "Not open yet" in page and "2999-01-01 at 00:00 UTC" in page
    later_with_fallback = service.link(
        {"rules": [], "startsAt": "2999-01-01T00:00:00Z", "fallbackUrl": "https://example.com/soon"}
    )["shortCode"]
    assert service.visit(later_with_fallback) == (302, "https://example.com/soon")
    # A paused link with a fallback goes there; without one, the spec's page is unchanged.
    paused = service.link({"rules": [], "fallbackUrl": "https://example.com/paused"})
    service.client.patch(f"/api/v1/links/{paused['id']}", json={"isActive": False}, headers=service.auth)
    assert service.visit(paused["shortCode"]) == (302, "https://example.com/paused")

    capped = service.link({"rules": [], "maxClicks": 3})
    code = capped["shortCode"]
    # Bots, previewers and HEAD requests never use the cap up.
    assert service.visit(code, FACEBOOK_BOT)[0] == 302
    assert service.visit(code, method="HEAD")[0] == 302
    assert [service.visit(code, ip=f"198.51.100.{n}")[0] for n in range(1, 6)] == [302, 302, 302, 410, 410]
    assert "limit of visits" in service.visit(code)[1]
    assert service.visit(code, FACEBOOK_BOT)[0] == 410  # bots see what people see
    flush(service.client)
    stored = conn.execute(
        "SELECT human_clicks FROM link_rules WHERE link_id = (SELECT id FROM links WHERE short_code = ?)", (code,)
    ).fetchone()[0]
    assert stored == 3
    # The fallback replaces the capped page.
    service.client.put(
        f"/api/v1/links/{capped['id']}/rules",
        json={"rules": [], "maxClicks": 3, "fallbackUrl": "https://example.com/sold-out"},
        headers=service.auth,
    )
    assert service.visit(code) == (302, "https://example.com/sold-out")
