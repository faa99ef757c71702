"""A link's rules document over a connection: read, replace (validated), for every door."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from shortlink.errors import ValidationError
from shortlink.link_rules.schema import (
    Destination,
    DestinationChange,
    Rule,
    RuleAnalytics,
    RuleDay,
    RulesDocument,
    RuleStats,
)
from shortlink.link_rules.validate import LinkContext, validated
from shortlink.links import service as links
from shortlink.storage import Connection, Row, transaction
from shortlink.storage import link_rules as store
from shortlink.storage import links as link_store
from shortlink.times import to_iso, utcnow


def decode(document: str | None) -> RulesDocument:
    """A stored document; no row is the empty document."""
    return RulesDocument() if document is None else msgspec.json.decode(document, type=RulesDocument)


def is_empty(document: RulesDocument) -> bool:
    return not document.rules and document == RulesDocument()


def link_rules(conn: Connection, account_id: int, link_id: str) -> RulesDocument:
    row = links.owned_row(conn, account_id, link_id)
    return decode(store.document_of(conn, row["id"]))


def set_link_rules(
    conn: Connection,
    account_id: int,
    link_id: str,
    document: RulesDocument,
    *,
    door: str,
    is_ours: Callable[[str], bool],
    blocked: frozenset[str],
) -> tuple[RulesDocument, str]:
    """Validate and store the link's whole document; returns it as stored and the link's code
    (its cache entry carries the compiled rules, so it must be forgotten). A document that
    changes where everyone goes (`everyone_url`) adds the change to the link's history, made
    through `door`."""
    row = links.owned_row(conn, account_id, link_id)
    checked = validated(
        document, LinkContext(row["short_code"], is_ours, blocked, lambda code: destinations(conn, code))
    )
    encoded = None if is_empty(checked) else msgspec.json.encode(checked).decode()
    now = to_iso(utcnow())
    with transaction(conn):
        before = everyone_url(decode(store.document_of(conn, row["id"])))
        store.replace_document(conn, account_id, row["id"], encoded, now)
        if (after := everyone_url(checked)) != before:
            store.add_destination(conn, row["id"], now, after, door)
    return checked, row["short_code"]


def everyone_url(document: RulesDocument) -> str | None:
    """Where the document sends every visitor: its first rule's URL when that rule has no
    conditions (so it is the only rule); None: the link's own originalUrl."""
    first = document.rules[0] if document.rules else None
    return first.url if first is not None and not first.conditions else None


def destination(conn: Connection, account_id: int, link_id: str) -> Destination:
    """Where the link's visitors go now, since when, and every change, newest first."""
    row = links.owned_row(conn, account_id, link_id)
    original = row["original_url"]
    url = everyone_url(decode(store.document_of(conn, row["id"]))) or original
    history = [DestinationChange(at, to or original, door) for at, to, door in store.destinations_of(conn, row["id"])]
    return Destination(url, history[0].at if history else row["created_at"], original, history)


def everyone_urls(conn: Connection, account_id: int, link_ids: list[str]) -> dict[str, str]:
    """Of the account's links named, those whose visitors all go elsewhere: link id → address."""
    found = (
        (link_id, everyone_url(decode(document)))
        for link_id, document in store.documents_of_links(conn, account_id, link_ids)
    )
    return {link_id: url for link_id, url in found if url is not None}


def send_everyone(
    conn: Connection,
    account_id: int,
    link_id: str,
    url: str | None,
    *,
    door: str,
    is_ours: Callable[[str], bool],
    blocked: frozenset[str],
) -> tuple[Destination, str]:
    """Send every visitor of the link to `url` (None: to its originalUrl again): the rules
    document's one rule without conditions, the limits kept. A link whose rules send visitors
    by condition is refused: a rule for everyone before them would leave them unreachable.
    Returns the destination and the link's code."""
    row = links.owned_row(conn, account_id, link_id)
    document = decode(store.document_of(conn, row["id"]))
    if document.rules and everyone_url(document) is None:
        if url is None:  # nothing to undo: visitors already go where the rules say
            return destination(conn, account_id, link_id), row["short_code"]
        raise ValidationError(
            "url",
            f"this link has {len(document.rules)} rule(s) that send visitors by device, country and the like; "
            "sending everyone to one address would leave them unreachable: remove them from the link's rules first",
        )
    rules = [] if url is None else [Rule(url=url)]
    try:
        _, code = set_link_rules(
            conn,
            account_id,
            link_id,
            msgspec.structs.replace(document, rules=rules),
            door=door,
            is_ours=is_ours,
            blocked=blocked,
        )
    except ValidationError as error:  # the rule's field is this door's url
        raise ValidationError("url", str(error).removeprefix(f"{error.field}: ")) from None
    return destination(conn, account_id, link_id), code


def destinations(conn: Connection, code: str) -> list[str]:
    """Every URL the short link `code` may send a visitor to as stored now: its destination, its
    rules' URLs and split variants, its fallback (none for a code without a link)."""
    rows = link_store.visit_target_rows(conn, [code])
    if not rows:
        return []
    document = decode(rows[0]["document"])
    urls = [rows[0]["original_url"], *(url for rule in document.rules if (url := rule.url) is not None)]
    urls += [variant.url for rule in document.rules for variant in rule.split or []]
    return urls if document.fallback_url is None else [*urls, document.fallback_url]


def visit_target_row(conn: Connection, account_id: int, link_id: str) -> Row:
    """The visitor path's row of the account's link, its rules included, read now (the tester
    sees the rules as stored, not as a cache holds them)."""
    row = links.owned_row(conn, account_id, link_id)
    return link_store.visit_target_rows(conn, [row["short_code"]])[0]


def rule_analytics(conn: Connection, account_id: int, link_id: str, first_day: str, last_day: str) -> RuleAnalytics:
    """Human clicks and unique visitors per rule and variant per day, from the rollups."""
    row = links.owned_row(conn, account_id, link_id)
    found: dict[tuple[int, int], RuleStats] = {}
    for rule, variant, day, clicks, visitors in store.rule_days(conn, row["id"], first_day, last_day):
        stats = found.get((rule, variant))
        if stats is None:
            stats = found[(rule, variant)] = RuleStats(rule, None if variant < 0 else variant, 0, 0, [])
        stats.clicks += clicks
        stats.unique_visitors += visitors
        stats.days.append(RuleDay(day, clicks, visitors))
    return RuleAnalytics(link_id, first_day, last_day, list(found.values()))
