"""The link-rules editor at /links/{id}/rules: the rules as cards of plain form fields
(every condition type, the action, move up / down / delete, a blank card to add one), the limits,
"Try as a visitor", and clicks per rule. Server-rendered forms: works with a keyboard and without
JavaScript; every save goes through the same validation as the API."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from shortlink.application.sessions import SessionAccount
from shortlink.dashboard import forms
from shortlink.dashboard.guard import SignedInController
from shortlink.dashboard.render import page, see_other
from shortlink.errors import ValidationError
from shortlink.link_rules.schema import (
    MAX_RULES,
    Condition,
    Rewrite,
    Rule,
    RulesDocument,
    SimulatedResult,
    SimulatedVisit,
    Variant,
)
from shortlink.link_rules.validate import CONDITION_TYPES
from shortlink.wiring import Services

CONDITION_LABELS = {
    "device": "Device (phone, tablet, desktop)",
    "os": "OS (ios, android, windows, macos, linux, chromeos)",
    "inApp": "In-app browser (instagram, tiktok, facebook, … or any)",
    "country": "Country codes (DE, FR, …)",
    "language": "Languages (en, fr, …)",
    "query": "Query parameter (name=value)",
    "time": "Time window, UTC (09:00-17:00, or START/END)",
    "referrerHost": "Referrer host (news.ycombinator.com)",
}
_RULE_INDEX = re.compile(r"rules\[(\d+)\]")
_CARD_FIELD = re.compile(r"r(\d{1,6})-[A-Za-z]+")


def _values(text: str) -> list[str]:
    return [value.strip() for value in text.split(",") if value.strip()]


def _split(index: int, text: str) -> list[Variant]:
    variants = []
    for line in text.splitlines():
        if not line.strip():
            continue
        weight, _, url = line.strip().partition(" ")
        if not weight.isdigit() or not url.strip():
            raise ValidationError(
                f"rules[{index}].split", "each line is a weight and a URL, e.g. 50 https://example.com/a"
            )
        variants.append(Variant(url=url.strip(), weight=int(weight)))
    return variants


def _hosts(index: int, text: str) -> dict[str, str]:
    hosts = {}
    for line in text.splitlines():
        if line.strip():
            country, _, host = line.strip().partition(" ")
            if not host.strip():
                raise ValidationError(
                    f"rules[{index}].rewrite.hosts", "each line is a country and a host, e.g. CA www.example.ca"
                )
            hosts[country] = host.strip()
    return hosts


def rule_from_form(form: Mapping[str, Any], index: int) -> Rule | None:
    """Card `index` as a Rule; None for a blank card (the one for a new rule, left empty)."""
    conditions = [
        Condition(kind, _values(forms.text(form, f"r{index}-{kind}")))
        for kind in CONDITION_TYPES
        if forms.text(form, f"r{index}-{kind}")
    ]
    action = forms.text(form, f"r{index}-action") or "url"
    url, split = forms.text(form, f"r{index}-url"), forms.text(form, f"r{index}-split")
    table, hosts = forms.text(form, f"r{index}-table"), forms.text(form, f"r{index}-hosts")
    if not (conditions or url or split or table or hosts):
        return None
    if action == "split":
        return Rule(conditions=conditions, split=_split(index, split))
    if action == "rewrite":
        return Rule(conditions=conditions, rewrite=Rewrite(table=table or None, hosts=_hosts(index, hosts) or None))
    return Rule(conditions=conditions, url=url)


def card_indexes(form: Mapping[str, Any]) -> list[int]:
    """The indexes of the cards the form sent, in order: read from its field names, never from a
    number the client states (a loop over a stated count would hold the event loop for as long
    as the client likes). At most one card more than the rule limit: the blank one."""
    indexes = sorted({int(found.group(1)) for name in form if (found := _CARD_FIELD.fullmatch(name))})
    if len(indexes) > MAX_RULES + 1:
        raise ValidationError("rules", f"at most {MAX_RULES} rules (the form sent {len(indexes)} rule cards)")
    return indexes


def document_from_form(form: Mapping[str, Any], op: str) -> RulesDocument:
    """The cards in order, the operation applied (up-N, down-N, delete-N), and the limits."""
    rules = [rule for index in card_indexes(form) if (rule := rule_from_form(form, index)) is not None]
    kind, _, number = op.partition("-")
    if number.isdigit() and int(number) < len(rules):
        at = int(number)
        if kind == "delete":
            del rules[at]
        elif kind == "up" and at > 0:
            rules[at - 1], rules[at] = rules[at], rules[at - 1]
        elif kind == "down" and at + 1 < len(rules):
            rules[at + 1], rules[at] = rules[at], rules[at + 1]
    max_clicks = forms.text(form, "maxClicks")
    if max_clicks and not max_clicks.isdigit():
        raise ValidationError("maxClicks", "must be a whole number")
    starts_at = forms.text(form, "startsAt")
    return RulesDocument(
        rules=rules,
        starts_at=forms.expiry(starts_at) if starts_at else None,
        max_clicks=int(max_clicks) if max_clicks else None,
        fallback_url=forms.text(form, "fallbackUrl") or None,
    )


def card_of(rule: Rule, summary: str) -> dict[str, Any]:
    """A rule as the card's field values; `summary`, its action in a few words."""
    return {
        "conditions": {condition.type: ", ".join(condition.values) for condition in rule.conditions},
        "action": "split" if rule.split is not None else "rewrite" if rule.rewrite is not None else "url",
        "url": rule.url or "",
        "split": "\n".join(f"{variant.weight} {variant.url}" for variant in rule.split or []),
        "table": rule.rewrite.table if rule.rewrite is not None and rule.rewrite.table else "",
        "hosts": "\n".join(f"{c} {h}" for c, h in ((rule.rewrite.hosts or {}) if rule.rewrite else {}).items()),
        "summary": summary,
    }


class RulePages(SignedInController):
    path = "/links/{link_id:str}/rules"

    async def _page(
        self,
        request: Request,
        services: Services,
        account_id: int,
        link_id: str,
        document: RulesDocument,
        *,
        status_code: int = 200,
        error: ValidationError | None = None,
        tried: SimulatedResult | None = None,
        visit: SimulatedVisit | None = None,
    ) -> Response:
        link = await services.links.get(account_id, link_id)
        stats = await services.link_rules.analytics(account_id, link_id, "30", None, None)
        top = max((item.clicks for item in stats.rules), default=0)
        where = _RULE_INDEX.match(error.field) if error is not None else None
        return page(
            request,
            "link_rules.html",
            status_code=status_code,
            link=link,
            cards=[card_of(rule, services.link_rules.summary(rule)) for rule in document.rules],
            document=document,
            starts_at=forms.expiry_input(document.starts_at),
            labels=CONDITION_LABELS,
            error=error,
            error_card=int(where.group(1)) if where else None,
            stats=stats.rules,
            top=top,
            sentences=services.link_rules.sentences(tried) if tried is not None else None,
            visit=visit or SimulatedVisit(user_agent=request.headers.get("user-agent", "")[:512]),
            saved=request.query_params.get("saved") == "1",
        )

    @get("/")
    async def show(
        self,
        request: Request,
        link_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        document = await services.link_rules.rules(session.account_id, link_id)
        return await self._page(request, services, session.account_id, link_id, document)

    @post("/")
    async def save(
        self,
        request: Request,
        link_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        form = await request.form()
        document = RulesDocument()
        try:
            document = document_from_form(form, forms.text(form, "op"))
            await services.link_rules.set_rules(session.account_id, link_id, document, door="dashboard")
        except ValidationError as exc:
            return await self._page(
                request, services, session.account_id, link_id, document, status_code=400, error=exc
            )
        return see_other(f"/links/{link_id}/rules?saved=1")

    @post("/try")
    async def try_visit(
        self,
        request: Request,
        link_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        form = await request.form()
        visit = SimulatedVisit(
            user_agent=forms.text(form, "userAgent")[:512],
            country=forms.text(form, "country") or None,
            accept_language=forms.text(form, "acceptLanguage")[:512],
            query=forms.text(form, "query").lstrip("?")[:2048],
            referrer=forms.text(form, "referrer")[:2048],
        )
        document = await services.link_rules.rules(session.account_id, link_id)
        try:
            tried = await services.link_rules.test(session.account_id, link_id, visit)
        except ValidationError as exc:
            return await self._page(
                request, services, session.account_id, link_id, document, status_code=400, error=exc, visit=visit
            )
        return await self._page(request, services, session.account_id, link_id, document, tried=tried, visit=visit)
