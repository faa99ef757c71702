"""Validation of a link-rules document: every error names the rule and the field
(`rules[2].split[1].weight: ...`), in the spec's VALIDATION_ERROR envelope."""

from __future__ import annotations

import re
from collections.abc import Callable

from shortlink.errors import ValidationError
from shortlink.in_app_browsers import IN_APP_TOKENS
from shortlink.link_rules.countries import COUNTRY_CODES
from shortlink.link_rules.schema import (
    MAX_CONDITIONS,
    MAX_RULES,
    MAX_VALUES,
    MAX_VARIANTS,
    MIN_VARIANTS,
    Condition,
    Rewrite,
    Rule,
    RulesDocument,
    Variant,
)
from shortlink.link_rules.stores import TABLES
from shortlink.links import public, validation
from shortlink.times import to_iso

DEVICES = ("phone", "tablet", "desktop")
OSES = ("ios", "android", "windows", "macos", "linux", "chromeos")
IN_APPS = (*(name for name, _ in IN_APP_TOKENS), "any")
CONDITION_TYPES = ("device", "os", "inApp", "country", "language", "query", "time", "referrerHost")
MAX_CLICKS = 10**9
MAX_VALUE_LENGTH = 200
MAX_FOLLOWED = 100  # short links of ours read while looking for a way back to the link

_LANGUAGE = re.compile(r"[a-z]{2,3}")
_DAILY = re.compile(r"([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]|24):([0-5]\d)")
_HOST = re.compile(r"(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*")


class LinkContext:
    """What every place a visitor may be sent must respect: the rules a link's destination
    follows (http(s), no blocked host, not its own short URL), and no way back to this link.

    `destinations_of(code)` answers where the service's short link `code` may send a visitor
    (its destination, its rules' URLs and fallback), for following chains of our short links."""

    def __init__(
        self,
        code: str,
        is_ours: Callable[[str], bool],
        blocked: frozenset[str],
        destinations_of: Callable[[str], list[str]] = lambda _code: [],
    ):
        self.code, self.is_ours, self.blocked = code, is_ours, blocked
        self.destinations_of = destinations_of
        self._followed: dict[str, list[str]] = {}

    def url(self, field: str, url: str) -> str:
        validation.validate_url(field, url)
        public.refuse_blocked(field, url, self.blocked)
        validation.refuse_link_to_itself(field, url, self.is_ours, self.code)
        self._refuse_way_back(field, url)
        return url

    def host(self, field: str, host: str) -> None:
        """A rewrite's host: what a destination's host may be, and not one of ours (the
        destination's path on the short host is a short link at best, this one at worst)."""
        entry = public.blocking_entry(host, self.blocked)
        if entry is not None:
            where = "" if entry == host else f" (under {entry})"
            raise ValidationError(field, f"{host}{where} is a host this service does not link to")
        if self.is_ours(host):
            raise ValidationError(field, f"{host} is this service's own host; a rewrite may not lead back into it")

    def _refuse_way_back(self, field: str, url: str) -> None:
        """A short link of ours whose chain of destinations leads back to this link: visitors
        would go round in circles. Followed as far as MAX_FOLLOWED links (per document)."""
        first = validation.short_link_code(url, self.is_ours)
        if first is None:
            return
        seen, waiting = {first}, [first]
        while waiting:
            code = waiting.pop()
            if code not in self._followed:
                if len(self._followed) >= MAX_FOLLOWED:
                    return  # as far as can be known in reasonable time
                self._followed[code] = self.destinations_of(code)
            for destination in self._followed[code]:
                found = validation.short_link_code(destination, self.is_ours)
                if found == self.code:
                    via = "" if code == first else f" through /l/{code}"
                    raise ValidationError(
                        field, f"leads to /l/{first}, which leads back to this link (/l/{self.code}){via}: a loop"
                    )
                if found is not None and found not in seen:
                    seen.add(found)
                    waiting.append(found)


def parse_window(field: str, value: str) -> tuple[str, float, float]:
    """("daily", start minute, end minute) for "09:00-17:30" (UTC; may wrap past midnight), or
    ("between", start, end) in Unix seconds for "2026-12-01T00:00:00Z/2026-12-24T00:00:00Z"."""
    daily = _DAILY.fullmatch(value)
    if daily is not None:
        start = int(daily.group(1)) * 60 + int(daily.group(2))
        end = int(daily.group(3)) * 60 + int(daily.group(4))
        if end > 24 * 60 or start == end:
            raise ValidationError(field, f"{value!r}: a daily window needs two different times up to 24:00")
        return "daily", start, end
    first, slash, last = value.partition("/")
    if not slash:
        raise ValidationError(
            field, f"{value!r} must be a daily UTC window such as 09:00-17:00 or an interval START/END in ISO 8601"
        )
    start_at, end_at = validation.parse_time(field, first), validation.parse_time(field, last)
    if end_at <= start_at:
        raise ValidationError(field, f"{value!r}: the end must come after the start")
    return "between", start_at.timestamp(), end_at.timestamp()


def _values(field: str, condition: Condition) -> list[str]:
    kind, values = condition.type, condition.values
    if not values:
        raise ValidationError(field, "must list at least one value")
    if len(values) > MAX_VALUES:
        raise ValidationError(field, f"at most {MAX_VALUES} values")
    checked: list[str] = []
    for index, raw in enumerate(values):
        where = f"{field}[{index}]"
        if not 1 <= len(raw) <= MAX_VALUE_LENGTH:
            raise ValidationError(where, f"must be 1-{MAX_VALUE_LENGTH} characters")
        validation.refuse_invisible_characters(where, raw)
        value = raw.strip()
        if kind in ("device", "os", "inApp"):
            allowed = {"device": DEVICES, "os": OSES, "inApp": IN_APPS}[kind]
            value = value.lower()
            if value not in allowed:
                raise ValidationError(where, f"unknown {kind} {raw!r}; one of {', '.join(allowed)}")
        elif kind == "country":
            value = value.upper()
            if value not in COUNTRY_CODES:
                raise ValidationError(where, f"unknown country {raw!r}; an ISO 3166-1 alpha-2 code such as DE")
        elif kind == "language":
            value = value.lower()
            if not _LANGUAGE.fullmatch(value):
                raise ValidationError(where, f"{raw!r} must be a primary language tag such as en or fr")
        elif kind == "query":
            name, equals, _ = value.partition("=")
            if not equals or not name:
                raise ValidationError(where, f"{raw!r} must be name=value (the query parameter and its value)")
        elif kind == "time":
            parse_window(where, value)
        else:  # referrerHost
            value = value.lower().rstrip(".")
            if not _HOST.fullmatch(value):
                raise ValidationError(where, f"{raw!r} must be a host name such as news.ycombinator.com")
        if value in checked:
            raise ValidationError(where, f"{value!r} is given twice")
        checked.append(value)
    return checked


def _conditions(field: str, conditions: list[Condition]) -> list[Condition]:
    if len(conditions) > MAX_CONDITIONS:
        raise ValidationError(field, f"at most {MAX_CONDITIONS} conditions per rule")
    checked = []
    for index, condition in enumerate(conditions):
        where = f"{field}[{index}]"
        if condition.type not in CONDITION_TYPES:
            raise ValidationError(
                f"{where}.type", f"unknown condition {condition.type!r}; one of {', '.join(CONDITION_TYPES)}"
            )
        checked.append(Condition(condition.type, _values(f"{where}.values", condition)))
    return checked


def _split(field: str, variants: list[Variant], link: LinkContext) -> list[Variant]:
    if not MIN_VARIANTS <= len(variants) <= MAX_VARIANTS:
        raise ValidationError(field, f"must have {MIN_VARIANTS}-{MAX_VARIANTS} variants (it has {len(variants)})")
    seen: set[str] = set()
    for index, variant in enumerate(variants):
        link.url(f"{field}[{index}].url", variant.url)
        if variant.url in seen:
            raise ValidationError(f"{field}[{index}].url", "the same URL is already a variant of this split")
        seen.add(variant.url)
        if not 1 <= variant.weight <= 99:
            raise ValidationError(f"{field}[{index}].weight", "must be 1-99")
    total = sum(variant.weight for variant in variants)
    if total != 100:
        raise ValidationError(field, f"weights must sum to 100 (they sum to {total})")
    return variants


def _rewrite(field: str, rewrite: Rewrite, link: LinkContext) -> Rewrite:
    if rewrite.table is None and not rewrite.hosts:
        raise ValidationError(field, 'needs a "table" (amazon) or a "hosts" map of country to host')
    if rewrite.table is not None and rewrite.table not in TABLES:
        raise ValidationError(f"{field}.table", f"unknown table {rewrite.table!r}; one of {', '.join(TABLES)}")
    hosts: dict[str, str] = {}
    for country, host in (rewrite.hosts or {}).items():
        code = country.strip().upper()
        if code not in COUNTRY_CODES:
            raise ValidationError(f"{field}.hosts", f"unknown country {country!r}; an ISO 3166-1 alpha-2 code")
        name = host.strip().lower().rstrip(".")
        if not _HOST.fullmatch(name) or "." not in name:
            raise ValidationError(f"{field}.hosts.{code}", f"{host!r} must be a host name such as www.example.de")
        link.host(f"{field}.hosts.{code}", name)
        hosts[code] = name
    if rewrite.table is not None:
        stores, _ = TABLES[rewrite.table]
        for country, store in stores.items():
            if country in hosts:  # the owner's host wins over the table's store
                continue
            # "www." + store: a www. destination keeps its www. (rewrite.py), and the entry's
            # suffixes cover the bare store too.
            entry = public.blocking_entry("www." + store, link.blocked)
            if entry is not None:
                raise ValidationError(
                    f"{field}.table",
                    f"the {rewrite.table} table sends visitors in {country} to {store}, which this service does not"
                    f" link to; map {country} to another host in hosts",
                )
    return Rewrite(table=rewrite.table, hosts=hosts or None)


def _rule(field: str, rule: Rule, link: LinkContext) -> Rule:
    actions = [name for name in ("url", "split", "rewrite") if getattr(rule, name) is not None]
    if len(actions) != 1:
        raise ValidationError(field, 'needs exactly one action: "url", "split" or "rewrite"')
    conditions = _conditions(f"{field}.conditions", rule.conditions)
    if rule.url is not None:
        return Rule(conditions=conditions, url=link.url(f"{field}.url", rule.url))
    if rule.split is not None:
        return Rule(conditions=conditions, split=_split(f"{field}.split", rule.split, link))
    assert rule.rewrite is not None
    return Rule(conditions=conditions, rewrite=_rewrite(f"{field}.rewrite", rule.rewrite, link))


def validated(document: RulesDocument, link: LinkContext) -> RulesDocument:
    """The document as it will be stored (codes upper-cased, languages and hosts lower-cased,
    `startsAt` in UTC), or a ValidationError naming the rule and the field."""
    if len(document.rules) > MAX_RULES:
        raise ValidationError("rules", f"at most {MAX_RULES} rules (there are {len(document.rules)})")
    checked = []
    for index, rule in enumerate(document.rules):
        if index and not document.rules[index - 1].conditions:
            raise ValidationError(
                f"rules[{index}]", f"is never reached: rules[{index - 1}] has no conditions and matches every visitor"
            )
        checked.append(_rule(f"rules[{index}]", rule, link))
    starts_at = None
    if document.starts_at is not None:
        starts_at = to_iso(validation.parse_time("startsAt", document.starts_at))
    if document.max_clicks is not None and not 1 <= document.max_clicks <= MAX_CLICKS:
        raise ValidationError("maxClicks", f"must be 1-{MAX_CLICKS}")
    fallback = None if document.fallback_url is None else link.url("fallbackUrl", document.fallback_url)
    return RulesDocument(rules=checked, starts_at=starts_at, max_clicks=document.max_clicks, fallback_url=fallback)
