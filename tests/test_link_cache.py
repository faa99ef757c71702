"""The visitor path's link cache: bounded, least recently used out first."""

from __future__ import annotations

import asyncio
import time

from redis.asyncio import Redis

from shortlink.links.platforms import Platform
from shortlink.visits.cache import LinkCache, VisitTarget
from shortlink.visits.invalidation import LinkChanges


def target(number: int) -> VisitTarget:
    return VisitTarget(
        link_id=number,
        public_id=f"lnk_{number}",
        account_id=1,
        code=f"c{number}",
        original_url="https://example.com/",
        platform=Platform.OTHER,
        ios_url=None,
        android_url=None,
        title=None,
        is_active=True,
        expires_at=None,
        password_hash=None,
    )


def test_a_miss_is_told_apart_from_a_code_known_not_to_exist():
    cache = LinkCache(max_entries=10)
    cache.put("gone", None)
    assert cache.get("gone") is None
    assert cache.get("never-seen") is ...


def test_hot_links_stay_while_a_catalogue_many_times_larger_streams_through():
    cache = LinkCache(max_entries=100)
    cache.put("hot", target(0))
    for number in range(1, 10_000):
        cache.put(f"c{number}", target(number))
        if number % 50 == 0:
            assert cache.get("hot") is not ...  # read often enough: never evicted
    assert len(cache) == 100
    assert cache.get("c1") is ...  # the cold ones left first, oldest first
    assert cache.get("c9999") is not ...


def test_discard_and_clear():
    cache = LinkCache(max_entries=10)
    cache.put("a", target(1))
    cache.put("b", target(2))
    cache.discard("a")
    assert cache.get("a") is ... and cache.get("b") is not ...
    cache.clear()
    assert len(cache) == 0


# Link changes shared through a real Redis, as between server processes.


async def wait_until(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "never happened"
        await asyncio.sleep(0.02)


async def test_a_change_published_by_one_process_is_forgotten_by_every_other(redis_server):
    caches = [LinkCache(max_entries=10) for _ in range(3)]
    processes = [LinkChanges(Redis.from_url(redis_server.url), cache) for cache in caches]
    for process in processes:
        await process.start()
        assert process.listening  # start-up waits for the subscription
    for cache in caches:
        cache.put("changed", target(1))
        cache.put("kept", target(2))
    processes[0].changed("changed")
    assert caches[0].get("changed") is ...  # at once where it changed
    await wait_until(lambda: all(cache.get("changed") is ... for cache in caches), timeout=1.0)
    assert all(cache.get("kept") is not ... for cache in caches)
    for process in processes:
        await process.stop()


async def test_a_lost_subscription_is_made_again_and_forgets_what_was_cached_meanwhile(redis_server):
    cache = LinkCache(max_entries=10)
    changes = LinkChanges(Redis.from_url(redis_server.url), cache)
    await changes.start()
    redis_server.stop()  # a Redis restart: changes published meanwhile are lost to us
    await wait_until(lambda: not changes.listening)
    cache.put("cached while deaf", target(1))
    redis_server.start()
    await wait_until(lambda: changes.listening)
    assert len(cache) == 0
    await changes.stop()
