"""A link's rules document over a connection: read, replace (validated), for every door."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from shortlink.links import service as links
from shortlink.storage import Connection
from shortlink.storage import targeting as store
from shortlink.targeting.schema import RulesDocument
from shortlink.targeting.validate import LinkContext, validated
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
    checked = validated(document, LinkContext(row["short_code"], is_ours, blocked))
    encoded = None if is_empty(checked) else msgspec.json.encode(checked).decode()
    store.replace_document(conn, row["id"], account_id, encoded, to_iso(utcnow()))
    return checked, row["short_code"]
