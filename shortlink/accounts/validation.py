"""Account and API key rules that need no database: the key format, e-mail addresses, key names,
the Authorization header, the Pro gate."""

from __future__ import annotations

import hashlib
from datetime import datetime

from shortlink.accounts.schema import Principal
from shortlink.errors import SubscriptionRequiredError, UnauthorizedError, ValidationError
from shortlink.links.validation import refuse_invisible_characters
from shortlink.times import from_iso

KEY_PREFIX = "sl_live_"
KEY_RANDOM_LENGTH = 32
VISIBLE_PREFIX_LENGTH = len(KEY_PREFIX) + 4  # "sl_live_AbCd": enough to tell keys apart, useless to guess
MAX_KEY_NAME = 100
# A key's "last used" is written at most this often: one small write a minute per busy
# key rather than one per request.
KEY_USE_RESOLUTION_SECONDS = 60


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


def normalise_email(email: str) -> str:
    email = email.strip()
    if "@" not in email or len(email) > 254:
        raise ValidationError("email", "must be an e-mail address")
    refuse_invisible_characters("email", email)
    return email


def validate_key_name(name: str | None) -> None:
    if name is None:
        return
    if len(name) > MAX_KEY_NAME:
        raise ValidationError("name", f"must be at most {MAX_KEY_NAME} characters")
    refuse_invisible_characters("name", name)


def key_use_is_stale(principal: Principal, now: datetime) -> bool:
    """Whether the key's stored "last used" is old enough to be written again."""
    last = principal.key_last_used_at
    return last is None or (now - from_iso(last)).total_seconds() >= KEY_USE_RESOLUTION_SECONDS


def bearer_key(authorization: str | None) -> str:
    if not authorization:
        raise UnauthorizedError("Missing Authorization header: send 'Authorization: Bearer <API key>'")
    scheme, _, key = authorization.strip().partition(" ")
    key = key.strip()
    if scheme.lower() != "bearer" or not looks_like_key(key):
        raise UnauthorizedError("Malformed Authorization header: expected 'Bearer sl_live_<32 characters>'")
    return key


def require_subscription(principal: Principal) -> None:
    if not principal.subscription_active:
        raise SubscriptionRequiredError("This API needs an active Pro subscription on the key's account")
