"""The link-rules tools: read, set and test a link's rules, as the API's extension
endpoints do. Registered with the other tools when `mcp.http` imports this module."""

from __future__ import annotations

from shortlink.accounts.schema import Principal
from shortlink.link_rules.schema import RulesDocument, SimulatedResult, SimulatedVisit
from shortlink.mcp.tools import LinkArguments, LinkId, ToolResult, tool
from shortlink.wiring import Services


class SetRulesArguments(RulesDocument, kw_only=True):
    id: LinkId


class TestRulesArguments(SimulatedVisit, kw_only=True):
    id: LinkId


def _rules_line(link_id: str, document: RulesDocument) -> str:
    limits = [
        f"{name} {value}"
        for name, value in (
            ("starts", document.starts_at),
            ("max clicks", document.max_clicks),
            ("fallback", document.fallback_url),
        )
        if value is not None
    ]
    return f"{link_id}: {len(document.rules)} rules" + (f"; {', '.join(limits)}" if limits else "")


@tool(
    "get_link_rules",
    "A link's ordered rules (first match wins: conditions on device, os, inApp, country, language, query, time, "
    "referrerHost; an action url, split or rewrite), its start time, cap on human clicks and fallback URL.",
    LinkArguments,
    RulesDocument,
    read_only=True,
)
async def get_link_rules(services: Services, principal: Principal, arguments: LinkArguments) -> ToolResult:
    document = await services.link_rules.rules(principal.account_id, arguments.id)
    return ToolResult(document, _rules_line(arguments.id, document))


@tool(
    "set_link_rules",
    "Replace a link's whole rules document (as get_link_rules shows it); an empty rules list and no limits remove "
    "them. Errors name the rule and the field, e.g. rules[2].split: weights must sum to 100.",
    SetRulesArguments,
    RulesDocument,
    destructive=True,
    idempotent=True,
)
async def set_link_rules(services: Services, principal: Principal, arguments: SetRulesArguments) -> ToolResult:
    document = RulesDocument(
        rules=arguments.rules,
        starts_at=arguments.starts_at,
        max_clicks=arguments.max_clicks,
        fallback_url=arguments.fallback_url,
    )
    stored = await services.link_rules.set_rules(principal.account_id, arguments.id, document, door="mcp")
    return ToolResult(stored, "Set " + _rules_line(arguments.id, stored))


@tool(
    "test_link_rules",
    "What a simulated visitor (userAgent, country, acceptLanguage, query, referrer, time) would get of a link: "
    "which rule matches and where they are sent, or which page they see. Records no click.",
    TestRulesArguments,
    SimulatedResult,
    read_only=True,
)
async def test_link_rules(services: Services, principal: Principal, arguments: TestRulesArguments) -> ToolResult:
    visit = SimulatedVisit(
        user_agent=arguments.user_agent,
        country=arguments.country,
        accept_language=arguments.accept_language,
        query=arguments.query,
        referrer=arguments.referrer,
        time=arguments.time,
    )
    result = await services.link_rules.test(principal.account_id, arguments.id, visit)
    rule = "no rule (the link's own destination)" if result.rule is None else f"rule {result.rule}"
    where = (
        result.location
        if result.page is None
        else f"the {result.page} page" + (f" ({result.location})" if result.location else "")
    )
    return ToolResult(result, f"{rule}: {result.status}, {where}")
