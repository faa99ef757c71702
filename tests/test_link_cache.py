"""The visitor path's link cache: bounded, least recently used out first."""

from __future__ import annotations

from shortlink.links.platforms import Platform
from shortlink.visits.cache import LinkCache, VisitTarget


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
