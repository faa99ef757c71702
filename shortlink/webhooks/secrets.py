"""Endpoint secrets and signatures.

A secret is never stored. The database keeps a random nonce per endpoint; the secret is
HMAC-SHA256(installation webhook key, nonce) in the Standard Webhooks form `whsec_<base64>`.
The webhook key is derived from the server's signing key (the key file and the database's
own secret, keyfile.signing_key), so neither a copy of the database nor the key file alone
can sign a delivery, and a rotation is a new nonce.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Iterable
from datetime import datetime

from standardwebhooks import Webhook

PREFIX = "whsec_"


def webhook_key(signing_key: bytes) -> bytes:
    """The key of every endpoint secret, apart from the other uses of the signing key."""
    return hmac.new(signing_key, b"shortlink webhook endpoint secrets", hashlib.sha256).digest()


def new_nonce() -> str:
    return secrets.token_hex(16)


def secret_of(key: bytes, nonce: str) -> str:
    return PREFIX + base64.b64encode(hmac.new(key, nonce.encode(), hashlib.sha256).digest()).decode()


def signature_header(endpoint_secrets: Iterable[str], message_id: str, moment: datetime, body: str) -> str:
    """`webhook-signature`: a `v1,<base64>` signature per secret, space-separated (during a
    rotation's overlap both the new and the old secret sign)."""
    return " ".join(Webhook(secret).sign(message_id, moment, body) for secret in endpoint_secrets)
