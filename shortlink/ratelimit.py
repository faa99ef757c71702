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
    reset_seconds: int       # until the bucket is full again
    retry_after: int         # until one token is available (0 when allowed)


class TokenBucketLimiter:
    """One bucket per key; a bucket that has refilled completely is forgotten, so
    the table holds only keys seen within the last minute or so."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic,
                 max_keys: int = 100_000):
        self.capacity = per_minute
        self.rate = per_minute / 60.0
        self.clock = clock
        self.max_keys = max_keys
        self._buckets: dict[Hashable, tuple[float, float]] = {}  # key -> (tokens, updated_at)

    def __len__(self) -> int:
        return len(self._buckets)

    def _tokens(self, key: Hashable, now: float) -> float:
        tokens, updated = self._buckets.get(key, (self.capacity, now))
        return min(self.capacity, tokens + (now - updated) * self.rate)

    def take(self, key: Hashable) -> Decision:
        now = self.clock()
        tokens = self._tokens(key, now)
        allowed = tokens >= 1
        if allowed:
            tokens -= 1
        if len(self._buckets) >= self.max_keys and key not in self._buckets:
            self.evict_idle()
            if len(self._buckets) >= self.max_keys:  # all busy: forget the oldest entry
                del self._buckets[next(iter(self._buckets))]
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

    def evict_idle(self) -> None:
        now = self.clock()
        for key in [k for k in self._buckets if self._tokens(k, now) >= self.capacity]:
            del self._buckets[key]
