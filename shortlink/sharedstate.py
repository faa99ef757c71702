"""The Redis that server processes share when there is more than one ([redis] url).

The Redis client is imported only when a URL is configured: one process on its own never
loads it (it weighs some megabytes of the server's memory).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from shortlink.config import ConfigError

if TYPE_CHECKING:
    from redis.asyncio import Redis

CONNECT_TIMEOUT_SECONDS = 2.0


def check_redis(url: str) -> None:
    """A wrong or unreachable URL stops start-up with one line naming the key."""
    import redis

    try:
        with contextlib.closing(redis.Redis.from_url(url, socket_connect_timeout=CONNECT_TIMEOUT_SECONDS)) as probe:
            probe.ping()
    except (redis.RedisError, ValueError) as exc:
        raise ConfigError(f"invalid configuration: [redis] url {url!r}: cannot reach Redis: {exc}") from None


def open_redis(url: str) -> Redis:
    """A client for `url`, once it has answered."""
    from redis.asyncio import Redis

    check_redis(url)
    return Redis.from_url(url, socket_connect_timeout=CONNECT_TIMEOUT_SECONDS, socket_keepalive=True)


# A day's visitor key stays in Redis this long past the day's end: a click stamped just
# before midnight may be enriched a little after it, by a process that has not needed
# that day's key yet.
DAY_KEY_GRACE_MS = 5 * 60 * 1000
DAY_MS = 86_400_000


class SharedDayKeys:
    """Each UTC day's visitor-hash key, the same for every process: the first process to
    need it offers its random key and every other process gets that one. Kept in Redis
    memory, never in the database file (whoever holds the file and a day's key can find
    a visitor's IPv4 address in 2^32 guesses), and expiring shortly after its day."""

    def __init__(self, client: Redis):
        self.client = client

    async def key(self, day: str, day_start_ms: int, offered: bytes) -> bytes:
        """The key of `day` (which starts at `day_start_ms`), `offered` if it is the first."""
        name = f"shortlink:visitor-key:{day}"
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.set(name, offered, nx=True, pxat=day_start_ms + DAY_MS + DAY_KEY_GRACE_MS)
            pipe.get(name)
            _, key = await pipe.execute()
        return offered if key is None else key  # None: a day long over (demo data), kept here only
