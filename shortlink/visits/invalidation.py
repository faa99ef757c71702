"""Link changes told to every process that shares a Redis, so each link cache forgets them.

A process that changes a link (create, update, delete, a fetched title) forgets its code
in its own cache at once and publishes the code on one channel; every process listens
on it and forgets the code too, within milliseconds. While the subscription is down, a
process cannot know what the others changed: each (re)subscription clears its whole
cache, and `listening` is false meanwhile so that the caller may fall back to clearing
on every outside commit.

A command that changes the database outside any server (the CLI) publishes EVERYTHING when
it moved what servers cache (`changes_told`): a subscribed server does not clear on the
database's change counter, so without it the change would wait for the next resubscription.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

from shortlink.sharedstate import CONNECT_TIMEOUT_SECONDS
from shortlink.storage import Connection
from shortlink.storage.accounts import data_version

if TYPE_CHECKING:
    from redis.asyncio import Redis

log = logging.getLogger("shortlink.invalidation")

CHANNEL = "shortlink:link-changed"
# Published instead of a short code: forget everything cached (never a code: codes are
# letters, digits, "-" and "_").
EVERYTHING = "*"
RETRY_SECONDS = 0.5
# How long start-up waits for the subscription, so that a process starts serving knowing
# every change; past it, the process serves anyway and keeps trying (not `listening`).
SUBSCRIBE_WAIT_SECONDS = 5.0


class Forgetting(Protocol):
    """What the changes are told to: the link cache, or every in-memory cache of the process."""

    def discard(self, key: str) -> None: ...

    def clear(self) -> None: ...


class LinkChanges:
    def __init__(self, client: Redis, cache: Forgetting):
        self.client, self.cache = client, cache
        self._listening = asyncio.Event()
        self._outgoing: asyncio.Queue[str] = asyncio.Queue()
        self._tasks: list[asyncio.Task] = []

    @property
    def listening(self) -> bool:
        """Subscribed: every change another process publishes from now on reaches this cache."""
        return self._listening.is_set()

    def changed(self, code: str) -> None:
        """This process changed the link with `code`: forget it here, and tell the others."""
        self.cache.discard(code)
        self._outgoing.put_nowait(code)

    async def start(self) -> None:
        self._tasks = [asyncio.create_task(self._listen()), asyncio.create_task(self._publish())]
        try:
            await asyncio.wait_for(self._listening.wait(), SUBSCRIBE_WAIT_SECONDS)
        except TimeoutError:
            log.warning("not subscribed to link changes yet; the cache is cleared on every outside commit meanwhile")

    async def stop(self) -> None:
        """Publish what is still waiting (briefly: Redis may be the thing that is down), then stop."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._outgoing.join(), RETRY_SECONDS * 4)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._listening.clear()

    async def _publish(self) -> None:
        while True:
            code = await self._outgoing.get()
            while True:
                try:
                    await self.client.publish(CHANNEL, code)
                    break
                except Exception as exc:  # kept and retried: the others must hear of every change
                    log.warning("could not publish a link change: %s; retrying", exc)
                    await asyncio.sleep(RETRY_SECONDS)
            self._outgoing.task_done()

    async def _listen(self) -> None:
        while True:
            try:
                async with self.client.pubsub() as subscription:
                    await subscription.subscribe(CHANNEL)
                    async for message in subscription.listen():
                        if message["type"] == "subscribe":
                            # Only from here on is every change heard; anything cached before may be stale.
                            self.cache.clear()
                            self._listening.set()
                        elif message["type"] == "message":
                            code = message["data"].decode()
                            if code == EVERYTHING:
                                self.cache.clear()
                            else:
                                self.cache.discard(code)
            except Exception as exc:  # Redis restarted or unreachable: subscribe again
                log.warning("link-change subscription lost: %s; subscribing again", exc)
            self._listening.clear()
            await asyncio.sleep(RETRY_SECONDS)


@contextlib.contextmanager
def changes_told(conn: Connection, redis_url: str) -> Iterator[None]:
    """Around changes made outside any server on `conn`: if they moved what servers cache
    (storage.accounts.data_version), tell every server sharing the Redis at `redis_url` to
    forget everything it cached. Redis down: its servers are not subscribed either, and clear
    on the counter instead."""
    before = data_version(conn)
    try:
        yield
    finally:
        if data_version(conn) != before:
            import redis

            try:
                with contextlib.closing(
                    redis.Redis.from_url(redis_url, socket_connect_timeout=CONNECT_TIMEOUT_SECONDS)
                ) as client:
                    client.publish(CHANNEL, EVERYTHING)
            except redis.RedisError as exc:
                log.warning("could not tell the servers through Redis of this change: %s", exc)
