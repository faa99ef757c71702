"""Many patterns searched as one, as their alternation would be, at a fraction of the cost of
compiling and searching that alternation (docs/performance.md): Matomo's device-model patterns,
and the bot, feed-reader, browser and crawler lists that decide whether an agent is a program.

A pattern that starts with a literal (most do: "SM-S911", "Redmi Note", "Googlebot") can only
match a text holding that literal, so it is compiled, alone, the first time a text holds it;
the rest are compiled together, once. Searching a text gives what searching the alternation
would: whether any pattern matches, and the leftmost start of a match.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from shortlink.visits.matomo import BOUNDARY

_METACHARACTERS = frozenset(".^$*+?{}[]\\|()")
_SHORTEST_INDEXED = 2  # literal characters a pattern must start with to be looked up by them


def leading_literal(pattern: str) -> str:
    """The characters every match of `pattern` starts with ("" when it has no such start or
    an alternation at its top level, whose other branches need not start with them)."""
    if _alternation_at_top(pattern):
        return ""
    literal: list[str] = []
    for character in pattern:
        if character in _METACHARACTERS:
            if character in "?*{" and literal:
                literal.pop()  # quantified: the last character may be absent
            break
        literal.append(character)
    return "".join(literal)


def required_literal(pattern: str) -> str:
    """Characters every match of `pattern` holds: its leading literal, after a leading "^" or
    ".*" (".*masscan" can only match a text holding "masscan")."""
    for start in ("^", ".*", ".+"):
        if pattern.startswith(start):
            return leading_literal(pattern[len(start) :])
    return leading_literal(pattern)


def _alternation_at_top(pattern: str) -> bool:
    return bool(_at_top_level(pattern, "|"))


# What shapes a pattern: an escape (with the character it escapes), a character class up to its
# first unescaped "]" (or the end), a parenthesis or a bar. Everything else is skipped unread.
_SHAPING = re.compile(r"\\.?|\[(?:\\.?|[^\]\\])*\]?|[()|]", re.DOTALL)


def _at_top_level(pattern: str, wanted: str) -> list[int]:
    """Positions of each `wanted` ("|" or ")") that is not escaped, not inside a character
    class, and at group depth 0 once read."""
    depth, found = 0, []
    for token in _SHAPING.finditer(pattern):
        character = token.group()
        if character == "(":
            depth += 1
        elif character == ")":
            depth -= 1
        elif character != "|":
            continue  # an escape or a class
        if character == wanted and depth == 0:
            found.append(token.start())
    return found


def _top_level_split(pattern: str) -> list[str]:
    """The pattern's branches at its top level ("a|b(c|d)" → "a", "b(c|d)")."""
    cuts = _at_top_level(pattern, "|")
    return [pattern[start + 1 : end] for start, end in zip([-1, *cuts], [*cuts, len(pattern)], strict=True)]


def _leading_group(pattern: str) -> tuple[str, str] | None:
    """(inside, after) of a group, "(…)" or "(?:…)", that the pattern starts with; None when it
    starts otherwise (lookarounds, named groups and inline flags included)."""
    opening = 3 if pattern.startswith("(?:") else 1 if pattern.startswith("(") and not pattern.startswith("(?") else 0
    closes = _at_top_level(pattern, ")") if opening else []
    return (pattern[opening : closes[0]], pattern[closes[0] + 1 :]) if closes else None


# Alternatives a pattern may be taken apart into, at most: "(?:a|b)?(?:c|d)?…" multiplies.
_MOST_BRANCHES = 32


def branches(pattern: str) -> list[str]:
    """Alternatives that, searched one by one, match where the pattern does: its top-level
    branches, and for a pattern starting with a group, each branch of the group followed by the
    rest ("(?:HTC_)?U11" → "HTC_U11", "U11"), so that each starts with a literal more often. (No
    pattern of ours refers back to a group by number, so taking groups apart changes no match.)"""
    parts = _top_level_split(pattern)
    if len(parts) > 1:
        return [branch for part in parts for branch in branches(part)]
    group = _leading_group(pattern)
    if group is None:
        return [pattern]
    inside, after = group
    optional = after.startswith("?")
    if optional:
        after = after[1:]
    if after[:1] in ("*", "+", "{", "?"):  # repeated, lazy or possessive: left whole
        return [pattern]
    found = [
        branch for part in [*_top_level_split(inside), *([""] if optional else [])] for branch in branches(part + after)
    ]
    return found if len(found) <= _MOST_BRANCHES else [pattern]


def fold(text: str) -> str:
    """Case-folded as far as IGNORECASE goes: every character it matches with an ASCII letter,
    digit or punctuation folds to that character (casefold, plus the two Turkish i's). A pattern
    compiled to fold ASCII letters only (matomo_pattern) matches less: its candidates are a few
    more than it needs, never fewer."""
    return text.casefold().replace("\u0131", "i").replace("i\u0307", "i")


def matomo_pattern(pattern: str) -> re.Pattern[str]:
    """How device-detector compiles a rule: after a word boundary of its own, ignoring the case
    of ASCII letters only, as PHP's PCRE does without the `u` flag. Unicode case folding would
    also make the boundary's negated classes several times dearer to compile, once for each of
    the thousands of model patterns an agent first makes a candidate (docs/performance.md)."""
    return re.compile(BOUNDARY + "(?:" + pattern + ")", re.IGNORECASE | re.ASCII)


def unchanged(text: str) -> str:
    return text


class PatternGroup:
    """`patterns` as `compile_pattern("|".join(patterns))` would search them: it must treat the
    joined text as the alternation of its parts (it may add a prefix and flags around it), and
    `fold_case` is the case folding its flags imply (`unchanged` for case-sensitive patterns)."""

    def __init__(
        self,
        patterns: list[str],
        compile_pattern: Callable[[str], Any] = matomo_pattern,
        fold_case: Callable[[str], str] = fold,
    ):
        self._fold = fold_case
        self._compile = lru_cache(maxsize=4096)(compile_pattern)
        unindexed: list[str] = []
        # First two folded characters of the literal → (folded literal, pattern), in order.
        self._indexed: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for pattern in (branch for whole in patterns for branch in branches(whole)):
            literal = fold_case(required_literal(pattern))
            if len(literal) >= _SHORTEST_INDEXED:
                self._indexed[literal[:_SHORTEST_INDEXED]].append((literal, pattern))
            else:
                unindexed.append(pattern)
        self._unindexed = compile_pattern("|".join(unindexed)) if unindexed else None

    def _candidates(self, text: str) -> list[Any]:
        folded = self._fold(text)
        found: dict[str, None] = {}  # patterns in first-seen order, once each
        for at in range(len(folded) - _SHORTEST_INDEXED + 1):
            for literal, pattern in self._indexed.get(folded[at : at + _SHORTEST_INDEXED], ()):
                if folded.startswith(literal, at):
                    found[pattern] = None
        return [self._compile(pattern) for pattern in found]

    def search(self, text: str) -> bool:
        """Whether any pattern matches somewhere in `text`."""
        return any(known.search(text) for known in self._patterns(text))

    def search_start(self, text: str) -> int | None:
        """Where the leftmost match in `text` starts, or None when no pattern matches."""
        starts = [found.start() for known in self._patterns(text) if (found := known.search(text))]
        return min(starts) if starts else None

    def matches_at_start(self, text: str) -> bool:
        return any(known.match(text) for known in self._patterns(text))

    def _patterns(self, text: str) -> list[Any]:
        unindexed = [self._unindexed] if self._unindexed is not None else []
        return unindexed + self._candidates(text)
