"""Deferred deep links without fingerprinting: a signed token carries the link from the visit
to the app's first launch, and is redeemed once.

Issued on the visitor path without a database write: `TOKEN = payload.mac`, the payload the
link's public id, the issue time and a nonce, the MAC an HMAC-SHA256 of it under the server's signing
key. Android carries it through the Play Store's install referrer (`&referrer=` on our store
URL, built by visits.appurls; the app reads it with the Install Referrer API); on iOS the
visitor copies it from the page (nothing on iOS carries data through the App Store without a
fingerprint). Redeeming records a
hash of the token, so the deep path is answered once. No IP address, device or user agent is
stored or compared.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from shortlink.errors import NotFoundError

TOKEN_DAYS = 7  # the Play Store passes the referrer on the first start after install
_MAC_BYTES = 12


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(signing_key: bytes, payload: str) -> str:
    return _b64(hmac.new(signing_key, b"deferred:" + payload.encode(), hashlib.sha256).digest()[:_MAC_BYTES])


def issue(signing_key: bytes, link_public_id: str, now_s: float) -> str:
    # A nonce per visit: two visitors of one link in one second get tokens of their own.
    payload = _b64(f"{link_public_id}.{int(now_s)}.{secrets.token_hex(4)}".encode())
    return f"{payload}.{_mac(signing_key, payload)}"


def verify(signing_key: bytes, token: str, now_s: float) -> str:
    """The link public id a token names; NotFoundError when it is forged, malformed or old."""
    payload, _, mac = token.partition(".")
    if (
        not payload
        or len(token) > 200
        or not token.isascii()
        or not hmac.compare_digest(mac, _mac(signing_key, payload))
    ):
        raise NotFoundError("unknown deferred link token")
    try:
        link_public_id, issued, _nonce = _unb64(payload).decode("utf-8", "replace").split(".")
    except ValueError:  # a payload the MAC matched always splits; this is belt and braces
        raise NotFoundError("unknown deferred link token") from None
    if not issued.isdigit() or now_s - int(issued) > TOKEN_DAYS * 86400:
        raise NotFoundError("this deferred link token has expired")
    return link_public_id


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
