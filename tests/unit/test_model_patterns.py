"""The Android model table looked up by literal prefixes answers exactly as the alternation of
all its patterns does, on every model name of the published corpora and on names made from the
patterns themselves."""

from __future__ import annotations

import json
import re

import pytest

from shortlink.visits import matomo
from shortlink.visits.model_patterns import PatternGroup, fold, leading_literal
from tests.support import paths

pytestmark = pytest.mark.slow(seconds=20)  # the whole alternation, compiled and searched, is the reference

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


def names() -> set[str]:
    """A third of the corpora's Android model names (some 2,000): each search of the whole
    alternation costs about a millisecond."""
    agents = [row["ua"] for path in sorted(paths.CORPUS.glob("*.json")) for row in json.loads(path.read_text("utf-8"))]
    found = sorted({model.group(1).strip() for agent in agents if (model := ANDROID_MODEL.search(agent))})
    return set(found[::3])


def test_lookups_by_literal_answer_as_the_alternation():
    corpus_names = names()
    assert len(corpus_names) > 1500
    for patterns in groups():
        alternation = re.compile(matomo.BOUNDARY + "(?:" + "|".join(patterns) + ")", re.IGNORECASE)
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
