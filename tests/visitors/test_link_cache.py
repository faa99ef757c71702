"""The visitor path's link cache: bounded in bytes, least recently used out first."""

from __future__ import annotations

import secrets
import tracemalloc

from redis.asyncio import Redis

from shortlink.links.platforms import Platform
from shortlink.visits.cache import LinkCache, VisitTarget, entry_size
from shortlink.visits.invalidation import LinkChanges
from tests.support.helpers import wait_for_async


def target(number: int, url: str = "https://example.com/") -> VisitTarget:
    return VisitTarget(
        link_pk=number,
        public_id=f"lnk_{number}",
        account_id=1,
        code=f"c{number}",
        original_url=url,
        platform=Platform.OTHER,
        ios_url=None,
        android_url=None,
        title=None,
        is_active=True,
        expires_at=None,
        password_hash=None,
    )


def room_for(entries: int) -> int:
    """Bytes for that many entries like target(10000)."""
    return entries * entry_size("c10000", target(10_000))


def test_a_miss_is_told_apart_from_a_code_known_not_to_exist():
    cache = LinkCache(max_bytes=room_for(10))
    cache.put("gone", None)
    assert cache.get("gone") is None
    assert cache.get("never-seen") is ...


def test_hot_links_stay_while_a_catalogue_many_times_larger_streams_through():
    cache = LinkCache(max_bytes=room_for(100))
    cache.put("hot", target(0))
    for number in range(10_000, 20_000):
        cache.put(f"c{number}", target(number))
        if number % 50 == 0:
            assert cache.get("hot") is not ...  # read often enough: never evicted
    assert len(cache) == 100
    assert cache.size <= cache.max_bytes
    assert cache.get("c10000") is ...  # the cold ones left first, oldest first
    assert cache.get("c19999") is not ...


def test_links_with_long_urls_take_more_of_the_room():
    cache = LinkCache(max_bytes=room_for(100))
    for number in range(10_000, 10_100):
        cache.put(f"c{number}", target(number, "https://example.com/" + "x" * 2000))
    assert 5 < len(cache) < 40
    assert cache.size <= cache.max_bytes
    cache.put("c10099", target(10_099))  # replacing an entry counts only the new one
    assert cache.size == entry_size("c10099", target(10_099)) + sum(
        entry_size(f"c{number}", target(number, "https://example.com/" + "x" * 2000))
        for number in range(10_000, 10_099)
        if cache.get(f"c{number}") is not ...
    )
    cache.clear()
    assert cache.size == 0


def test_the_size_estimate_matches_the_memory_entries_really_take():
    entries = 20_000
    tracemalloc.start()
    try:
        cache = LinkCache(max_bytes=10**12)
        before = tracemalloc.get_traced_memory()[0]
        for number in range(entries):
            code = f"c{number:07d}"
            cache.put(
                code,
                VisitTarget(
                    link_pk=10**6 + number,
                    public_id="lnk_" + secrets.token_hex(6),
                    account_id=1,
                    code=f"c{number:07d}",
                    original_url=f"https://example.com/catalogue/{number}?ref=bench",
                    platform=Platform.OTHER,
                    ios_url=None,
                    android_url=None,
                    title=f"Catalogue item {number}",
                    is_active=True,
                    expires_at=None,
                    password_hash=None,
                ),
            )
        taken = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert 0.85 < cache.size / taken < 1.15


def test_discard_and_clear():
    cache = LinkCache(max_bytes=room_for(10))
    cache.put("a", target(1))
    cache.put("b", target(2))
    cache.discard("a")
    assert cache.get("a") is ... and cache.get("b") is not ...
    cache.clear()
    assert len(cache) == 0


# Link changes shared through a real Redis, as between server processes.


async def wait_until(condition, timeout: float = 10.0) -> None:
    await wait_for_async(condition, timeout, "the change to reach every process")


async def test_a_change_published_by_one_process_is_forgotten_by_every_other(redis_server):
    caches = [LinkCache(max_bytes=room_for(10)) for _ in range(3)]
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
    cache = LinkCache(max_bytes=room_for(10))
    changes = LinkChanges(Redis.from_url(redis_server.url), cache)
    await changes.start()
    redis_server.stop()  # a Redis restart: changes published meanwhile are lost to us
    await wait_until(lambda: not changes.listening)
    cache.put("cached while deaf", target(1))
    redis_server.start()
    await wait_until(lambda: changes.listening)
    assert len(cache) == 0
    await changes.stop()
