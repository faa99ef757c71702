"""Token buckets: N tokens a period (a minute unless told) per key, refilling continuously.

Two limiters with one interface (`Limiter`): `TokenBucketLimiter` keeps the buckets in
this process's memory (one server process); `RedisLimiter` keeps them in Redis, exact
across every process that shares it. `take` is a coroutine on both so that callers need
not know which one they have; the in-memory one never suspends. `ActionLimit` puts two of
them in front of work a signed-in person starts from the dashboard.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import msgspec

from shortlink.client_address import client_bucket
from shortlink.errors import RateLimitedError, UnavailableError

if TYPE_CHECKING:
    from redis.asyncio import Redis

log = logging.getLogger("shortlink.ratelimit")


class Decision(msgspec.Struct, frozen=True):
    allowed: bool
    limit: int
    remaining: int
    reset_seconds: int  # until the bucket is full again
    retry_after: int  # until one token is available (0 when allowed)

    def headers(self) -> dict[str, str]:
        """X-RateLimit-* for a response to this key."""
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset_seconds),
        }


def decide(capacity: int, rate: float, tokens: float, allowed: bool) -> Decision:
    """The decision for a bucket left with `tokens` after a take (`allowed`) or a refusal."""
    return Decision(
        allowed=allowed,
        limit=capacity,
        remaining=int(tokens),
        reset_seconds=math.ceil((capacity - tokens) / rate),
        retry_after=0 if allowed else max(1, math.ceil((1 - tokens) / rate)),
    )


class Limiter(Protocol):
    capacity: int

    async def take(self, key: Hashable) -> Decision:
        """Take a token from the key's bucket, if there is one."""
        ...

    async def peek(self, key: Hashable) -> int:
        """The whole tokens left in the key's bucket, taking none."""
        ...


class TokenBucketLimiter:
    """One bucket per key, in a table of at most `max_keys` buckets.

    A bucket that has refilled completely says nothing a new one wouldn't, so it
    is idle and can go. Idle buckets are swept out at most once per refill period
    (a minute), during a `take`: the sweep visits every bucket, but a bucket not
    taken from since the previous sweep is full by the next one and leaves, so
    each take pays for at most two visits (O(1) amortised). The table therefore
    holds only keys seen within the last two minutes or so.

    A bucket is never dropped while it is refilling: that would hand a busy key a
    fresh bucket. When the table is full of refilling buckets, a key without one
    is refused until a sweep makes room; refusing fails safe for what is limited
    here (password guessing, API use), and the table stays bounded.
    """

    def __init__(
        self,
        per_minute: int,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = 100_000,
        period_seconds: float = 60.0,
    ):
        """`per_minute` tokens refill over `period_seconds` (so per hour with 3600)."""
        self.capacity = per_minute
        self.rate = per_minute / period_seconds
        self.refill_seconds = self.capacity / self.rate  # empty to full
        self.clock = clock
        self.max_keys = max_keys
        self._buckets: dict[Hashable, tuple[float, float]] = {}  # key -> (tokens, updated_at)
        self._next_sweep = clock() + self.refill_seconds

    def __len__(self) -> int:
        return len(self._buckets)

    def _tokens(self, key: Hashable, now_mono: float) -> float:
        tokens, updated = self._buckets.get(key, (self.capacity, now_mono))
        return min(self.capacity, tokens + (now_mono - updated) * self.rate)

    async def take(self, key: Hashable) -> Decision:
        now_mono = self.clock()
        if now_mono >= self._next_sweep:
            self._sweep(now_mono)
        if key not in self._buckets and len(self._buckets) >= self.max_keys:
            wait = max(1, math.ceil(self._next_sweep - now_mono))
            return Decision(allowed=False, limit=self.capacity, remaining=0, reset_seconds=wait, retry_after=wait)
        tokens = self._tokens(key, now_mono)
        allowed = tokens >= 1
        if allowed:
            tokens -= 1
        self._buckets[key] = (tokens, now_mono)
        return decide(self.capacity, self.rate, tokens, allowed)

    async def peek(self, key: Hashable) -> int:
        return int(self._tokens(key, self.clock()))

    def _sweep(self, now_mono: float) -> None:
        # Rebuilt rather than deleted from: a dict never gives back the room of deleted keys.
        self._buckets = {
            key: bucket
            for key, bucket in self._buckets.items()
            if bucket[0] + (now_mono - bucket[1]) * self.rate < self.capacity
        }
        self._next_sweep = now_mono + self.refill_seconds


# One atomic step per call, on Redis's own clock (the processes' clocks may differ):
# refill the bucket for the time since its last use, take `cost` (1, or 0 to peek) if
# there is a whole token, store it with an expiry at the moment it would be full again
# (a full bucket says nothing a missing one doesn't), and return (taken, tokens left).
TAKE_SCRIPT = """
local now = redis.call('TIME')
local t = tonumber(now[1]) + tonumber(now[2]) / 1000000
local capacity, rate, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local bucket = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(bucket[1]) or capacity
local at = tonumber(bucket[2]) or t
tokens = math.min(capacity, tokens + math.max(0, t - at) * rate)
if cost == 0 then
  return {0, tostring(tokens)}
end
local taken = 0
if tokens >= cost then
  tokens = tokens - cost
  taken = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(t))
redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - tokens) / rate * 1000) + 1)
return {taken, tostring(tokens)}
"""


class RedisLimiter:
    """The same buckets kept in Redis, shared by every process using it: one script run
    (EVALSHA) per take, so concurrent takes from any number of processes never both get
    the last token. Keys are stored as a hash keyed with the signing key (keyfile), never as
    given: a password-attempt key holds a visitor's IP address."""

    def __init__(self, client: Redis, name: str, per_minute: int, signing_key: bytes, period_seconds: float = 60.0):
        from redis.exceptions import RedisError  # only with a Redis: see sharedstate

        self._redis_errors = RedisError
        self.capacity = per_minute
        self.rate = per_minute / period_seconds
        self.name = name
        self.signing_key = signing_key
        self._script = client.register_script(TAKE_SCRIPT)

    def _redis_key(self, key: Hashable) -> str:
        digest = hashlib.blake2b(repr(key).encode(), key=self.signing_key, digest_size=16).hexdigest()
        return f"shortlink:bucket:{self.name}:{digest}"

    async def _run(self, key: Hashable, cost: int) -> tuple[bool, float]:
        try:
            taken, tokens = await self._script(keys=[self._redis_key(key)], args=[self.capacity, self.rate, cost])
        except self._redis_errors as exc:
            log.warning("rate limiter %s: Redis did not answer: %s", self.name, exc)
            raise UnavailableError("The rate limiter is unavailable; try again shortly") from None
        return bool(taken), float(tokens)

    async def take(self, key: Hashable) -> Decision:
        taken, tokens = await self._run(key, 1)
        return decide(self.capacity, self.rate, tokens, taken)

    async def peek(self, key: Hashable) -> int:
        return int((await self._run(key, 0))[1])


class ActionLimit:
    """Work a signed-in person starts from the dashboard (a webhook test event, an app-link
    check, an import, a domain's check): each start takes a token from the account's bucket and from the client
    network's (an IPv6 client is its /64), so that neither one account from many places nor
    many accounts from one place can start more than their share."""

    def __init__(self, what: str, per_account: Limiter, per_address: Limiter):
        """`what`: the work in the plural, as the refusal names it ("app checks")."""
        self.what, self.per_account, self.per_address = what, per_account, per_address

    async def take(self, account_id: int, address: str) -> None:
        """RATE_LIMITED, saying how long to wait, when either bucket is empty. An account over
        its limit takes nothing from its network's bucket (it cannot hold up its neighbours),
        and a network that is empty takes nothing from the account's."""
        network = client_bucket(address)
        if await self.per_address.peek(network) < 1:
            self._refuse(await self.per_address.take(network), "from one network")
        self._refuse(await self.per_account.take(account_id), "for one account")
        self._refuse(await self.per_address.take(network), "from one network")

    def _refuse(self, decision: Decision, whose: str) -> None:
        if not decision.allowed:
            raise RateLimitedError(
                f"Too many {self.what}: at most {decision.limit} a minute {whose}. "
                f"Please wait {decision.retry_after} s and try again.",
                retry_after=decision.retry_after,
            )


@dataclass(frozen=True)
class DashboardLimits:
    """The dashboard's actions that make work, each limited on its own."""

    webhook_tests: ActionLimit
    app_checks: ActionLimit
    imports: ActionLimit
    domain_checks: ActionLimit
