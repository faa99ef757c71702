"""Link passwords, which visitors type to open a protected link: scrypt hashes.

(Dashboard account passwords are another kind: shortlink.accounts.passwords.)"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets

from shortlink.errors import ValidationError

# scrypt: memory-hard, in the standard library; parameters stored with each hash.
_SCRYPT_N, _SCRYPT_R, _SCRYPT_P = 2**14, 8, 1


def validate_password(password: str) -> str:
    if not 4 <= len(password) <= 64:
        raise ValidationError("password", "must be 4-64 characters")
    return password


def hash_password(password: str) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=_SCRYPT_N, r=_SCRYPT_R, p=_SCRYPT_P, dklen=32)
    encoded_salt, encoded_digest = base64.b64encode(salt).decode(), base64.b64encode(digest).decode()
    return f"scrypt${_SCRYPT_N}${_SCRYPT_R}${_SCRYPT_P}${encoded_salt}${encoded_digest}"


_PASSWORD_HASH = re.compile(r"scrypt\$\d+\$\d+\$\d+\$[A-Za-z0-9+/]+=*\$[A-Za-z0-9+/]+=*")


def validate_password_hash(stored: str) -> str:
    """A hash `hash_password` wrote, as an export carries it (the password never travels)."""
    if not _PASSWORD_HASH.fullmatch(stored):
        raise ValidationError("password_hash", "must be a hash written by this service's export")
    return stored


def verify_password(password: str, stored: str) -> bool:
    try:
        _, n, r, p, salt, digest = stored.split("$")
        expected = base64.b64decode(digest)
        actual = hashlib.scrypt(
            password.encode(), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p), dklen=len(expected)
        )
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(actual, expected)
