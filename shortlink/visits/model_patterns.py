"""Many of Matomo's device-model patterns searched as one, as their alternation would be, at a
fraction of the cost of compiling that alternation (docs/performance.md).

A pattern that starts with a literal (most do: "SM-S911", "Redmi Note") can only match a name
holding that literal, so it is compiled, alone, the first time a name holds it; the rest are
compiled together, once. Searching a name gives what searching the alternation would: whether
any pattern matches, and the leftmost start of a match.
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import lru_cache

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


def _alternation_at_top(pattern: str) -> bool:
    depth, at, in_class = 0, 0, False
    while at < len(pattern):
        character = pattern[at]
        if character == "\\":
            at += 2
            continue
        if in_class:
            in_class = character != "]"
        elif character == "[":
            in_class = True
        elif character == "(":
            depth += 1
        elif character == ")":
            depth -= 1
        elif character == "|" and depth == 0:
            return True
        at += 1
    return False


def fold(text: str) -> str:
    """Case-folded as far as IGNORECASE goes: every character it matches with an ASCII letter,
    digit or punctuation folds to that character (casefold, plus the two Turkish i's)."""
    return text.casefold().replace("\u0131", "i").replace("i\u0307", "i")


@lru_cache(maxsize=4096)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(BOUNDARY + "(?:" + pattern + ")", re.IGNORECASE)


class PatternGroup:
    def __init__(self, patterns: list[str]):
        unindexed: list[str] = []
        # First two case-folded characters of the literal → (folded literal, pattern), in order.
        self._indexed: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for pattern in patterns:
            literal = fold(leading_literal(pattern))
            if len(literal) >= _SHORTEST_INDEXED:
                self._indexed[literal[:_SHORTEST_INDEXED]].append((literal, pattern))
            else:
                unindexed.append(pattern)
        self._unindexed = _compiled.__wrapped__("|".join(unindexed)) if unindexed else None

    def _candidates(self, name: str) -> list[re.Pattern[str]]:
        folded = fold(name)
        found: dict[str, None] = {}  # patterns in first-seen order, once each
        for at in range(len(folded) - _SHORTEST_INDEXED + 1):
            for literal, pattern in self._indexed.get(folded[at : at + _SHORTEST_INDEXED], ()):
                if folded.startswith(literal, at):
                    found[pattern] = None
        return [_compiled(pattern) for pattern in found]

    def search_start(self, name: str) -> int | None:
        """Where the leftmost match in `name` starts, or None when no pattern matches."""
        starts = [found.start() for known in self._patterns(name) if (found := known.search(name))]
        return min(starts) if starts else None

    def matches_at_start(self, name: str) -> bool:
        return any(known.match(name) for known in self._patterns(name))

    def _patterns(self, name: str) -> list[re.Pattern[str]]:
        unindexed = [self._unindexed] if self._unindexed is not None else []
        return unindexed + self._candidates(name)
