"""A link's rules compiled for the visitor path, and the match of one visitor.

Compiled once when the link is read into the link cache: each condition becomes a test over
the visit's facts, and each URL its ready-made target (platform detected once), so a visit
only runs the tests. Facts are computed when a condition first asks (a link routing by OS
never parses Accept-Language, nor looks up a country)."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Generic, Protocol, TypeVar
from urllib.parse import parse_qsl, urlsplit

import msgspec

from shortlink.link_rules.rewrite import rewritten
from shortlink.link_rules.schema import Condition, Rule, RulesDocument
from shortlink.link_rules.split import choose
from shortlink.link_rules.validate import parse_window
from shortlink.times import from_iso

T = TypeVar("T")
MAX_LANGUAGES = 16  # an Accept-Language is read this far


class Visitor(Protocol):
    """What a rule reads of the visitor's class (visits.classify makes it; link rules, which the
    visitor path calls, never import it)."""

    @property
    def os(self) -> str: ...

    @property
    def in_app(self) -> str | None: ...


def device_of(visitor: Visitor, user_agent: str) -> str:
    """phone, tablet or desktop. iPads say so (unless asking for the desktop site, when they
    are Macs); Android tablets leave "Mobile" out of their agent, phones put it in."""
    if visitor.os == "iOS":
        return "tablet" if "iPad" in user_agent else "phone"
    if visitor.os == "Android":
        return "phone" if "Mobile" in user_agent else "tablet"
    return "desktop"


@lru_cache(maxsize=4096)  # a few headers make most of the traffic, as user agents do
def top_language(accept_language: str) -> str:
    """The primary subtag of the visitor's most preferred language ("fr" for
    "fr-CA,fr;q=0.9,en;q=0.8"), "" when none is given. Only the first choice counts: a
    French speaker who also reads English should land on the French rule whatever the order
    of the rules."""
    best, best_q = "", 0.0
    for index, part in enumerate(accept_language.split(",")):
        if index >= MAX_LANGUAGES:
            break
        tag, _, params = part.strip().partition(";")
        q = 1.0
        params = params.strip()
        if params.startswith("q="):
            try:
                q = float(params[2:])
            except ValueError:
                q = 0.0
        primary = tag.strip().split("-", 1)[0].lower()
        if q > best_q and primary and primary != "*":
            best, best_q = primary, q
    return best


class Facts:
    """What the conditions read of one visit, each computed on first use."""

    __slots__ = (
        "_country",
        "_device",
        "_language",
        "_params",
        "_referrer",
        "accept_language",
        "country_of",
        "now_s",
        "query",
        "referrer",
        "user_agent",
        "visitor",
    )

    def __init__(
        self,
        visitor: Visitor,
        user_agent: str,
        *,
        query: str = "",
        referrer: str = "",
        accept_language: str = "",
        country_of: Callable[[], str] = lambda: "",
        now_s: float = 0.0,
    ):
        self.visitor, self.user_agent, self.query, self.referrer = visitor, user_agent, query, referrer
        self.accept_language, self.country_of, self.now_s = accept_language, country_of, now_s
        self._device: str | None = None
        self._country: str | None = None
        self._language: str | None = None
        self._params: frozenset[str] | None = None
        self._referrer: str | None = None

    @property
    def device(self) -> str:
        if self._device is None:
            self._device = device_of(self.visitor, self.user_agent)
        return self._device

    @property
    def country(self) -> str:
        if self._country is None:
            self._country = self.country_of()
        return self._country

    @property
    def language(self) -> str:
        if self._language is None:
            self._language = top_language(self.accept_language)
        return self._language

    @property
    def params(self) -> frozenset[str]:
        if self._params is None:
            pairs = parse_qsl(self.query, keep_blank_values=True, errors="replace") if self.query else []
            self._params = frozenset(f"{name}={value}" for name, value in pairs)
        return self._params

    @property
    def referrer_host(self) -> str:
        if self._referrer is None:
            try:
                self._referrer = (urlsplit(self.referrer.strip()).hostname or "") if self.referrer else ""
            except ValueError:
                self._referrer = ""
        return self._referrer


Test = Callable[[Facts], bool]


def _in_window(windows: list[tuple[str, float, float]]) -> Test:
    def test(facts: Facts) -> bool:
        minute = (facts.now_s % 86_400) // 60
        for kind, start, end in windows:
            if kind == "between":
                if start <= facts.now_s < end:
                    return True
            elif (start <= minute < end) if start < end else (minute >= start or minute < end):
                return True
        return False

    return test


def _referred_by(hosts: frozenset[str]) -> Test:
    def test(facts: Facts) -> bool:
        host = facts.referrer_host
        return bool(host) and (host in hosts or any(host.endswith("." + wanted) for wanted in hosts))

    return test


def compile_condition(condition: Condition) -> Test:
    values = frozenset(condition.values)
    kind = condition.type
    if kind == "device":
        return lambda facts: facts.device in values
    if kind == "os":
        return lambda facts: facts.visitor.os.lower() in values
    if kind == "inApp":
        if "any" in values:
            return lambda facts: facts.visitor.in_app is not None
        return lambda facts: facts.visitor.in_app in values
    if kind == "country":
        return lambda facts: facts.country in values
    if kind == "language":
        return lambda facts: facts.language in values
    if kind == "query":
        return lambda facts: not facts.params.isdisjoint(values)
    if kind == "time":
        return _in_window([parse_window("time", value) for value in condition.values])
    return _referred_by(values)


def _all_of(tests: tuple[Test, ...]) -> Test:
    """One test for a rule's conditions: the common one or two conditions without a loop."""
    if not tests:
        return lambda facts: True
    if len(tests) == 1:
        return tests[0]
    if len(tests) == 2:
        first, second = tests
        return lambda facts: first(facts) and second(facts)
    return lambda facts: all(test(facts) for test in tests)


# Conditions decided by the user agent and Accept-Language alone, whose outcome is remembered per
# (agent, languages) pair; the others (country, query, referrer, time) are tested on each visit.
AGENT_CONDITIONS = frozenset({"device", "os", "inApp", "language"})
# (agent, languages) pairs remembered per link: a few make most of the traffic.
MAX_CANDIDATE_SETS = 128
CANDIDATE_SET_BYTES = 200  # about what one remembered pair holds, for the link cache's bound


class CompiledRule(Generic[T]):
    __slots__ = ("by_agent", "matches", "rewrite", "targets", "weights")

    def __init__(self, rule: Rule, make_target: Callable[[str], T], destination: str):
        conditions = rule.conditions
        self.by_agent = _all_of(tuple(compile_condition(c) for c in conditions if c.type in AGENT_CONDITIONS))
        self.matches = _all_of(tuple(compile_condition(c) for c in conditions if c.type not in AGENT_CONDITIONS))
        self.weights: tuple[int, ...] = ()
        self.rewrite: tuple[str | None, dict[str, str] | None] | None = None
        if rule.url is not None:
            self.targets: tuple[T, ...] | dict[str, T] = (make_target(rule.url),)
        elif rule.split is not None:
            self.targets = tuple(make_target(variant.url) for variant in rule.split)
            self.weights = tuple(variant.weight for variant in rule.split)
        else:
            assert rule.rewrite is not None
            self.rewrite = (rule.rewrite.table, rule.rewrite.hosts)
            self.targets = {}


class Match(msgspec.Struct, Generic[T], frozen=True):
    rule: int
    variant: int  # the split's variant, else -1
    target: T


class CompiledRules(Generic[T]):
    """A link's rules and limits, ready for visits. `make_target(url)` builds what a visit
    is sent to for a URL (the visitor path's VisitTarget with that destination)."""

    __slots__ = (
        "_candidates",
        "_destination",
        "_make_target",
        "fallback_url",
        "has_split",
        "max_clicks",
        "rules",
        "size",
        "starts_at",
        "stored_clicks",
    )

    def __init__(
        self,
        document: RulesDocument,
        make_target: Callable[[str], T],
        destination: str,
        *,
        stored_clicks: int = 0,
        size: int = 0,
    ):
        self._make_target, self._destination = make_target, destination
        self.rules = tuple(CompiledRule(rule, make_target, destination) for rule in document.rules)
        self.starts_at = None if document.starts_at is None else from_iso(document.starts_at).timestamp()
        self.max_clicks = document.max_clicks
        self.has_split = any(rule.weights for rule in self.rules)
        self.fallback_url = document.fallback_url
        self.stored_clicks = stored_clicks  # human clicks counted against max_clicks when read
        # About how many bytes the rules hold, for the link cache's bound.
        self.size = size + MAX_CANDIDATE_SETS * CANDIDATE_SET_BYTES
        self._candidates: dict[tuple[str, str, str, str | None], tuple[int, ...]] = {}

    def match(self, facts: Facts, bucket: Callable[[int], int]) -> Match[T] | None:
        """The first rule the visit meets and where it sends the visitor; None when no rule
        holds (the link's own destination). `bucket(rule)` is the visitor's sticky 0-99 for a
        split rule."""
        rules = self.rules
        for index in self._by_agent(facts):
            rule = rules[index]
            if not rule.matches(facts):
                continue
            if rule.weights:
                variant = choose(rule.weights, bucket(index))
                assert isinstance(rule.targets, tuple)
                return Match(index, variant, rule.targets[variant])
            if rule.rewrite is not None:
                return Match(index, -1, self._rewritten(rule, facts.country))
            assert isinstance(rule.targets, tuple)
            return Match(index, -1, rule.targets[0])
        return None

    def _by_agent(self, facts: Facts) -> tuple[int, ...]:
        """The rules whose agent and language conditions this visitor meets, remembered."""
        visitor = facts.visitor
        key = (facts.user_agent, facts.accept_language, visitor.os, visitor.in_app)
        candidates = self._candidates.get(key)
        if candidates is None:
            if len(self._candidates) >= MAX_CANDIDATE_SETS:
                self._candidates.clear()
            candidates = self._candidates[key] = tuple(
                index for index, rule in enumerate(self.rules) if rule.by_agent(facts)
            )
        return candidates

    def _rewritten(self, rule: CompiledRule[T], country: str) -> T:
        assert isinstance(rule.targets, dict) and rule.rewrite is not None
        target = rule.targets.get(country)
        if target is None:  # at most one per country: bounded
            target = rule.targets[country] = self._make_target(rewritten(self._destination, country, *rule.rewrite))
        return target


def decode(document: str) -> RulesDocument:
    return msgspec.json.decode(document, type=RulesDocument)
