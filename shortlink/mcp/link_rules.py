"""The link-rules tools: read, set and test a link's rules, and send everyone to another
address and back, as the API's extension endpoints do. Registered with the other tools when
`mcp.http` imports this module."""

from __future__ import annotations

import msgspec

from shortlink.accounts.schema import Principal
from shortlink.link_rules.schema import Destination, RulesDocument, SimulatedResult, SimulatedVisit
from shortlink.mcp.tools import LinkArguments, LinkId, ToolResult, tool
from shortlink.wiring import Services


class SetRulesArguments(RulesDocument, kw_only=True):
    id: LinkId


class TestRulesArguments(SimulatedVisit, kw_only=True):
    id: LinkId


class DestinationArguments(msgspec.Struct, forbid_unknown_fields=True):
    id: LinkId
    url: str


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


def _destination_line(link_id: str, found: Destination) -> str:
    if found.url == found.original_url:
        return f"{link_id}: visitors go to {found.url}, the address it was created for, since {found.since}"
    return f"{link_id}: visitors go to {found.url} since {found.since} (created for {found.original_url})"


@tool(
    "set_link_destination",
    "Send every visitor of a link to another address from now on; the short URL and printed QR codes stay the same, "
    "and originalUrl stays what the link was created for. Kept in the link's history. Refused when the link's rules "
    "send visitors by condition (they would be unreachable).",
    DestinationArguments,
    Destination,
    destructive=True,
    idempotent=True,
)
async def set_link_destination(services: Services, principal: Principal, arguments: DestinationArguments) -> ToolResult:
    found = await services.link_rules.send_everyone_to(principal.account_id, arguments.id, arguments.url, door="mcp")
    return ToolResult(found, _destination_line(arguments.id, found))


@tool(
    "clear_link_destination",
    "Send a link's visitors to its originalUrl again, undoing set_link_destination (kept in the link's history).",
    LinkArguments,
    Destination,
    destructive=True,
    idempotent=True,
)
async def clear_link_destination(services: Services, principal: Principal, arguments: LinkArguments) -> ToolResult:
    found = await services.link_rules.send_everyone_back(principal.account_id, arguments.id, door="mcp")
    return ToolResult(found, _destination_line(arguments.id, found))
