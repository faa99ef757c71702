"""Accounts, API keys, subscriptions and custom domains: the rules the CLI and API share."""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime

import msgspec

from shortlink.errors import NotFoundError, SubscriptionRequiredError, UnauthorizedError, ValidationError
from shortlink.ids import new_id, random_string
from shortlink.links.platforms import host_name
from shortlink.links.rules import refuse_invisible_characters
from shortlink.storage import Connection, Row
from shortlink.storage import accounts as store
from shortlink.times import from_iso, to_iso, utcnow

KEY_PREFIX = "sl_live_"
KEY_RANDOM_LENGTH = 32
VISIBLE_PREFIX_LENGTH = len(KEY_PREFIX) + 4  # "sl_live_AbCd": enough to tell keys apart, useless to guess
MAX_KEY_NAME = 100
# A key's "last used" is written at most this often: one small write a minute per busy
# key rather than one per request.
KEY_USE_RESOLUTION_SECONDS = 60


class CreatedKey(msgspec.Struct, rename="camel"):
    key: str
    key_id: str
    user_id: str
    email: str


class AccountOverview(msgspec.Struct, frozen=True):
    """An account as its owner sees it on the dashboard's account page."""

    email: str
    name: str | None
    created_at: str
    subscription_active: bool
    current_period_end: str | None
    cancel_at_period_end: bool
    domains: list[str]


class AccountSummary(msgspec.Struct, rename="camel"):
    id: str
    email: str
    name: str | None
    subscription_active: bool
    active_keys: int
    links: int
    created_at: str


class KeySummary(msgspec.Struct, rename="camel"):
    id: str
    prefix: str
    name: str | None
    created_at: str
    revoked_at: str | None
    last_used_at: str | None = None


class Principal(msgspec.Struct, frozen=True):
    """Who an API request acts for."""

    account_id: int
    account_public_id: str
    email: str
    name: str | None
    key_id: int
    key_public_id: str
    key_prefix: str
    subscription_active: bool
    current_period_end: str | None
    cancel_at_period_end: bool
    key_last_used_at: str | None = None


def hash_key(key: str) -> str:
    # Keys carry ~190 random bits, so a fast hash is as safe as a slow one here.
    return hashlib.sha256(key.encode()).hexdigest()


def looks_like_key(key: str) -> bool:
    return (
        len(key) == len(KEY_PREFIX) + KEY_RANDOM_LENGTH
        and key.startswith(KEY_PREFIX)
        and key[len(KEY_PREFIX) :].isascii()
        and key[len(KEY_PREFIX) :].isalnum()
    )


def account_for(conn: Connection, email: str) -> Row:
    account = store.account_by_email(conn, email)
    if account is None:
        raise NotFoundError(f"no account with e-mail {email}")
    return account


def normalise_email(email: str) -> str:
    email = email.strip()
    if "@" not in email or len(email) > 254:
        raise ValidationError("email", "must be an e-mail address")
    refuse_invisible_characters("email", email)
    return email


def ensure_account(conn: Connection, email: str, name: str | None = None) -> Row:
    """The account with this e-mail, created (with an active Pro subscription) if new."""
    return store.insert_account_with_subscription(conn, new_id("usr"), normalise_email(email), name, to_iso(utcnow()))


def create_key(conn: Connection, email: str, name: str | None = None) -> CreatedKey:
    """Create the account if needed (with an active Pro subscription) and a new API key."""
    validate_key_name(name)  # before the account is made: the name is the new account's too
    return issue_key(conn, ensure_account(conn, email, name), name)


def validate_key_name(name: str | None) -> None:
    if name is None:
        return
    if len(name) > MAX_KEY_NAME:
        raise ValidationError("name", f"must be at most {MAX_KEY_NAME} characters")
    refuse_invisible_characters("name", name)


def issue_key(conn: Connection, account: Row, name: str | None) -> CreatedKey:
    """A new API key of the account; the whole key exists only in the return value."""
    validate_key_name(name)
    key = KEY_PREFIX + random_string(KEY_RANDOM_LENGTH)
    key_id = new_id("key")
    now = to_iso(utcnow())
    store.insert_api_key(conn, key_id, account["id"], key[:VISIBLE_PREFIX_LENGTH], hash_key(key), name, now)
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


def key_use_is_stale(principal: Principal, now: datetime) -> bool:
    """Whether the key's stored "last used" is old enough to be written again."""
    last = principal.key_last_used_at
    return last is None or (now - from_iso(last)).total_seconds() >= KEY_USE_RESOLUTION_SECONDS


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
    if not store.insert_domain(conn, host, account_for(conn, email)["id"], to_iso(utcnow())):
        raise ValidationError("host", f"{host} is already connected to another account")
    return host


def bearer_key(authorization: str | None) -> str:
    if not authorization:
        raise UnauthorizedError("Missing Authorization header: send 'Authorization: Bearer <API key>'")
    scheme, _, key = authorization.strip().partition(" ")
    key = key.strip()
    if scheme.lower() != "bearer" or not looks_like_key(key):
        raise UnauthorizedError("Malformed Authorization header: expected 'Bearer sl_live_<32 characters>'")
    return key


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


def require_subscription(principal: Principal) -> None:
    if not principal.subscription_active:
        raise SubscriptionRequiredError("This API needs an active Pro subscription on the key's account")
