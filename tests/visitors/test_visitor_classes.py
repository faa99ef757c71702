"""Visitors the published lists disagree on, through the real app: whether their click counts
as a person's, and what an in-app browser among them is offered (docs/bots.md)."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

from tests.support import paths
from tests.support.html_page import Page
from tests.support.visitors import DESKTOP, PLAY, YOUTUBE, clicks, flush, make_link, visit

pytestmark = pytest.mark.both_backends

AGENTS = {row["name"]: row["ua"] for row in json.loads((paths.CORPUS / "user_agents.json").read_text("utf-8"))}
PEOPLE = [
    "android wechat x5 tbs",
    "android wechat x5 tbs glued",
    "iphone wechat devtools",
    "android qq x5 tbs",
    "iphone qq",
    "android facebook app bracket only",
    "android google app",
    "android google app bare",
]
PROGRAMS = {
    "google messages previewer": AGENTS["google messages previewer"],
    "sql injection": DESKTOP + "' OR 1=1--",
    "php tag": DESKTOP + "<?=print(9347655345-4954366);?>",
    "burp collaborator": DESKTOP + " root@8f6gtjctw9glvnasfrq438tprig56wty20ghwkf9.burpcollaborator.net",
}


def test_people_in_apps_count_and_previewers_and_payloads_do_not(client, auth, conn):
    link = make_link(client, auth)
    agents = [AGENTS[name] for name in PEOPLE] + list(PROGRAMS.values())
    for agent in agents:
        # Facebook's in-app browser is offered "Open in browser" first, the others go straight on.
        assert visit(client, link["shortCode"], ua=agent).status_code in (200, 302)
    flush(client)
    recorded = {row["user_agent"]: row["is_bot"] for row in clicks(conn)}
    assert recorded == {agent: int(agent in PROGRAMS.values()) for agent in agents}


@pytest.mark.parametrize(
    "name", ["android qq x5 tbs", "android google app", "android google app bare", "android wechat x5 tbs"]
)
def test_an_app_link_in_qq_wechat_or_the_google_app_gets_the_in_app_page(client, auth, name):
    """Their webviews are in-app browsers: "Open in app" (an intent) and "Continue", no escape
    (none is known to work in them), where a plain redirect would only open the website."""
    code = make_link(client, auth, originalUrl=YOUTUBE, androidUrl=PLAY)["shortCode"]
    response = visit(client, code, ua=AGENTS[name])
    assert response.status_code == 200
    intent = (
        "intent://www.youtube.com/watch?v=dQw4w9WgXcQ#Intent;scheme=https;"
        "package=com.google.android.youtube;S.browser_fallback_url=" + quote(PLAY, safe="") + ";end"
    )
    assert Page(response.text).anchors == [(intent, "Open in app"), (YOUTUBE, "Continue")]


def test_the_facebook_apps_bare_agent_gets_facebooks_in_app_page(client, auth):
    code = make_link(client, auth, originalUrl=YOUTUBE)["shortCode"]
    response = visit(client, code, ua=AGENTS["android facebook app bracket only"])
    assert response.status_code == 200
    labels = [label for _, label in Page(response.text).anchors]
    assert labels == ["Open in app", "Open in browser", "Continue"]


def test_a_link_rule_sends_qq_and_google_app_visitors_on_by_their_app(client, auth):
    link = make_link(client, auth)
    document = {
        "rules": [
            {"conditions": [{"type": "inApp", "values": ["qq"]}], "url": "https://example.com/qq"},
            {"conditions": [{"type": "inApp", "values": ["google"]}], "url": "https://example.com/google"},
        ]
    }
    response = client.put(f"/api/v1/links/{link['id']}/rules", json=document, headers=auth)
    assert response.status_code == 200, response.text
    for name, location in (
        ("iphone qq", "https://example.com/qq"),
        ("android google app bare", "https://example.com/google"),
        ("iphone google app", "https://example.com/google"),
        ("android wechat x5 tbs", "https://example.com/a?b=1#top"),
    ):
        response = visit(client, link["shortCode"], ua=AGENTS[name])
        assert (response.status_code, response.headers["location"]) == (302, location), name
