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


def test_the_table_is_bounded_and_idle_keys_are_evicted():
    clock = Clock()
    limiter = TokenBucketLimiter(10, clock=clock, max_keys=100)
    for i in range(1000):
        limiter.take(i)
        clock.now += 0.001
    assert len(limiter) <= 100
    clock.now += 120  # everything refilled: idle
    limiter.evict_idle()
    assert len(limiter) == 0
