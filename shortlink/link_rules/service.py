"""A link's rules document over a connection: read, replace (validated), for every door."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from shortlink.link_rules.schema import RuleAnalytics, RuleDay, RulesDocument, RuleStats
from shortlink.link_rules.validate import LinkContext, validated
from shortlink.links import service as links
from shortlink.storage import Connection, Row
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
    is_ours: Callable[[str], bool],
    blocked: frozenset[str],
) -> tuple[RulesDocument, str]:
    """Validate and store the link's whole document; returns it as stored and the link's code
    (its cache entry carries the compiled rules, so it must be forgotten)."""
    row = links.owned_row(conn, account_id, link_id)
    checked = validated(
        document, LinkContext(row["short_code"], is_ours, blocked, lambda code: destinations(conn, code))
    )
    encoded = None if is_empty(checked) else msgspec.json.encode(checked).decode()
    store.replace_document(conn, account_id, row["id"], encoded, to_iso(utcnow()))
    return checked, row["short_code"]


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
