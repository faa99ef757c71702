from shortlink.ratelimit import TokenBucketLimiter


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_a_full_minute_of_tokens_then_refusal_with_retry_after():
    clock = Clock()
    limiter = TokenBucketLimiter(60, clock=clock)
    decisions = [limiter.take("k") for _ in range(61)]
    assert all(d.allowed for d in decisions[:60])
    assert decisions[59].remaining == 0
    assert not decisions[60].allowed and decisions[60].retry_after == 1


def test_tokens_refill_continuously():
    clock = Clock()
    limiter = TokenBucketLimiter(60, clock=clock)
    for _ in range(60):
        limiter.take("k")
    clock.now += 2.0
    assert limiter.take("k").allowed and limiter.take("k").allowed
    assert not limiter.take("k").allowed
    clock.now += 60
    assert limiter.peek("k") == 60


def test_keys_are_independent():
    limiter = TokenBucketLimiter(2, clock=Clock())
    limiter.take("a"), limiter.take("a")
    assert not limiter.take("a").allowed
    assert limiter.take("b").allowed


def test_idle_buckets_are_swept_once_a_refill_period_without_the_table_filling_up():
    clock = Clock()
    limiter = TokenBucketLimiter(60, clock=clock)  # a token a second, full in 60 s
    for key in range(1000):
        limiter.take(key)
    clock.now += 59.0
    for _ in range(5):
        limiter.take("late")  # no sweep is due yet
    assert len(limiter) == 1001
    clock.now += 1.0  # a refill period since the start
    limiter.take("trigger")
    # The 1000 early buckets are full again and went; "late" is still refilling.
    assert len(limiter) == 2
    clock.now += 40.0  # "late" and "trigger" are full now,
    for _ in range(30):
        limiter.take("other")
    assert len(limiter) == 3  # but the next sweep is 60 s after the last
    clock.now += 20.0
    limiter.take("other")
    assert len(limiter) == 1  # only "other" is still refilling


def test_a_full_table_of_busy_keys_refuses_new_keys_and_never_resets_a_busy_one():
    clock = Clock()
    limiter = TokenBucketLimiter(2, clock=clock, max_keys=3)  # a token every 30 s
    for key in ("a", "a", "b", "c"):
        limiter.take(key)
    assert not limiter.take("a").allowed  # "a" is throttled
    clock.now += 1.0
    newcomer = limiter.take("d")  # no room, and nobody is idle
    assert not newcomer.allowed and newcomer.remaining == 0
    assert newcomer.retry_after == 59  # until the next sweep
    assert len(limiter) == 3
    assert not limiter.take("a").allowed  # still throttled: not forgotten for "d"
    for _ in range(100):  # a flood of new keys changes nothing
        limiter.take(object())
    assert len(limiter) == 3 and not limiter.take("a").allowed
    clock.now += 59.0  # all full again: the sweep makes room
    assert limiter.take("d").allowed
    assert len(limiter) == 1


def test_the_table_never_outgrows_max_keys():
    clock = Clock()
    limiter = TokenBucketLimiter(10, clock=clock, max_keys=100)
    admitted = 0
    for key in range(10_000):
        admitted += limiter.take(key).allowed
        clock.now += 0.05  # 500 s in all: several sweeps
        assert len(limiter) <= 100
    # A bucket of 10 a minute refills in 60 s: each sweep frees the room of the idle keys.
    assert admitted > 500
