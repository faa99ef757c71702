"""`shortlink links show` prints a link's rules, and --json carries them as "rules"."""

from __future__ import annotations

import json

from tests.conftest import run_cli
from tests.support.helpers import wait_for

RULES = {
    "rules": [
        {
            "conditions": [{"type": "os", "values": ["ios"]}, {"type": "country", "values": ["DE", "AT"]}],
            "url": "https://example.com/ios-de",
        },
        {"split": [{"url": "https://example.com/a", "weight": 70}, {"url": "https://example.com/b", "weight": 30}]},
    ],
    "maxClicks": 500,
}


def test_links_show_prints_the_rules_and_json_carries_them(client, auth, storage):
    link = client.post("/api/v1/links", json={"originalUrl": "https://example.com/"}, headers=auth).json()["data"]
    plain = run_cli("links", "show", link["id"], "--db", storage).stdout
    assert "rules" in plain and plain.rstrip().endswith("-")
    client.put(f"/api/v1/links/{link['id']}/rules", json=RULES, headers=auth)
    shown = json.loads(run_cli("links", "show", link["id"], "--json", "--db", storage).stdout)
    assert (
        shown["id"] == link["id"]
        and shown["rules"] == client.get(f"/api/v1/links/{link['id']}/rules", headers=auth).json()["data"]
    )
    text = run_cli("links", "show", link["id"], "--db", storage).stdout
    assert "0. os ios and country DE, AT → https://example.com/ios-de" in text
    assert "1. every visitor → split 70% https://example.com/a, 30% https://example.com/b" in text
    assert "maxClicks 500" in text


def test_links_destination_sends_everyone_elsewhere_and_back_and_refuses_in_one_line(client, auth, storage):
    link = client.post("/api/v1/links", json={"originalUrl": "https://example.com/"}, headers=auth).json()["data"]
    shown = run_cli("links", "destination", link["id"], "--db", storage).stdout
    assert shown.startswith(f"{link['id']}: visitors go to https://example.com/ since ")
    moved = json.loads(
        run_cli("links", "destination", link["id"], "https://example.org/new", "--json", "--db", storage).stdout
    )
    api = client.get(f"/api/v1/links/{link['id']}/destination", headers=auth).json()
    assert moved == api and api["data"]["url"] == "https://example.org/new"
    assert api["data"]["history"][0]["door"] == "cli"
    # The server hears the change through the database, as it hears every CLI change.
    wait_for(
        lambda: (
            client.get(f"/l/{link['shortCode']}", follow_redirects=False).headers.get("location")
            == "https://example.org/new"
        ),
        what="the redirect to follow the CLI's change",
    )
    refused = run_cli("links", "destination", link["id"], "ftp://example.org/x", "--db", storage, check=False)
    assert refused.returncode == 1 and len(refused.stderr.strip().splitlines()) == 1
    assert refused.stderr.startswith("shortlink: url: "), refused.stderr
    both = run_cli("links", "destination", link["id"], "https://example.org/x", "--clear", "--db", storage, check=False)
    assert both.returncode == 1 and "give a URL or --clear, not both" in both.stderr
    back = run_cli("links", "destination", link["id"], "--clear", "--db", storage).stdout
    assert "visitors go to https://example.com/ since " in back and "(the address it was created for)" in back
    assert "  https://example.org/new  (cli)" in back
