"""Opaque, unguessable public identifiers ("lnk_…", "key_…", "usr_…")."""

from __future__ import annotations

import secrets
import string

ALPHABET = string.ascii_letters + string.digits


def random_string(length: int, alphabet: str = ALPHABET) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


def new_id(kind: str) -> str:
    # 20 characters of 62 symbols: about 119 bits, never a row number.
    return f"{kind}_{random_string(20)}"
