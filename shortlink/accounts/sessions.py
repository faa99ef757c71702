"""Dashboard sessions: sign-in, session tokens, expiry, CSRF tokens (passwords: accounts.passwords).

A session token is 256 random bits given to the browser once, in its cookie; the
database keeps only its SHA-256 (a fast hash is enough for a random secret of that size).
A CSRF token is an HMAC of the session token (or, before sign-in, of the sign-in form's
own cookie) under the signing key (keyfile): a page of another site can read neither.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from shortlink.accounts import service as accounts
from shortlink.errors import ErrorCode, ShortlinkError, ValidationError
from shortlink.storage import Connection, Row, transaction
from shortlink.storage import accounts as account_store
from shortlink.storage import sessions as store


class SignInFailed(ShortlinkError):
    """The one answer for a wrong e-mail and a wrong password alike."""

    code: ErrorCode = "UNAUTHORIZED"
    status = 401

    def __init__(self) -> None:
        super().__init__("That e-mail address and password do not match an account.")


def new_token() -> str:
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def csrf_token(signing_key: bytes, bound_to: str) -> str:
    return hmac.new(signing_key, b"csrf\0" + bound_to.encode(), hashlib.sha256).hexdigest()


def csrf_matches(signing_key: bytes, bound_to: str, sent: str) -> bool:
    return bool(bound_to) and hmac.compare_digest(csrf_token(signing_key, bound_to).encode(), sent.encode())


def is_expired(row: Row, now_ms: int, idle_ms: int, max_ms: int) -> bool:
    return now_ms - row["created_ms"] > max_ms or now_ms - row["seen_ms"] > idle_ms


def set_password(conn: Connection, email: str, password_hash: str) -> Row:
    """Set the account's password (creating the account, Pro active, if new) and end
    every session it has: a changed password signs it out everywhere."""
    account = accounts.ensure_account(conn, email)
    with transaction(conn):
        store.set_password_hash(conn, account["id"], password_hash)
        store.delete_sessions_of(conn, account["id"])
    return account


def create_account_with_password(conn: Connection, email: str, password_hash: str) -> Row:
    """Self sign-up: a new account with this password."""
    email = accounts.normalise_email(email)
    with transaction(conn):
        if account_store.account_by_email(conn, email) is not None:
            raise ValidationError("email", "already has an account: sign in instead")
        account = accounts.ensure_account(conn, email)
        store.set_password_hash(conn, account["id"], password_hash)
    return account


def start_session(
    conn: Connection,
    account_id: int,
    new_hash: str,
    previous_hash: str | None,
    now_ms: int,
    created_before_ms: int,
    seen_before_ms: int,
    checked_hash: str | None = None,
) -> None:
    """A new session row; the browser's previous one (if any) and expired ones are deleted.
    With `checked_hash` (the password hash a sign-in verified), SignInFailed when the
    account's password is no longer that one: it changed while the password was checked."""
    with transaction(conn):
        if checked_hash is not None and not store.hold_password_hash(conn, account_id, checked_hash):
            raise SignInFailed()
        if previous_hash is not None:
            store.delete_session(conn, previous_hash)
        store.delete_sessions_before(conn, created_before_ms, seen_before_ms)
        store.insert_session(conn, new_hash, account_id, now_ms)
