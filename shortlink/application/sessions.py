"""Dashboard sign-in and sessions for the web door: passwords, throttling, revocable sessions."""

from __future__ import annotations

import asyncio
import time

from shortlink.accounts import passwords, sessions
from shortlink.accounts.schema import SessionAccount
from shortlink.accounts.sessions import SignInFailed
from shortlink.client_address import client_bucket
from shortlink.errors import RateLimitedError
from shortlink.ratelimit import Limiter
from shortlink.storage import Database
from shortlink.storage import accounts as account_store
from shortlink.storage import sessions as store

# A session's "last seen" is written at most this often.
SEEN_RESOLUTION_MS = 60_000


def _now_ms() -> int:
    return int(time.time() * 1000)


class Sessions:
    def __init__(
        self,
        *,
        db: Database,
        per_account: Limiter,
        per_address: Limiter,
        signing_key: bytes,
        idle_seconds: int,
        max_seconds: int,
    ):
        """`signing_key`: signs CSRF tokens (keyfile)."""
        self.db, self.per_account, self.per_address = db, per_account, per_address
        self.signing_key = signing_key
        self.idle_ms, self.max_ms = idle_seconds * 1000, max_seconds * 1000
        self.max_seconds = max_seconds
        self._background: set[asyncio.Task] = set()

    async def sign_in(self, email: str, password: str, address: str, previous_token: str | None) -> str:
        """A new session's token for the right e-mail and password; SignInFailed (the same
        for both mistakes) or RATE_LIMITED otherwise. The session a browser had before is
        ended: every sign-in gets a new token."""
        await self._throttle(email, address)
        account = await self.db.read(account_store.account_by_email, email.strip())
        stored = None if account is None else account["password_hash"]
        if not await asyncio.to_thread(passwords.verify_password, password, stored):
            raise SignInFailed()
        assert account is not None and stored is not None
        # The session is made only if the password checked is still the account's: a
        # change that landed during the (slow) check must not leave this session alive.
        return await self._start(account["id"], previous_token, checked_hash=stored)

    async def sign_up(self, email: str, password: str, address: str) -> str:
        """A new account, signed in; a ValidationError naming the field otherwise."""
        await self._throttle(email, address)
        password_hash = await asyncio.to_thread(passwords.hash_password, password)
        account = await self.db.write(sessions.create_account_with_password, email, password_hash)
        return await self._start(account["id"], None)

    async def change_password(self, session: SessionAccount, current: str, new: str, address: str) -> str:
        """Every session of the account ends (sign out everywhere); this browser gets a new
        one. The current password is checked, and throttled, as at sign-in."""
        await self._throttle(session.email, address)
        account = await self.db.read(account_store.account_by_email, session.email)
        if account is None or not await asyncio.to_thread(passwords.verify_password, current, account["password_hash"]):
            raise SignInFailed()
        password_hash = await asyncio.to_thread(passwords.hash_password, new)
        await self.db.write(sessions.set_password, session.email, password_hash)
        return await self._start(session.account_id, None)

    async def sign_out(self, token: str) -> None:
        await self.db.write(store.delete_session, sessions.token_hash(token))

    def load(self, token: str | None) -> SessionAccount | None:
        """The live session of this cookie value: a point read, like an API key's."""
        if not token or len(token) > 100:
            return None
        row = self.db.read_now(store.session_by_token_hash, sessions.token_hash(token))
        now_ms = _now_ms()
        if row is None or sessions.is_expired(row, now_ms, self.idle_ms, self.max_ms):
            return None
        if now_ms - row["seen_ms"] >= SEEN_RESOLUTION_MS:
            self._in_background(self.db.write(store.touch_session, row["session_id"], now_ms))
        return SessionAccount(
            session_id=row["session_id"],
            token=token,
            account_id=row["account_id"],
            account_public_id=row["account_public_id"],
            email=row["email"],
            name=row["name"],
            subscription_active=bool(row["subscription_active"]),
            csrf=self.csrf(token),
        )

    def new_form_token(self) -> str:
        """A random value for the form cookie of a browser that has none yet."""
        return sessions.new_token()

    def csrf(self, bound_to: str) -> str:
        return sessions.csrf_token(self.signing_key, bound_to)

    def csrf_matches(self, bound_to: str, sent: str) -> bool:
        return sessions.csrf_matches(self.signing_key, bound_to, sent)

    async def _throttle(self, email: str, address: str) -> None:
        """Two buckets: the client address (an IPv6 client is its /64), and the account as
        tried from that address, so that someone guessing elsewhere cannot lock its owner out."""
        bucket = client_bucket(address)
        for limiter, key in ((self.per_address, bucket), (self.per_account, f"{email.strip().lower()} {bucket}")):
            decision = await limiter.take(key)
            if not decision.allowed:
                raise RateLimitedError(
                    f"Too many sign-in attempts. Please wait {decision.retry_after} s and try again.",
                    retry_after=decision.retry_after,
                )

    async def _start(self, account_id: int, previous_token: str | None, checked_hash: str | None = None) -> str:
        token = sessions.new_token()
        now_ms = _now_ms()
        await self.db.write(
            sessions.start_session,
            account_id,
            sessions.token_hash(token),
            None if previous_token is None else sessions.token_hash(previous_token),
            now_ms,
            now_ms - self.max_ms,
            now_ms - self.idle_ms,
            checked_hash,
        )
        return token

    def _in_background(self, work) -> None:
        task = asyncio.create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
