import asyncio

import pytest
from redis.asyncio import Redis

from shortlink.errors import UnavailableError
from shortlink.ratelimit import RedisLimiter, TokenBucketLimiter
from tests.support.helpers import wait_for_async


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


async def test_a_full_minute_of_tokens_then_refusal_with_retry_after():
    clock = Clock()
    limiter = TokenBucketLimiter(60, clock=clock)
    decisions = [await limiter.take("k") for _ in range(61)]
    assert all(d.allowed for d in decisions[:60])
    assert decisions[59].remaining == 0
    assert not decisions[60].allowed and decisions[60].retry_after == 1


async def test_tokens_refill_continuously():
    clock = Clock()
    limiter = TokenBucketLimiter(60, clock=clock)
    for _ in range(60):
        await limiter.take("k")
    clock.now += 2.0
    assert (await limiter.take("k")).allowed and (await limiter.take("k")).allowed
    assert not (await limiter.take("k")).allowed
    clock.now += 60
    assert await limiter.peek("k") == 60


async def test_keys_are_independent():
    limiter = TokenBucketLimiter(2, clock=Clock())
    await limiter.take("a")
    await limiter.take("a")
    assert not (await limiter.take("a")).allowed
    assert (await limiter.take("b")).allowed


async def test_idle_buckets_are_swept_once_a_refill_period_without_the_table_filling_up():
    clock = Clock()
    limiter = TokenBucketLimiter(60, clock=clock)  # a token a second, full in 60 s
    for key in range(1000):
        await limiter.take(key)
    clock.now += 59.0
    for _ in range(5):
        await limiter.take("late")  # no sweep is due yet
    assert len(limiter) == 1001
    clock.now += 1.0  # a refill period since the start
    await limiter.take("trigger")
    # The 1000 early buckets are full again and went; "late" is still refilling.
    assert len(limiter) == 2
    clock.now += 40.0  # "late" and "trigger" are full now,
    for _ in range(30):
        await limiter.take("other")
    assert len(limiter) == 3  # but the next sweep is 60 s after the last
    clock.now += 20.0
    await limiter.take("other")
    assert len(limiter) == 1  # only "other" is still refilling


async def test_a_full_table_of_busy_keys_refuses_new_keys_and_never_resets_a_busy_one():
    clock = Clock()
    limiter = TokenBucketLimiter(2, clock=clock, max_keys=3)  # a token every 30 s
    for key in ("a", "a", "b", "c"):
        await limiter.take(key)
    assert not (await limiter.take("a")).allowed  # "a" is throttled
    clock.now += 1.0
    newcomer = await limiter.take("d")  # no room, and nobody is idle
    assert not newcomer.allowed and newcomer.remaining == 0
    assert newcomer.retry_after == 59  # until the next sweep
    assert len(limiter) == 3
    assert not (await limiter.take("a")).allowed  # still throttled: not forgotten for "d"
    for _ in range(100):  # a flood of new keys changes nothing
        await limiter.take(object())
    assert len(limiter) == 3 and not (await limiter.take("a")).allowed
    clock.now += 59.0  # all full again: the sweep makes room
    assert (await limiter.take("d")).allowed
    assert len(limiter) == 1


async def test_the_table_never_outgrows_max_keys():
    clock = Clock()
    limiter = TokenBucketLimiter(10, clock=clock, max_keys=100)
    admitted = 0
    for key in range(10_000):
        admitted += (await limiter.take(key)).allowed
        clock.now += 0.05  # 500 s in all: several sweeps
        assert len(limiter) <= 100
    # A bucket of 10 a minute refills in 60 s: each sweep frees the room of the idle keys.
    assert admitted > 500


# The same buckets in a real Redis, shared by separate clients as by separate processes.


def redis_limiter(url: str, per_minute: int, name: str = "test") -> RedisLimiter:
    return RedisLimiter(Redis.from_url(url), name, per_minute, b"signing key")


async def test_redis_buckets_give_a_full_minute_then_refuse_with_retry_after(redis_server):
    limiter = redis_limiter(redis_server.url, 60)
    decisions = [await limiter.take("k") for _ in range(61)]
    assert all(d.allowed for d in decisions[:60]) and decisions[0].remaining == 59
    assert decisions[59].remaining == 0
    assert not decisions[60].allowed and decisions[60].retry_after == 1
    assert decisions[60].reset_seconds == 60
    assert await limiter.peek("k") == 0
    assert (await limiter.take("other")).allowed  # keys are independent
    assert await redis_limiter(redis_server.url, 60, name="elsewhere").peek("k") == 60  # so are limiters


async def test_redis_buckets_refill_continuously_and_expire_when_full(redis_server):
    limiter = redis_limiter(redis_server.url, 60)  # a token a second
    while (await limiter.take("k")).allowed:
        pass
    client = Redis.from_url(redis_server.url)
    [bucket] = await client.keys("shortlink:bucket:test:*")
    assert b"k" not in bucket.split(b":")[-1]  # stored under a keyed hash, never as given
    assert 55_000 < await client.pttl(bucket) <= 60_000  # gone once it would be full again
    # A token a second comes back long before the bucket would be full and expire.
    await wait_for_async(lambda: limiter.peek("k"), 5, "a token to come back")
    assert (await limiter.take("k")).allowed


async def test_concurrent_takes_from_many_clients_never_share_a_token(redis_server):
    limiters = [redis_limiter(redis_server.url, 60) for _ in range(4)]
    decisions = await asyncio.gather(*(limiters[n % 4].take("shared") for n in range(200)))
    # 60 tokens, plus at most what refilled (one a second) while the 200 takes ran.
    assert 60 <= sum(d.allowed for d in decisions) <= 61


async def test_an_unreachable_redis_is_a_503_not_a_500(redis_server):
    limiter = redis_limiter(redis_server.url, 60)
    redis_server.stop()
    with pytest.raises(UnavailableError) as raised:
        await limiter.take("k")
    assert raised.value.status == 503 and raised.value.headers == {"Retry-After": "1"}
