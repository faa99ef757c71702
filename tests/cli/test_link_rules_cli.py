"""`shortlink links show` prints a link's rules, and --json carries them as "rules"."""

from __future__ import annotations

import json

from tests.conftest import run_cli

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
