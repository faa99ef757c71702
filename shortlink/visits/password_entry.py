"""Link passwords on the visitor path: the signed cookie, scoped to one link, that
remembers a correct entry, and the key that password attempts are counted under.

The cookie's signature covers the link, the expiry and the current password hash, so
changing or removing the password ends every remembered entry.
"""

from __future__ import annotations

import hashlib
import hmac
import time

from shortlink.client_address import client_bucket

REMEMBER_SECONDS = 12 * 3600
_MAX_EXPIRY_DIGITS = 12


def cookie_name(code: str) -> str:
    return "sl_pass_" + hashlib.sha256(code.encode()).hexdigest()[:16]


def _signature(signing_key: bytes, link_public_id: str, password_hash: str, expires: int) -> str:
    message = f"{link_public_id}|{password_hash}|{expires}".encode()
    return hmac.new(signing_key, message, hashlib.sha256).hexdigest()


def make_cookie_value(signing_key: bytes, link_public_id: str, password_hash: str, now_s: float | None = None) -> str:
    expires = int((now_s or time.time()) + REMEMBER_SECONDS)
    return f"{expires}.{_signature(signing_key, link_public_id, password_hash, expires)}"


def cookie_is_valid(
    signing_key: bytes, link_public_id: str, password_hash: str, value: str | None, now_s: float | None = None
) -> bool:
    if not value or "." not in value:
        return False
    expires_text, _, signature = value.partition(".")
    # ASCII digits, as many as a Unix time has: str.isdigit() also passes "²³", which
    # int() refuses, and int() refuses more than 4300 digits.
    if not (expires_text.isascii() and expires_text.isdigit() and len(expires_text) <= _MAX_EXPIRY_DIGITS):
        return False
    if int(expires_text) < (now_s or time.time()):
        return False
    expected = _signature(signing_key, link_public_id, password_hash, int(expires_text))
    return hmac.compare_digest(signature.encode(), expected.encode())


def attempt_key(ip: str, link_pk: int) -> tuple[str, int]:
    """The bucket of password attempts a visitor draws from: per link and visitor."""
    return client_bucket(ip), link_pk
