"""In-memory token buckets: N tokens a minute per key, refilling continuously."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable

import msgspec


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

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic, max_keys: int = 100_000):
        self.capacity = per_minute
        self.rate = per_minute / 60.0
        self.refill_seconds = self.capacity / self.rate  # empty to full
        self.clock = clock
        self.max_keys = max_keys
        self._buckets: dict[Hashable, tuple[float, float]] = {}  # key -> (tokens, updated_at)
        self._next_sweep = clock() + self.refill_seconds

    def __len__(self) -> int:
        return len(self._buckets)

    def _tokens(self, key: Hashable, now: float) -> float:
        tokens, updated = self._buckets.get(key, (self.capacity, now))
        return min(self.capacity, tokens + (now - updated) * self.rate)

    def take(self, key: Hashable) -> Decision:
        now = self.clock()
        if now >= self._next_sweep:
            self._sweep(now)
        if key not in self._buckets and len(self._buckets) >= self.max_keys:
            wait = max(1, math.ceil(self._next_sweep - now))
            return Decision(allowed=False, limit=self.capacity, remaining=0, reset_seconds=wait, retry_after=wait)
        tokens = self._tokens(key, now)
        allowed = tokens >= 1
        if allowed:
            tokens -= 1
        self._buckets[key] = (tokens, now)
        return Decision(
            allowed=allowed,
            limit=self.capacity,
            remaining=int(tokens),
            reset_seconds=math.ceil((self.capacity - tokens) / self.rate),
            retry_after=0 if allowed else max(1, math.ceil((1 - tokens) / self.rate)),
        )

    def peek(self, key: Hashable) -> int:
        return int(self._tokens(key, self.clock()))

    def _sweep(self, now: float) -> None:
        # Rebuilt rather than deleted from: a dict never gives back the room of deleted keys.
        self._buckets = {
            key: bucket
            for key, bucket in self._buckets.items()
            if bucket[0] + (now - bucket[1]) * self.rate < self.capacity
        }
        self._next_sweep = now + self.refill_seconds
