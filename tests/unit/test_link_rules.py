"""Link rules' plain functions: the sticky split's spread, the language a visitor prefers, the
host rewrite, the device class, the time windows."""

from __future__ import annotations

import json
import secrets

import pytest

from shortlink.errors import ValidationError
from shortlink.link_rules.matcher import Facts, compile_condition, device_of, top_language
from shortlink.link_rules.rewrite import rewritten
from shortlink.link_rules.schema import Condition
from shortlink.link_rules.split import DayKeys, bucket, choose
from shortlink.link_rules.validate import parse_window
from shortlink.visits.classify import classify
from tests.support.paths import CORPUS


def test_a_50_50_split_over_10000_visitors_lands_within_48_to_52_percent_and_is_sticky():
    key = secrets.token_bytes(32)
    visitors = [f"198.51.{n // 256}.{n % 256}\nMozilla/5.0 agent {n % 7}" for n in range(10_000)]
    first = [choose((50, 50), bucket(key, visitor, 42, 3)) for visitor in visitors]
    assert 0.48 <= first.count(0) / len(first) <= 0.52
    assert first == [choose((50, 50), bucket(key, visitor, 42, 3)) for visitor in visitors]
    # Another day's key reshuffles; another link or rule is independent of this one.
    other_day = [choose((50, 50), bucket(secrets.token_bytes(32), visitor, 42, 3)) for visitor in visitors]
    other_rule = [choose((50, 50), bucket(key, visitor, 42, 4)) for visitor in visitors]
    for other in (other_day, other_rule):
        agree = sum(a == b for a, b in zip(first, other, strict=True)) / len(first)
        assert 0.47 <= agree <= 0.53


def test_the_day_key_changes_at_midnight_utc_only():
    keys = DayKeys()
    noon = 20_000 * 86_400 + 43_200
    assert keys.current(noon) == keys.current(noon + 40_000)
    assert keys.current(noon + 43_200) != keys.current(noon)


@pytest.mark.parametrize(
    ("header", "language"),
    [
        ("fr-CA,fr;q=0.9,en;q=0.8", "fr"),
        ("en;q=0.5, de-DE", "de"),
        ("*, es;q=0.1", "es"),
        ("", ""),
        ("pt-BR;q=bad, it;q=0.2", "it"),
    ],
)
def test_the_visitors_first_language_counts(header, language):
    assert top_language(header) == language


def test_the_rewrite_keeps_path_query_www_and_port():
    url = "https://www.amazon.com/dp/B0TEST?tag=x#reviews"
    assert rewritten(url, "DE", "amazon", None) == "https://www.amazon.de/dp/B0TEST?tag=x#reviews"
    assert rewritten("https://amazon.com:8443/x", "JP", "amazon", None) == "https://amazon.co.jp:8443/x"
    assert rewritten(url, "KP", "amazon", None) == url  # no store: unchanged
    assert rewritten("https://example.com/x", "DE", "amazon", None) == "https://example.com/x"  # not a store
    assert rewritten("https://example.com/x", "DE", "amazon", {"DE": "example.de"}) == "https://example.de/x"


def test_devices_of_the_corpus_browsers_mostly_agree_with_their_labels():
    # The corpus labels come from a device database; a rule reads only what the browser says
    # ("iPad", Android's "Mobile" token) so as to cost nothing: a tablet whose browser asks for
    # the mobile site is routed as a phone (docs/link-rules.md).
    agents = json.loads((CORPUS / "browsers.json").read_text())
    browsers = [
        entry
        for entry in agents
        if entry["device"] in ("mobile", "tablet")
        and entry["ua"].startswith(("Mozilla/5.0 (Linux; Android", "Mozilla/5.0 (iP"))
    ][::8]
    agree = sum(
        device_of(classify(entry["ua"]), entry["ua"]) == ("phone" if entry["device"] == "mobile" else "tablet")
        for entry in browsers
    )
    assert len(browsers) > 400 and agree / len(browsers) >= 0.85, (agree, len(browsers))


def test_time_windows_daily_wrapping_and_absolute():
    night = compile_condition(Condition("time", ["22:00-06:00"]))
    visitor = classify("Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0")
    at = lambda seconds: Facts(visitor, "", now_s=seconds)  # noqa: E731
    assert night(at(23 * 3600)) and night(at(5 * 3600)) and not night(at(12 * 3600))
    between = compile_condition(Condition("time", ["2026-01-01T00:00:00Z/2026-01-02T00:00:00Z"]))
    assert between(at(1767225600 + 10)) and not between(at(1767225600 - 10))
    with pytest.raises(ValidationError, match="the end must come after the start"):
        parse_window("time", "2026-01-02T00:00:00Z/2026-01-01T00:00:00Z")
