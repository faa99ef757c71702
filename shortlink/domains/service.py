"""Domains over a connection: connect, read, change, remove, and what a check's outcome does.

When a domain is checked (docs/deployment.md, "Domains people connect themselves"):
- unverified: every hour for 7 days (from when it was added, or from when it lost its
  verification); after that only when its account asks ("verify now");
- verified: every day. A verified domain whose record is gone stays verified for 72 hours after
  the record was last seen (a DNS change gone wrong should not take links down at once), checked
  hourly meanwhile; then it is unverified and no longer served.
The operator's domains (`shortlink domain add`) have no record and are never checked.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta

import msgspec

from shortlink.domains.schema import CreateDomain, Domain, UpdateDomain, Verification
from shortlink.errors import ConflictError, NotFoundError
from shortlink.ids import new_id
from shortlink.links.platforms import host_name
from shortlink.links.validation import validate_url
from shortlink.storage import Connection, Row
from shortlink.storage import domains as store
from shortlink.times import from_iso, to_iso

RECORD_LABEL = "_shortlink-verify"
RECORD_PREFIX = "shortlink-verify="
UNVERIFIED_EVERY = timedelta(hours=1)
UNVERIFIED_FOR = timedelta(days=7)
VERIFIED_EVERY = timedelta(days=1)
GRACE = timedelta(hours=72)


def record_name(host: str) -> str:
    return f"{RECORD_LABEL}.{host}"


def to_domain(row: Row) -> Domain:
    token = row["token"]
    return Domain(
        id=row["public_id"],
        name=row["host"].lower(),
        verified=row["verified_at"] is not None,
        verification=None
        if token is None
        else Verification(type="TXT", name=record_name(row["host"].lower()), value=RECORD_PREFIX + token),
        root_redirect=row["root_redirect"],
        not_found_redirect=row["not_found_redirect"],
        created_at=row["created_at"],
        verified_at=row["verified_at"],
        checked_at=row["checked_at"],
        check_error=row["check_error"],
    )


def _redirect(field: str, url: str | None) -> str | None:
    return None if url is None else validate_url(field, url)


def connect(conn: Connection, account_id: int, host: str, body: CreateDomain, now: datetime) -> Domain:
    """`host` already validated (domains.validation). A random token per domain and account:
    never one another account's record could satisfy."""
    root = _redirect("rootRedirect", body.root_redirect)
    not_found = _redirect("notFoundRedirect", body.not_found_redirect)
    token = secrets.token_urlsafe(24)
    row = store.claim(conn, host, account_id, new_id("dom"), token, to_iso(now), to_iso(now - UNVERIFIED_FOR))
    if row is None:
        raise ConflictError(f"{host} is already connected to another account")
    if root is not None or not_found is not None:
        store.set_redirects(conn, account_id, row["public_id"], root, not_found)
        row = domain_row(conn, account_id, row["public_id"])
    return to_domain(row)


def domain_row(conn: Connection, account_id: int, domain_id: str) -> Row:
    row = store.one(conn, account_id, domain_id)
    if row is None:
        raise NotFoundError("Domain not found")
    return row


def named(conn: Connection, name: str) -> Row:
    """The domain of any account whose host or id is `name` (the operator's commands), with its
    `account_id`."""
    row = store.find(conn, host_name(name), name.strip())
    if row is None:
        raise NotFoundError(f"no domain {name} (neither a connected host nor a domain id)")
    return row


def list_domains(conn: Connection, account_id: int) -> list[Domain]:
    return [to_domain(row) for row in store.of_account(conn, account_id)]


def update(conn: Connection, account_id: int, domain_id: str, patch: UpdateDomain) -> Domain:
    row = domain_row(conn, account_id, domain_id)
    root = row["root_redirect"] if patch.root_redirect is msgspec.UNSET else patch.root_redirect
    not_found = row["not_found_redirect"] if patch.not_found_redirect is msgspec.UNSET else patch.not_found_redirect
    store.set_redirects(
        conn, account_id, domain_id, _redirect("rootRedirect", root), _redirect("notFoundRedirect", not_found)
    )
    return to_domain(domain_row(conn, account_id, domain_id))


def remove(conn: Connection, account_id: int, domain_id: str) -> None:
    if not store.delete(conn, account_id, domain_id):
        raise NotFoundError("Domain not found")


def holds_token(row: Row, values: list[str]) -> bool:
    return RECORD_PREFIX + row["token"] in values


def record_outcome(conn: Connection, row: Row, found: bool, error: str | None, now: datetime) -> None:
    """Store what a check saw: `found` the token, or not; `error` when no answer came at all,
    which changes no verification."""
    verified_at = row["verified_at"]
    last_seen = row["seen_at"] or verified_at
    lost_at = None if last_seen is None else from_iso(last_seen) + GRACE
    check_at: datetime | None = now + VERIFIED_EVERY
    if found:
        verified_at = verified_at or to_iso(now)
    else:
        if error is None:
            if verified_at is not None and lost_at is not None and now >= lost_at:
                verified_at = None
            error = f"no TXT record {RECORD_PREFIX}... at {record_name(row['host'].lower())}"
        since = from_iso(row["created_at"]) if lost_at is None else lost_at
        keep_checking = verified_at is not None or now + UNVERIFIED_EVERY <= since + UNVERIFIED_FOR
        check_at = now + UNVERIFIED_EVERY if keep_checking else None
    store.record_check(
        conn,
        row["host"],
        checked_at=to_iso(now),
        seen=found,
        verified_at=verified_at,
        error=None if found else error,
        check_at=None if check_at is None else to_iso(check_at),
    )
