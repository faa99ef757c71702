"""Dashboard account passwords: argon2id hashes, checked in constant cost.

(Link passwords, which visitors type, are another kind: shortlink.links.passwords.)"""

from __future__ import annotations

import secrets
from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from shortlink.errors import ValidationError

MIN_PASSWORD, MAX_PASSWORD = 10, 256
# argon2-cffi's defaults are RFC 9106's second recommendation for argon2id (64 MiB, t=3).
_hasher = PasswordHasher()


@cache
def _unknown_account_hash() -> str:
    """Checked against when the e-mail is unknown, so that a wrong e-mail costs the time a
    wrong password does. Made on first use: an argon2 hash at import would cost every
    process that imports this module (each CLI command) a fifth of a second."""
    return _hasher.hash(secrets.token_urlsafe(16))


def validate_password(password: str) -> None:
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise ValidationError("password", f"must be {MIN_PASSWORD} to {MAX_PASSWORD} characters")


def hash_password(password: str) -> str:
    validate_password(password)
    return _hasher.hash(password)


def verify_password(password: str, password_hash: str | None) -> bool:
    """Constant in cost whether or not the account (or its password) exists."""
    try:
        return _hasher.verify(password_hash or _unknown_account_hash(), password) and password_hash is not None
    except (VerificationError, InvalidHashError):
        return False
