"""The visitor classifier over a corpus of real user agents, expected outputs in full."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from shortlink.visits.classify import classify

CORPUS = json.loads((Path(__file__).parent / "corpus" / "user_agents.json").read_text("utf-8"))


def test_the_corpus_covers_every_class():
    assert len(CORPUS) >= 60
    expected = [row["expect"] for row in CORPUS]
    assert {e["kind"] for e in expected} == {"bot", "desktop", "ios", "android"}
    for os in ("iOS", "Android"):
        apps = {e["in_app"] for e in expected if e["os"] == os and e["in_app"]}
        assert {
            "instagram",
            "facebook",
            "messenger",
            "threads",
            "tiktok",
            "snapchat",
            "whatsapp",
            "line",
            "wechat",
        } <= apps, os
    assert {e["browser"] for e in expected if e["kind"] == "android" and not e["in_app"]} == {
        "chrome",
        "firefox",
        "samsung",
        "other",
    }


@pytest.mark.parametrize("row", CORPUS, ids=[row["name"] for row in CORPUS])
def test_corpus(row):
    visitor = classify(row["ua"], row.get("ch_platform", ""), row.get("ch_mobile", ""))
    assert msgspec.structs.asdict(visitor) == row["expect"]


def test_the_corpus_holds_every_previewer_the_issue_names():
    agents = " ".join(row["ua"] for row in CORPUS if row["expect"]["is_bot"]).lower()
    for token in (
        "facebookexternalhit",
        "facebot",
        "twitterbot",
        "slackbot",
        "slack-imgproxy",
        "discordbot",
        "whatsapp/",
        "telegrambot",
        "linkedinbot",
        "applebot",
        "iframely",
        "embedly",
        "skypeuripreview",
        "pinterestbot",
        "redditbot",
        "mastodon/",
        "google-pagerenderer",
        "vkshare",
        "bluesky cardyb",
        "thirdlandingpagefeinfra",
    ):
        assert token in agents, token


def test_whatsapp_previewer_and_in_app_browser_are_told_apart():
    assert classify("WhatsApp/2.23.20.0 A").is_bot
    in_app = classify(
        "Mozilla/5.0 (Linux; Android 13; SM-S918B Build/TP1A.220624.014; wv) "
        "AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/119.0.6045.163 "
        "Mobile Safari/537.36 WhatsApp/2.23.24.76"
    )
    assert not in_app.is_bot and in_app.in_app == "whatsapp" and in_app.kind == "android"


def test_client_hints_refine_a_reduced_user_agent():
    linux = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
    assert classify(linux).kind == "desktop"
    assert classify(linux, '"Android"', "?1").kind == "android"
    assert classify(linux, "", "?1").kind == "android"  # mobile hint, platform hint missing
    assert classify(linux, '"Linux"', "?0").kind == "desktop"


def test_a_preview_agent_never_counts_as_a_person_even_with_client_hints():
    assert classify("facebookexternalhit/1.1", '"Android"', "?1").is_bot


def test_results_are_memoised():
    classify.cache_clear()
    ua = CORPUS[0]["ua"]
    assert classify(ua) is classify(ua)
    info = classify.cache_info()
    assert info.hits == 1 and info.maxsize == 4096
