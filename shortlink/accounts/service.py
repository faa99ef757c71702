"""Accounts, API keys, subscriptions and custom domains: the operations the CLI and API share."""

from __future__ import annotations

import hmac

from shortlink.accounts.schema import AccountOverview, AccountSummary, CreatedKey, KeySummary, Principal
from shortlink.accounts.validation import (
    KEY_PREFIX,
    KEY_RANDOM_LENGTH,
    VISIBLE_PREFIX_LENGTH,
    bearer_key,
    hash_key,
    normalise_email,
    validate_key_name,
)
from shortlink.errors import NotFoundError, UnauthorizedError, ValidationError
from shortlink.ids import new_id, random_string
from shortlink.links.platforms import host_name
from shortlink.storage import Connection, Row
from shortlink.storage import accounts as store
from shortlink.times import to_iso, utcnow


def account_for(conn: Connection, email: str) -> Row:
    account = store.account_by_email(conn, email)
    if account is None:
        raise NotFoundError(f"no account with e-mail {email}")
    return account


def ensure_account(conn: Connection, email: str, name: str | None = None) -> Row:
    """The account with this e-mail, created (with an active Pro subscription) if new."""
    return store.insert_account_with_subscription(conn, new_id("usr"), normalise_email(email), name, to_iso(utcnow()))


def create_key(conn: Connection, email: str, name: str | None = None) -> CreatedKey:
    """Create the account if needed (with an active Pro subscription) and a new API key."""
    validate_key_name(name)  # before the account is made: the name is the new account's too
    return issue_key(conn, ensure_account(conn, email, name), name)


def issue_key(conn: Connection, account: Row, name: str | None) -> CreatedKey:
    """A new API key of the account; the whole key exists only in the return value."""
    validate_key_name(name)
    key = KEY_PREFIX + random_string(KEY_RANDOM_LENGTH)
    key_id = new_id("key")
    now_iso = to_iso(utcnow())
    store.insert_api_key(conn, key_id, account["id"], key[:VISIBLE_PREFIX_LENGTH], hash_key(key), name, now_iso)
    return CreatedKey(key=key, key_id=key_id, user_id=account["public_id"], email=account["email"])


def account_by_id(conn: Connection, account_id: int) -> Row:
    account = store.account_by_id(conn, account_id)
    if account is None:
        raise NotFoundError("no such account")
    return account


def issue_key_for(conn: Connection, account_id: int, name: str | None) -> CreatedKey:
    return issue_key(conn, account_by_id(conn, account_id), name)


def overview(conn: Connection, account_id: int) -> AccountOverview:
    row = account_by_id(conn, account_id)
    return AccountOverview(
        email=row["email"],
        name=row["name"],
        created_at=row["created_at"],
        subscription_active=bool(row["subscription_active"]),
        current_period_end=row["current_period_end"],
        cancel_at_period_end=bool(row["cancel_at_period_end"]),
        domains=store.domains_of(conn, account_id),
    )


def revoke_key(conn: Connection, key_id: str, account_id: int | None = None) -> None:
    """Revoke a key (with `account_id`: only one of that account's)."""
    if not store.revoke_api_key(conn, key_id, to_iso(utcnow()), account_id):
        raise NotFoundError(f"no active key with id {key_id}")


def keys_of(conn: Connection, account_id: int) -> list[KeySummary]:
    return [
        KeySummary(
            row["public_id"], row["prefix"], row["name"], row["created_at"], row["revoked_at"], row["last_used_at"]
        )
        for row in store.api_keys_of(conn, account_id)
    ]


def list_keys(conn: Connection, email: str) -> list[KeySummary]:
    return keys_of(conn, account_for(conn, email)["id"])


def list_accounts(conn: Connection) -> list[AccountSummary]:
    return [
        AccountSummary(
            id=row["public_id"],
            email=row["email"],
            name=row["name"],
            subscription_active=bool(row["subscription_active"]),
            active_keys=row["active_keys"],
            links=row["links"],
            created_at=row["created_at"],
        )
        for row in store.all_accounts(conn)
    ]


def set_subscription(conn: Connection, email: str, active: bool) -> None:
    store.set_subscription_active(conn, account_for(conn, email)["id"], active)


def add_domain(conn: Connection, email: str, host: str) -> str:
    host = host.strip().lower().rstrip(".")
    if not host or "/" in host or ":" in host.split("]")[-1].rstrip("0123456789") or " " in host:
        raise ValidationError("host", "must be a bare host name such as links.example.com")
    host = host_name(host)  # the form visitors' Host headers are compared in (IDNs as punycode)
    if not store.insert_domain(conn, host, account_for(conn, email)["id"], to_iso(utcnow()), new_id("dom")):
        raise ValidationError("host", f"{host} is already connected to another account")
    return host


def authenticate(conn: Connection, authorization: str | None) -> Principal:
    """The principal of a live key; 401 for a missing, malformed, unknown or revoked key."""
    key = bearer_key(authorization)
    digest = hash_key(key)
    row = store.principal_by_key_hash(conn, digest)
    if row is None or not hmac.compare_digest(row["key_hash"].encode(), digest.encode()):
        raise UnauthorizedError("Invalid or revoked API key")
    return Principal(
        account_id=row["account_id"],
        account_public_id=row["account_public_id"],
        email=row["email"],
        name=row["name"],
        key_id=row["key_id"],
        key_public_id=row["key_public_id"],
        key_prefix=row["key_prefix"],
        subscription_active=bool(row["subscription_active"]),
        current_period_end=row["current_period_end"],
        cancel_at_period_end=bool(row["cancel_at_period_end"]),
        key_last_used_at=row["last_used_at"],
    )
