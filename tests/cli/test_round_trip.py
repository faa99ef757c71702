"""Moving a whole install: seed one (links, tags, a password, a paused link, a month
of clicks with bots, referrers, campaigns and countries through the real recorder), export its
links and raw clicks with `shortlink export`, import both into a fresh install with `shortlink
import csv --clicks`, and every link, tag, redirect and analytics answer is the same there.
Also the raw clicks export itself: JSON lines, no visitor identity, a range, the API's stream."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from shortlink.times import utcnow
from tests.conftest import bearer, run_cli, storage_settings
from tests.support.visitors import IPHONE, flush, visit

EMAIL = "mover@example.com"


def cli(storage: str, *args: str) -> str:
    result = run_cli(*args, "--db", storage, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout


def new_key(storage: str) -> dict[str, str]:
    return bearer(json.loads(cli(storage, "key", "create", "--email", EMAIL, "--json"))["key"])


def without_ids(value):
    """An answer without the install's own ids (a fresh install numbers links anew) and the
    range (`days=7` ends at the moment of asking)."""
    if isinstance(value, dict):
        return {
            key: without_ids(item) for key, item in value.items() if key not in ("id", "linkId", "updatedAt", "range")
        }
    if isinstance(value, list):
        return [without_ids(item) for item in value]
    return value


def clicks_of(lines: str) -> list[str]:
    """The clicks in a stable order, without the visitor numbers: clicks of one millisecond
    come in either order, and the day's numbers with them (unique visitors are compared in
    the analytics answers)."""
    return sorted(
        json.dumps({key: value for key, value in json.loads(line).items() if key != "visitor"}, sort_keys=True)
        for line in lines.splitlines()
    )


@pytest.mark.slow
def test_an_install_moves_with_every_link_tag_redirect_and_analytics_answer(storage, make_client, tmp_path):
    # The old install: demo links with a month of clicks, then tags, a password and a pause.
    cli(storage, "demo", "seed", "--email", EMAIL, "--links", "12", "--clicks", "4000", "--days", "30")
    old = make_client()
    old_auth = new_key(storage)
    links = old.get("/api/v1/links", params={"limit": 100}, headers=old_auth).json()["data"]
    assert len(links) == 12
    old.put(
        f"/api/v1/links/{links[0]['id']}/tags",
        json={"tags": [{"name": "spring ✓", "colour": "#ff8800"}, {"name": "clients"}]},
        headers=old_auth,
    )
    old.put(f"/api/v1/links/{links[1]['id']}/tags", json={"tags": [{"name": "clients"}]}, headers=old_auth)
    old.patch(f"/api/v1/links/{links[2]['id']}", json={"isActive": False}, headers=old_auth)
    old.patch(f"/api/v1/links/{links[3]['id']}", json={"password": "a good password"}, headers=old_auth)

    links_file, clicks_file = tmp_path / "links.csv", tmp_path / "clicks.jsonl"
    links_file.write_text(cli(storage, "export", "--email", EMAIL), encoding="utf-8")
    clicks_file.write_text(cli(storage, "export", "--email", EMAIL, "--clicks"), encoding="utf-8")
    raw = [json.loads(line) for line in clicks_file.read_text().splitlines()]
    assert len(raw) == 4000 and any(click["is_bot"] for click in raw)
    assert {"ip", "visitor_hash", "ip_address"}.isdisjoint(raw[0]) and isinstance(raw[0]["visitor"], int)
    assert [click["time"] for click in raw] == sorted(click["time"] for click in raw)

    # The new install: both files in, one command.
    fresh = str(tmp_path / "fresh.db")
    result = run_cli(
        "import", "csv", str(links_file), "--clicks", str(clicks_file), "--email", EMAIL, "--json", "--db", fresh
    )
    report = json.loads(result.stdout)
    assert report["created"] == 12 and report["visits"] == 4000, report
    new = make_client(**storage_settings(fresh))
    new_auth = new_key(fresh)

    # Links (every field but the ids), tags, the export itself and the raw clicks: the same.
    def listing(client, auth):
        return without_ids(client.get("/api/v1/links", params={"limit": 100}, headers=auth).json()["data"])

    assert listing(new, new_auth) == listing(old, old_auth)
    assert cli(fresh, "export", "--email", EMAIL) == links_file.read_text(encoding="utf-8")
    assert clicks_of(cli(fresh, "export", "--email", EMAIL, "--clicks")) == clicks_of(clicks_file.read_text())
    new_links = {
        link["shortCode"]: link for link in new.get("/api/v1/links?limit=100", headers=new_auth).json()["data"]
    }

    # Analytics of the account and of every link, for a fixed range and the default one.
    today = utcnow().date()
    ranges = [{"from": (today - timedelta(days=40)).isoformat(), "to": today.isoformat()}, {"days": "7"}]
    for params in ranges:
        old_answer = old.get("/api/v1/analytics", params=params, headers=old_auth).json()
        assert old_answer["data"]["clicksInPeriod"] > 0
        assert without_ids(new.get("/api/v1/analytics", params=params, headers=new_auth).json()) == without_ids(
            old_answer
        )
        for link in links:
            path = f"/analytics?{'&'.join(f'{k}={v}' for k, v in params.items())}"
            old_link = old.get(f"/api/v1/links/{link['id']}{path}", headers=old_auth).json()
            moved = new_links[link["shortCode"]]["id"]
            new_link = new.get(f"/api/v1/links/{moved}{path}", headers=new_auth).json()
            assert without_ids(new_link) == without_ids(old_link), link["shortCode"]

    # Redirects: the same answer for every code (the password page and the paused one too).
    for link in links:
        before, after = visit(old, link["shortCode"], IPHONE), visit(new, link["shortCode"], IPHONE)
        assert (after.status_code, after.headers.get("location")) == (
            before.status_code,
            before.headers.get("location"),
        )

    # A second run changes nothing: no link, no click twice.
    flush(new)
    counted = len(cli(fresh, "export", "--email", EMAIL, "--clicks").splitlines())
    assert counted >= 4000
    again = run_cli(
        "import", "csv", str(links_file), "--clicks", str(clicks_file), "--email", EMAIL, "--json", "--db", fresh
    )
    assert json.loads(again.stdout)["unchanged"] == 12
    assert len(cli(fresh, "export", "--email", EMAIL, "--clicks").splitlines()) == counted


def test_raw_clicks_are_streamed_for_a_range_on_the_cli_the_api_and_the_dashboard(storage, client, auth, tmp_path):
    made = client.post(
        "/api/v1/links", json={"originalUrl": "https://example.com/r", "customCode": "ranged"}, headers=auth
    )
    assert made.status_code == 201
    for query in ("utm_source=mail", ""):
        assert visit(client, "ranged", IPHONE, query=query, referer="https://news.example/a?b").status_code in (
            200,
            302,
        )
    flush(client)
    answer = client.get("/api/v1/analytics/clicks", headers=auth)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/jsonl")
    clicks = [json.loads(line) for line in answer.text.splitlines()]
    assert [(click["code"], click["campaign"], click["referrer"]) for click in clicks] == [
        ("ranged", "mail", "news.example"),
        ("ranged", "", "news.example"),
    ]
    assert clicks[0]["visitor"] == clicks[1]["visitor"] == 1  # one visitor, twice, that day
    assert set(clicks[0]) == {
        "code", "time", "device", "browser", "os", "country", "referrer", "campaign", "user_agent", "visitor", "is_bot"
    }  # fmt: skip
    today = utcnow().date()
    yesterday = (today - timedelta(days=1)).isoformat()
    assert client.get(f"/api/v1/analytics/clicks?to={yesterday}", headers=auth).text == ""
    assert client.get(f"/api/v1/analytics/clicks?from={today}&to={today}", headers=auth).text == answer.text
    bad = client.get("/api/v1/analytics/clicks?from=yesterday", headers=auth)
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "VALIDATION_ERROR"
    assert "from" in bad.json()["error"]["message"]
    assert client.get("/api/v1/analytics/clicks").status_code == 401
    assert "/api/v1/analytics/clicks" in client.get("/api/v1/schema/openapi.json").json()["paths"]

    # The CLI writes the same lines; a bad date is one line, no traceback.
    assert (
        cli(storage, "export", "--email", "owner@example.com", "--clicks", "--from", today.isoformat()) == answer.text
    )
    failed = run_cli("export", "--email", "owner@example.com", "--clicks", "--to", "soon", "--db", storage, check=False)
    assert failed.returncode != 0 and failed.stderr.count("\n") == 1 and "Traceback" not in failed.stderr
