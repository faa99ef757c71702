"""The link-rules editor through the real app: add, edit, reorder and delete rules from the
form, weights that must sum to 100 refused beside their rule, the limits, "Try as a visitor",
and the clicks per rule."""

from __future__ import annotations

import html
import re

import pytest

from tests.support.dashboard import as_browser, create_link, post, signed_in
from tests.support.visitors import DESKTOP, INSTAGRAM_IOS, IPHONE, YOUTUBE

pytestmark = pytest.mark.both_backends


@pytest.fixture
def make_client(make_client):
    """The app as a browser on the https short host sees it (its cookies are Secure)."""
    return lambda **overrides: as_browser(make_client(**overrides), "links_short_host" in overrides)


def rules_of(client, link_id: str) -> dict:
    with client.portal() as portal:
        document = portal.call(client.app.state.services.link_rules.rules, 1, link_id)
    return document


def test_rules_are_added_edited_reordered_and_deleted_from_the_editor(make_client, conn):
    client = signed_in(make_client, conn)
    link_id = create_link(client, originalUrl="https://www.amazon.com/dp/B0DASH")
    editor = f"/links/{link_id}/rules"
    assert f'href="{editor}"' in client.get(f"/links/{link_id}").text
    page = client.get(editor)
    assert page.status_code == 200 and "Add a rule" in page.text and "No rule has sent a visitor" in page.text
    # Add: the blank card, filled.
    added = post(
        client,
        editor,
        {"count": "0", "r0-country": "de, at", "r0-action": "rewrite", "r0-table": "amazon", "op": "save"},
        page=editor,
    )
    assert added.status_code == 303 and added.headers["location"] == f"{editor}?saved=1"
    # A split whose weights miss 100 is refused beside its card, with what was typed kept.
    split = {"r1-os": "android", "r1-action": "split", "r1-split": "60 https://example.com/a\n30 https://example.com/b"}
    base = {"count": "1", "r0-country": "DE, AT", "r0-action": "rewrite", "r0-table": "amazon"}
    refused = post(client, editor, {**base, **split, "op": "save"}, page=editor)
    assert refused.status_code == 400
    assert 'id="e-rule-1">rules[1].split: weights must sum to 100 (they sum to 90)' in html.unescape(refused.text)
    assert "60 https://example.com/a" in refused.text and 'role="alert"' in refused.text
    split["r1-split"] = "60 https://example.com/a\n40 https://example.com/b"
    assert post(client, editor, {**base, **split, "op": "save"}, page=editor).status_code == 303
    document = rules_of(client, link_id)
    assert [rule.conditions[0].type for rule in document.rules] == ["country", "os"]
    # Reorder, then delete, then the limits.
    both = {"count": "2", **{key.replace("r1", "r1"): value for key, value in split.items()}, **base}
    assert post(client, editor, {**both, "op": "down-0"}, page=editor).status_code == 303
    assert [rule.conditions[0].type for rule in rules_of(client, link_id).rules] == ["os", "country"]
    swapped = {
        "count": "2",
        "r0-os": "android",
        "r0-action": "split",
        "r0-split": split["r1-split"],
        "r1-country": "DE",
        "r1-action": "rewrite",
        "r1-table": "amazon",
    }
    limits = {"maxClicks": "100", "fallbackUrl": "https://example.com/over", "startsAt": "2030-01-01T09:00"}
    assert post(client, editor, {**swapped, **limits, "op": "delete-0"}, page=editor).status_code == 303
    document = rules_of(client, link_id)
    assert [rule.conditions[0].type for rule in document.rules] == ["country"]
    assert (document.max_clicks, document.fallback_url, document.starts_at) == (
        100,
        "https://example.com/over",
        "2030-01-01T09:00:00.000Z",
    )
    shown = client.get(editor).text
    assert 'value="DE"' in shown and 'value="2030-01-01T09:00"' in shown and 'value="100"' in shown


def test_try_as_a_visitor_and_the_clicks_per_rule(make_client, conn):
    client = signed_in(make_client, conn)
    link_id = create_link(client, originalUrl="https://www.amazon.com/dp/B0DASH")
    editor = f"/links/{link_id}/rules"
    post(
        client,
        editor,
        {"count": "0", "r0-os": "windows", "r0-action": "url", "r0-url": "https://example.com/pc", "op": "save"},
        page=editor,
    )
    windows = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:130.0) Gecko/20100101 Firefox/130.0"
    tried = post(client, f"{editor}/try", {"userAgent": windows, "country": "", "acceptLanguage": "en"}, page=editor)
    assert tried.status_code == 200
    assert "Rule 1 holds." in tried.text and "https://example.com/pc" in tried.text
    bad = post(client, f"{editor}/try", {"userAgent": windows, "country": "XX"}, page=editor)
    assert bad.status_code == 400 and "country: unknown country" in html.unescape(bad.text)
    code = client.get(f"/links/{link_id}").text.split("/l/")[1].split('"')[0]
    for _ in range(3):
        assert client.get(f"/l/{code}", headers={"User-Agent": windows}, follow_redirects=False).status_code == 302
    with client.portal() as portal:
        portal.call(client.app.state.services.recorder.flush)
    stats = client.get(editor).text
    assert '<meter min="0" max="3" value="3"' in stats and "Rule 1" in stats


def test_the_editor_reads_the_cards_the_form_sent_not_a_count_it_states(make_client, conn):
    """Every card the form sent is read, whatever a `count` field says (a stated count of ten
    million once held the event loop for 100 s); more cards than the rule limit are refused."""
    client = signed_in(make_client, conn)
    link_id = create_link(client, originalUrl="https://example.com/landing")
    editor = f"/links/{link_id}/rules"
    cards = {
        "r0-country": "DE",
        "r0-url": "https://example.com/de",
        "r7-country": "FR",
        "r7-url": "https://example.com/fr",
        "r9-url": "",  # a blank card, as the "Add a rule" one is
    }
    for count in ("0", "10000000", "9" * 100, "-1", "x"):
        saved = post(client, editor, {**cards, "count": count, "op": "save"}, page=editor)
        assert saved.status_code == 303, (count, saved.text)
        urls = [rule.url for rule in rules_of(client, link_id).rules]
        assert urls == ["https://example.com/de", "https://example.com/fr"], count
    too_many = {f"r{index}-url": f"https://example.com/{index}" for index in range(52)}
    refused = post(client, editor, {**too_many, "op": "save"}, page=editor)
    assert refused.status_code == 400
    assert "rules: at most 50 rules (the form sent 52 rule cards)" in html.unescape(refused.text)
    assert 'role="alert"' in refused.text
    # Fifty rules and the blank card: what the page itself sends when the document is full.
    full = {f"r{index}-country": "DE" for index in range(50)}
    full |= {f"r{index}-url": f"https://example.com/{index}" for index in range(50)} | {"r50-url": ""}
    assert post(client, editor, {**full, "op": "save"}, page=editor).status_code == 303
    assert len(rules_of(client, link_id).rules) == 50
    assert "rules: at most" not in client.get(editor).text


def test_the_editor_refuses_blocked_rewrite_hosts_and_ways_back_to_the_link(make_client, conn):
    client = signed_in(make_client, conn, public_blocked_hosts=["blocked.example"])
    link_id = create_link(client, originalUrl="https://example.com/home", customCode="home-link")
    create_link(client, originalUrl="https://sho.rt/l/home-link", customCode="back-link")
    editor = f"/links/{link_id}/rules"
    for card, message in (
        (
            {"r0-country": "DE", "r0-action": "rewrite", "r0-hosts": "DE www.blocked.example"},
            "rules[0].rewrite.hosts.DE: www.blocked.example (under blocked.example) is a host this service does not"
            " link to",
        ),
        (
            {"r0-country": "DE", "r0-url": "https://sho.rt/l/back-link"},
            "rules[0].url: leads to /l/back-link, which leads back to this link (/l/home-link): a loop",
        ),
    ):
        refused = post(client, editor, {**card, "op": "save"}, page=editor)
        assert refused.status_code == 400
        assert f'id="e-rule-0">{message}</p>' in html.unescape(refused.text)
    assert rules_of(client, link_id).rules == []


def answer_of(page_html: str) -> str:
    found = re.search(r'<div role="status" id="test-result" tabindex="-1" autofocus>(.*?)</div>', page_html, re.S)
    assert found, "the tester's answer, focusable and focused on load"
    return html.unescape(re.sub(r"<[^>]+>", "", found.group(1)))


def test_the_testers_answer_is_whole_sentences_in_plain_words(make_client, conn):
    """Each sentence apart (they once ran together: "Rule 1 holds.The visitor…") and pages named
    in words, not by the API's names (in_app, ios, notYet)."""
    client = signed_in(make_client, conn)
    link_id = create_link(client, originalUrl=YOUTUBE)
    editor = f"/links/{link_id}/rules"
    rule = {"r0-os": "windows", "r0-url": "https://example.com/pc", "op": "save"}
    assert post(client, editor, rule, page=editor).status_code == 303
    seen = []
    for user_agent, expected in (
        (DESKTOP, ["Rule 1 holds.", "The visitor is sent to https://example.com/pc (HTTP status 302)."]),
        (
            IPHONE,
            [
                "No rule holds, so the link's own destination applies.",
                "The visitor sees the page that opens the app on an iPhone or iPad (iOS) (HTTP status 200),"
                f" which leads to {YOUTUBE}.",
            ],
        ),
        (INSTAGRAM_IOS, ["No rule holds", "the page that helps them leave the in-app browser"]),
    ):
        tried = post(client, f"{editor}/try", {"userAgent": user_agent}, page=editor)
        assert tried.status_code == 200
        assert 'action="/links/' + link_id + '/rules/try#test-result"' in tried.text
        answer = answer_of(tried.text)
        seen.append(answer)
        position = 0
        for sentence in expected:
            assert sentence in answer[position:], (sentence, answer)
            position = answer.index(sentence, position) + len(sentence)
    later = {**rule, "startsAt": "2999-01-01T00:00"}
    assert post(client, editor, later, page=editor).status_code == 303
    seen.append(answer_of(post(client, f"{editor}/try", {"userAgent": DESKTOP}, page=editor).text))
    assert "The visitor sees the page saying the link is not open yet (HTTP status 200)." in seen[-1]
    for answer in seen:
        assert not re.search(r"[.:][A-Z]", answer), answer  # no sentence runs into the next
        assert not re.search(r"\b(in_app|ios|notYet)\b", answer), answer
