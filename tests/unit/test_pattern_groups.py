"""Pattern groups answer exactly as the alternation of all their patterns does: the Android model
table on the corpora's model names, and the bot, feed-reader, browser and crawler lists that decide
whether an agent is a program on the corpora's agents; both also on texts made from the patterns
themselves."""

from __future__ import annotations

import json
import re

import pytest
import regex

from shortlink.visits import automated, matomo
from shortlink.visits.pattern_groups import PatternGroup, branches, fold, leading_literal, unchanged
from tests.support import paths

pytestmark = pytest.mark.slow(seconds=12)  # the whole alternation, compiled and searched, is the reference

ANDROID_MODEL = re.compile(r"Android[ /][\d._]*; ?(?:[a-z]{2}[-_][a-z]{2}; ?)?([^;()]+?)(?: Build/|[;)])", re.I)


def groups() -> list[list[str]]:
    """Matomo's model patterns, a list per device kind and listed/unlisted brand (as enrich)."""
    found: dict[tuple[bool, str], list[str]] = {}
    for brand in matomo.rules("regexes/upstream/device/mobiles.yml", dict).values():
        for model in brand.get("models") or [brand]:
            if model["regex"]:
                kind = model.get("device", brand.get("device", ""))
                found.setdefault((bool(brand.get("models")), kind), []).append(model["regex"])
    return list(found.values())


def corpus_agents() -> list[str]:
    return [row["ua"] for path in sorted(paths.CORPUS.glob("*.json")) for row in json.loads(path.read_text("utf-8"))]


def names() -> set[str]:
    """A fifth of the corpora's Android model names (some 1,200): each search of the whole
    alternation costs about a millisecond."""
    agents = corpus_agents()
    found = sorted({model.group(1).strip() for agent in agents if (model := ANDROID_MODEL.search(agent))})
    return set(found[::5])


def test_lookups_by_literal_answer_as_the_alternation():
    corpus_names = names()
    assert len(corpus_names) > 1000
    for patterns in groups():
        alternation = re.compile(matomo.BOUNDARY + "(?:" + "|".join(patterns) + ")", re.IGNORECASE | re.ASCII)
        group = PatternGroup(patterns)
        made = {
            variant
            for pattern in patterns[::50]
            if (literal := leading_literal(pattern))
            for variant in (literal, f"X{literal} Pro", literal.lower())
        }
        for name in corpus_names | made:
            found = alternation.search(name)
            assert group.search_start(name) == (found.start() if found else None), (name, patterns[:3])
            assert group.matches_at_start(name) == (alternation.match(name) is not None), name


def test_leading_literals_are_only_what_every_match_starts_with():
    assert leading_literal("SM-S911") == "SM-S911"
    assert leading_literal("Redmi Note ?12") == "Redmi Note"  # the optional space is not certain
    assert leading_literal("GT-(?:N|P)") == "GT-"
    assert leading_literal("Moto G|XT19") == ""  # either branch may match
    assert leading_literal("(?:Galaxy )?S23") == ""
    assert leading_literal("A[0-9]+") == "A"
    # IGNORECASE matches the Kelvin sign with k and the dotless i with i: folded alike.
    assert fold("\u212aindle \u0131Pad") == "kindle ipad"


def test_patterns_are_taken_apart_only_where_every_match_is_kept():
    assert branches("a|b(c|d)") == ["a", "b(c|d)"]
    assert branches("(a|b)") == ["a", "b"]
    assert branches("(?:HTC_)?U11") == ["HTC_U11", "U11"]  # with the group and without it
    assert branches("(?:HTC[_ ](?:U|2PZ)|U Play)(?:[);/ ]|$)") == ["HTC[_ ](?:U|2PZ)(?:[);/ ]|$)", "U Play(?:[);/ ]|$)"]
    assert branches("[(]x|y") == ["[(]x", "y"] and branches(r"\(a|b\)") == [r"\(a", r"b\)"]
    # Repeated, lazy, possessive, lookarounds, flags: left whole.
    for whole in ("(?:a|b)*c", "(?:a|b)+c", "(?:a|b){2}c", "(?:a|b)??c", "(?:a|b)?+c", "(?=a|b)c", "(?i)ab"):
        assert branches(whole) == [whole]
    # Only the leading group is taken apart: a chain of them grows by two branches a group.
    assert branches("(?:a|b)?(?:c|d)?z") == ["a(?:c|d)?z", "b(?:c|d)?z", "cz", "dz", "z"]
    # A group of more than 32 alternatives stays one pattern.
    many = "(?:" + "|".join(f"x{number}" for number in range(40)) + ")z"
    assert branches(many) == [many]


@pytest.mark.parametrize("rules", ["bots and feed readers", "browsers", "crawlers"])
def test_the_program_rules_answer_as_their_alternation(rules):
    patterns, reference, group = {
        "bots and feed readers": (
            automated.matomo_bot_patterns(),
            lambda joined: regex.compile(matomo.BOUNDARY + "(?:" + joined + ")", regex.IGNORECASE),
            lambda patterns: PatternGroup(patterns, automated.matomo_rule),
        ),
        "browsers": (
            automated.matomo_browser_patterns(),
            lambda joined: regex.compile(matomo.BOUNDARY + "(?:" + joined + ")", regex.IGNORECASE),
            lambda patterns: PatternGroup(patterns, automated.matomo_rule),
        ),
        "crawlers": (
            automated.crawler_patterns(),
            re.compile,
            lambda patterns: PatternGroup(patterns, re.compile, unchanged),
        ),
    }[rules]
    alternation, grouped = reference("|".join(patterns)), group(patterns)
    # A twentieth of the corpora's agents (each search of the alternation costs about a
    # millisecond), and for a pattern in ten its literal alone, in another case, and inside a
    # browser's agent.
    texts = set(corpus_agents()[::20])
    for pattern in patterns[::10]:
        if literal := leading_literal(pattern):
            texts |= {literal, literal.upper(), f"Mozilla/5.0 (X11; Linux) {literal.lower()}/1.0 Safari/537.36"}
    for text in texts:
        assert grouped.search(text) == (alternation.search(text) is not None), (rules, text)
