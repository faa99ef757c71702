"""The Redis that server processes share when there is more than one ([redis] url)."""

from __future__ import annotations

import contextlib

import redis
from redis.asyncio import Redis

from shortlink.config import ConfigError

CONNECT_TIMEOUT_SECONDS = 2.0


def check_redis(url: str) -> None:
    """A wrong or unreachable URL stops start-up with one line naming the key."""
    try:
        with contextlib.closing(redis.Redis.from_url(url, socket_connect_timeout=CONNECT_TIMEOUT_SECONDS)) as probe:
            probe.ping()
    except (redis.RedisError, ValueError) as exc:
        raise ConfigError(f"invalid configuration: [redis] url {url!r}: cannot reach Redis: {exc}") from None


def open_redis(url: str) -> Redis:
    """A client for `url`, once it has answered."""
    check_redis(url)
    return Redis.from_url(url, socket_connect_timeout=CONNECT_TIMEOUT_SECONDS, socket_keepalive=True)
