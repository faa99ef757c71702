"""GET/PUT /api/v1/links/{id}/rules through the real app: the document, its validation (every
error names the rule and the field), the gate, and the rules' life with their link."""

from __future__ import annotations

import contextlib
import json
import sqlite3

import pytest

from shortlink.accounts import service as accounts
from tests.conftest import bearer, run_cli
from tests.support.helpers import error_of


def create(client, auth, url: str = "https://www.amazon.com/dp/B0TEST?tag=x", **fields) -> dict:
    response = client.post("/api/v1/links", json={"originalUrl": url, **fields}, headers=auth)
    assert response.status_code == 201, response.text
    return response.json()["data"]


DOCUMENT = {
    "rules": [
        {
            "conditions": [{"type": "device", "values": ["phone"]}, {"type": "os", "values": ["iOS"]}],
            "url": "https://example.com/ios",
        },
        {
            "conditions": [{"type": "country", "values": ["de", "AT"]}],
            "rewrite": {"table": "amazon", "hosts": {"at": "www.amazon.at"}},
        },
        {
            "conditions": [{"type": "language", "values": ["FR"]}, {"type": "inApp", "values": ["any"]}],
            "url": "https://example.com/fr",
        },
        {
            "conditions": [
                {"type": "query", "values": ["ref=news"]},
                {"type": "referrerHost", "values": ["News.YCombinator.com"]},
            ],
            "url": "https://example.com/hn",
        },
        {
            "conditions": [
                {"type": "time", "values": ["09:00-17:00", "2030-01-01T00:00:00+01:00/2030-02-01T00:00:00Z"]}
            ],
            "url": "https://example.com/office",
        },
        {"split": [{"url": "https://example.com/a", "weight": 50}, {"url": "https://example.com/b", "weight": 50}]},
    ],
    "startsAt": "2020-01-01T00:00:00+02:00",
    "maxClicks": 1000,
    "fallbackUrl": "https://example.com/sold-out",
}


@pytest.mark.both_backends
def test_rules_are_stored_normalised_read_back_and_go_with_their_link(client, auth, conn):
    link = create(client, auth)
    assert client.get(f"/api/v1/links/{link['id']}/rules", headers=auth).json() == {
        "data": {"rules": [], "startsAt": None, "maxClicks": None, "fallbackUrl": None}
    }
    response = client.put(f"/api/v1/links/{link['id']}/rules", json=DOCUMENT, headers=auth)
    assert response.status_code == 200, response.text
    stored = response.json()["data"]
    assert stored["rules"][0]["conditions"] == [
        {"type": "device", "values": ["phone"]},
        {"type": "os", "values": ["ios"]},
    ]
    assert stored["rules"][1]["conditions"][0]["values"] == ["DE", "AT"]
    assert stored["rules"][1]["rewrite"] == {"table": "amazon", "hosts": {"AT": "www.amazon.at"}}
    assert stored["rules"][2]["conditions"][0]["values"] == ["fr"]
    assert stored["rules"][3]["conditions"][1]["values"] == ["news.ycombinator.com"]
    assert stored["rules"][5]["split"] == DOCUMENT["rules"][5]["split"]
    assert stored["startsAt"] == "2019-12-31T22:00:00.000Z"
    assert (stored["maxClicks"], stored["fallbackUrl"]) == (1000, "https://example.com/sold-out")
    assert client.get(f"/api/v1/links/{link['id']}/rules", headers=auth).json()["data"] == stored
    # The spec's Link object gains no field.
    assert "rules" not in client.get(f"/api/v1/links/{link['id']}", headers=auth).json()["data"]
    # An empty document removes the row; deleting the link deletes its rules.
    client.put(f"/api/v1/links/{link['id']}/rules", json={"rules": []}, headers=auth)
    assert conn.execute("SELECT count(*) FROM link_rules").fetchone()[0] == 0
    client.put(f"/api/v1/links/{link['id']}/rules", json=DOCUMENT, headers=auth)
    assert conn.execute("SELECT count(*) FROM link_rules").fetchone()[0] == 1
    assert client.delete(f"/api/v1/links/{link['id']}", headers=auth).status_code == 200
    assert conn.execute("SELECT count(*) FROM link_rules").fetchone()[0] == 0


def url_rule(url: str = "https://example.com/x", **rule) -> dict:
    return {"conditions": [{"type": "device", "values": ["phone"]}], "url": url, **rule}


SPLIT_60_50 = [{"url": "https://example.com/a", "weight": 60}, {"url": "https://example.com/b", "weight": 50}]


@pytest.mark.parametrize(
    ("document", "field", "message"),
    [
        (
            {"rules": [url_rule(), {"conditions": [{"type": "planet", "values": ["mars"]}], "url": "https://e.com/"}]},
            "rules[1].conditions[0].type",
            "unknown condition 'planet'",
        ),
        (
            {"rules": [{"conditions": [{"type": "country", "values": ["DE", "XX"]}], "url": "https://e.com/"}]},
            "rules[0].conditions[0].values[1]",
            "unknown country 'XX'",
        ),
        (
            {"rules": [{"conditions": [{"type": "os", "values": []}], "url": "https://e.com/"}]},
            "rules[0].conditions[0].values",
            "at least one value",
        ),
        ({"rules": [{"split": []}]}, "rules[0].split", "2-10 variants"),
        ({"rules": [{"split": SPLIT_60_50}]}, "rules[0].split", "sum to 100 (they sum to 110)"),
        (
            {"rules": [{"split": [SPLIT_60_50[0], {**SPLIT_60_50[0], "weight": 40}]}]},
            "rules[0].split[1].url",
            "already a variant",
        ),
        ({"rules": [{"url": "https://e.com/all"}, url_rule()]}, "rules[1]", "never reached: rules[0]"),
        ({"rules": [url_rule() for _ in range(51)]}, "rules", "at most 50 rules"),
        ({"rules": [url_rule("javascript:alert(1)")]}, "rules[0].url", "http or https"),
        ({"rules": [url_rule(), url_rule("https://sho.rt/l/selfie")]}, "rules[1].url", "own short URL"),
        (
            {"rules": [{"conditions": [], "url": "https://e.com/", "split": SPLIT_60_50}]},
            "rules[0]",
            "exactly one action",
        ),
        ({"rules": [{"rewrite": {"table": "ebay"}}]}, "rules[0].rewrite.table", "unknown table"),
        (
            {"rules": [{"conditions": [{"type": "time", "values": ["tomorrow"]}], "url": "https://e.com/"}]},
            "rules[0].conditions[0].values[0]",
            "daily UTC window",
        ),
        (
            {"rules": [{"conditions": [{"type": "query", "values": ["ref"]}], "url": "https://e.com/"}]},
            "rules[0].conditions[0].values[0]",
            "name=value",
        ),
        ({"rules": [], "maxClicks": 0}, "maxClicks", "must be 1-"),
        ({"rules": [], "fallbackUrl": "ftp://e.com/"}, "fallbackUrl", "http or https"),
        ({"rules": [], "startsAt": "soon"}, "startsAt", "ISO 8601"),
        (
            {"rules": [{"conditions": [{"type": "os", "values": ["ios"], "not": True}], "url": "https://e.com/"}]},
            "rules[0].conditions[0]",
            "unknown field `not`",
        ),
    ],
)
def test_bad_rules_are_the_spec_validation_error_naming_rule_and_field(client, auth, document, field, message):
    link = create(client, auth, customCode="selfie")
    response = client.put(f"/api/v1/links/{link['id']}/rules", json=document, headers=auth)
    assert response.status_code == 400, response.text
    assert error_of(response) == "VALIDATION_ERROR"
    text = response.json()["error"]["message"]
    assert text.startswith(f"{field}: ") and message in text, text


def test_rules_of_another_accounts_link_are_not_found_and_the_gate_applies(client, auth, new_key, conn):
    other = bearer(new_key("other@example.com"))
    link = create(client, auth)
    for call in (
        lambda headers: client.get(f"/api/v1/links/{link['id']}/rules", headers=headers),
        lambda headers: client.put(f"/api/v1/links/{link['id']}/rules", json={"rules": []}, headers=headers),
    ):
        assert error_of(call(other)) == "NOT_FOUND"
        assert call({}).status_code == 401
        assert "X-RateLimit-Limit" in call(auth).headers
    accounts.set_subscription(conn, "owner@example.com", False)
    assert error_of(client.get(f"/api/v1/links/{link['id']}/rules", headers=auth)) == "SUBSCRIPTION_REQUIRED"
    schema = client.get("/api/v1/schema/openapi.json").json()
    assert {"get", "put"} <= set(schema["paths"]["/api/v1/links/{id}/rules"])


def test_rules_travel_with_a_backup(client, auth, storage, tmp_path):
    link = create(client, auth)
    stored = client.put(f"/api/v1/links/{link['id']}/rules", json=DOCUMENT, headers=auth).json()["data"]
    copy = tmp_path / "copy.db"
    run_cli("backup", str(copy), "--db", storage)
    with contextlib.closing(sqlite3.connect(copy)) as conn:
        (document,) = conn.execute("SELECT document FROM link_rules").fetchone()
    assert json.loads(document) == stored


IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1"
)
ANDROID = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.6778.81 Mobile Safari/537.36"
)

WINDOWS = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:130.0) Gecko/20100101 Firefox/130.0"


@pytest.mark.both_backends
def test_the_tester_answers_what_a_visitor_would_get_and_records_nothing(client, auth, conn):
    link = create(client, auth)
    rules = {
        "rules": [
            {"conditions": [{"type": "os", "values": ["ios"]}], "url": "https://www.youtube.com/watch?v=dQw4w9WgXcQ"},
            {"conditions": [{"type": "country", "values": ["DE"]}], "rewrite": {"table": "amazon"}},
            {"conditions": [{"type": "language", "values": ["fr"]}], "url": "https://example.com/fr"},
            {
                "conditions": [{"type": "time", "values": ["2030-01-01T00:00:00Z/2030-01-02T00:00:00Z"]}],
                "url": "https://example.com/new-year",
            },
            {
                "conditions": [{"type": "referrerHost", "values": ["t.co"]}],
                "split": [
                    {"url": "https://example.com/a", "weight": 50},
                    {"url": "https://example.com/b", "weight": 50},
                ],
            },
        ],
        "maxClicks": 1,
        "fallbackUrl": "https://example.com/gone",
    }
    client.put(f"/api/v1/links/{link['id']}/rules", json=rules, headers=auth)

    def test(**visit) -> dict:
        response = client.post(f"/api/v1/links/{link['id']}/rules/test", json=visit, headers=auth)
        assert response.status_code == 200, response.text
        return response.json()["data"]

    iphone = test(userAgent=IPHONE)
    assert (iphone["rule"], iphone["status"], iphone["page"]) == (0, 200, "ios")
    assert iphone["appUrl"] and iphone["location"].startswith("https://www.youtube.com/")
    german = test(userAgent=WINDOWS, country="de", query="utm_source=x")
    assert german["rule"] == 1 and german["location"] == "https://www.amazon.de/dp/B0TEST?tag=x&utm_source=x"
    on_android = test(userAgent=ANDROID, country="DE")  # the rewritten destination opens the app
    assert on_android["location"].startswith("intent://www.amazon.de/dp/B0TEST?tag=x#Intent;")
    assert test(userAgent=ANDROID, acceptLanguage="fr-FR,fr;q=0.9")["location"] == "https://example.com/fr"
    assert test(userAgent=ANDROID, time="2030-01-01T12:00:00+01:00")["rule"] == 3
    split = test(userAgent=ANDROID, referrer="https://t.co/abc")
    assert (split["rule"], split["variant"] in (0, 1)) == (4, True)
    assert test(userAgent=WINDOWS) == {
        "rule": None,
        "variant": None,
        "status": 302,
        "location": link["originalUrl"],
        "page": None,
        "appUrl": None,
    }
    # Before a start time: the fallback; the tester neither records nor uses up the cap.
    rules["startsAt"] = "2999-01-01T00:00:00Z"
    client.put(f"/api/v1/links/{link['id']}/rules", json=rules, headers=auth)
    assert test(userAgent=ANDROID)["location"] == "https://example.com/gone"
    assert test(userAgent=ANDROID, time="3000-01-01T00:00:00Z")["status"] == 302
    del rules["fallbackUrl"]
    client.put(f"/api/v1/links/{link['id']}/rules", json=rules, headers=auth)
    assert test(userAgent=ANDROID) == {
        "rule": None,
        "variant": None,
        "status": 200,
        "location": None,
        "page": "notYet",
        "appUrl": None,
    }
    assert conn.execute("SELECT count(*) FROM click_rows").fetchone()[0] == 0
    bad = client.post(f"/api/v1/links/{link['id']}/rules/test", json={"country": "XX"}, headers=auth)
    assert error_of(bad) == "VALIDATION_ERROR" and bad.json()["error"]["message"].startswith("country: ")
    bad = client.post(f"/api/v1/links/{link['id']}/rules/test", json={"time": "noon"}, headers=auth)
    assert bad.json()["error"]["message"].startswith("time: ")


@pytest.mark.both_backends
def test_rule_analytics_count_human_clicks_and_visitors_per_rule_and_variant_per_day(client, auth):
    link = create(client, auth)
    split = [{"url": "https://example.com/a", "weight": 50}, {"url": "https://example.com/b", "weight": 50}]
    rules = {
        "rules": [
            {"conditions": [{"type": "os", "values": ["ios"]}], "url": "https://example.com/ios"},
            {"conditions": [{"type": "os", "values": ["android"]}], "split": split},
        ]
    }
    client.put(f"/api/v1/links/{link['id']}/rules", json=rules, headers=auth)
    code = link["shortCode"]
    for agent in (
        IPHONE,
        IPHONE,
        ANDROID,
        "facebookexternalhit/1.1",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Firefox/130.0",
    ):
        assert client.get(f"/l/{code}", headers={"User-Agent": agent}, follow_redirects=False).status_code == 302
    with client.portal() as portal:
        portal.call(client.app.state.services.recorder.flush)
    answer = client.get(f"/api/v1/links/{link['id']}/rules/analytics", params={"days": "7"}, headers=auth).json()[
        "data"
    ]
    assert answer["linkId"] == link["id"] and answer["from"] <= answer["to"]
    today = answer["to"]
    ios, android = answer["rules"]
    assert ios == {
        "rule": 0,
        "variant": None,
        "clicks": 2,
        "uniqueVisitors": 1,
        "days": [{"date": today, "clicks": 2, "uniqueVisitors": 1}],
    }
    assert (android["rule"], android["variant"] in (0, 1), android["clicks"]) == (1, True, 1)  # the bot is not counted
    empty = client.get(
        f"/api/v1/links/{link['id']}/rules/analytics", params={"from": "2020-01-01", "to": "2020-01-31"}, headers=auth
    )
    assert empty.json()["data"]["rules"] == []
    bad = client.get(f"/api/v1/links/{link['id']}/rules/analytics", params={"from": "yesterday"}, headers=auth)
    assert error_of(bad) == "VALIDATION_ERROR"


@pytest.mark.both_backends
def test_every_destination_a_rule_can_send_to_honours_the_blocklist(make_client, api_key):
    """A host rewrite, a rule's URL, a split's variant and the fallback go through the check a
    link's destination does (a rewrite once sent visitors in Germany to a blocked host)."""
    client, auth = make_client(public_blocked_hosts=["blocked.example", "amazon.de"]), bearer(api_key)
    link = create(client, auth)
    rules = f"/api/v1/links/{link['id']}/rules"
    germany = [{"type": "country", "values": ["DE"]}]
    for document, field, message in (
        (
            {"rules": [{"conditions": germany, "rewrite": {"hosts": {"de": "WWW.Blocked.Example."}}}]},
            "rules[0].rewrite.hosts.DE",
            "www.blocked.example (under blocked.example) is a host this service does not link to",
        ),
        (
            {"rules": [{"conditions": germany, "rewrite": {"table": "amazon"}}]},
            "rules[0].rewrite.table",
            "the amazon table sends visitors in DE to amazon.de, which this service does not link to;"
            " map DE to another host in hosts",
        ),
        (
            {"rules": [url_rule(), {"conditions": germany, "rewrite": {"hosts": {"FR": "sho.rt"}}}]},
            "rules[1].rewrite.hosts.FR",
            "sho.rt is this service's own host; a rewrite may not lead back into it",
        ),
        (
            {"rules": [url_rule("https://blocked.example/de")]},
            "rules[0].url",
            "leads to blocked.example, which this service does not link to",
        ),
        (
            {
                "rules": [
                    {
                        "split": [
                            {"url": "https://e.com/a", "weight": 50},
                            {"url": "https://x.blocked.example/", "weight": 50},
                        ]
                    }
                ]
            },
            "rules[0].split[1].url",
            "leads to blocked.example, which this service does not link to",
        ),
        (
            {"rules": [], "fallbackUrl": "https://blocked.example/"},
            "fallbackUrl",
            "leads to blocked.example, which this service does not link to",
        ),
    ):
        response = client.put(rules, json=document, headers=auth)
        assert response.status_code == 400 and error_of(response) == "VALIDATION_ERROR", response.text
        assert response.json()["error"]["message"] == f"{field}: {message}"
    assert client.get(rules, headers=auth).json()["data"]["rules"] == []
    # The owner's own hosts for every country the table would send to a blocked store: accepted.
    mapped = {"table": "amazon", "hosts": dict.fromkeys(("DE", "AT", "CH"), "www.amazon.co.uk")}
    accepted = client.put(rules, json={"rules": [{"conditions": germany, "rewrite": mapped}]}, headers=auth)
    assert accepted.status_code == 200, accepted.text
    visit = client.post(f"{rules}/test", json={"country": "DE"}, headers=auth).json()["data"]
    assert visit["location"].startswith("https://www.amazon.co.uk/dp/B0TEST"), visit


@pytest.mark.both_backends
def test_rules_that_lead_back_to_their_link_through_our_short_links_are_refused(client, auth):
    """A rule's URL may be another of our short links, but not one whose destination, rules or
    fallback lead back to this link, however many of our short links lie between."""
    home = create(client, auth, "https://example.com/home", customCode="loop-home")
    back = create(client, auth, "https://sho.rt/l/loop-home", customCode="loop-back")
    far = create(client, auth, "https://example.com/far", customCode="loop-far")
    elsewhere = create(client, auth, "https://example.com/else", customCode="loop-else")
    # loop-far's rule goes to loop-back, whose destination is loop-home.
    rule_to_back = {"rules": [{"conditions": [{"type": "os", "values": ["ios"]}], "url": "https://sho.rt/l/loop-back"}]}
    assert client.put(f"/api/v1/links/{far['id']}/rules", json=rule_to_back, headers=auth).status_code == 200
    home_rules = f"/api/v1/links/{home['id']}/rules"
    for document, field, message in (
        (
            {"rules": [url_rule("https://SHO.RT./l/loop-back")]},
            "rules[0].url",
            "leads to /l/loop-back, which leads back to this link (/l/loop-home): a loop",
        ),
        (
            {"rules": [url_rule(), url_rule("https://sho.rt/l/loop-far?x=1")]},
            "rules[1].url",
            "leads to /l/loop-far, which leads back to this link (/l/loop-home) through /l/loop-back: a loop",
        ),
        (
            {"rules": [], "fallbackUrl": "https://sho.rt/l/loop-far"},
            "fallbackUrl",
            "leads to /l/loop-far, which leads back to this link (/l/loop-home) through /l/loop-back: a loop",
        ),
        (
            {
                "rules": [
                    {
                        "split": [
                            {"url": "https://e.com/a", "weight": 50},
                            {"url": "https://sho.rt/l/loop-home/", "weight": 50},
                        ]
                    }
                ]
            },
            "rules[0].split[1].url",
            "must not be this link's own short URL (/l/loop-home)",
        ),
    ):
        response = client.put(home_rules, json=document, headers=auth)
        assert response.status_code == 400 and error_of(response) == "VALIDATION_ERROR", response.text
        assert response.json()["error"]["message"].startswith(f"{field}: {message}"), response.text
    # Our short links that lead elsewhere are fine, as a link's destination may be one.
    fine = {
        "rules": [url_rule("https://sho.rt/l/loop-else")],
        "fallbackUrl": f"https://sho.rt/l/{elsewhere['shortCode']}",
    }
    assert client.put(home_rules, json=fine, headers=auth).status_code == 200
    assert back["shortCode"] == "loop-back"
