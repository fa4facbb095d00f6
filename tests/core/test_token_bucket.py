"""The one token bucket (`core.token_bucket`) on a fake clock: the server's
arrival check never waits and takes nothing it refuses; the client-side
limits wait for it, first come first served, and a request larger than
the bucket waits for a full one and leaves it in debt."""

import asyncio

import pytest

from core.token_bucket import TokenBucket
from tests.fake_clock import FakeClock


def test_try_take_starts_full_refuses_without_taking_and_refills_up_to_the_burst():
    clock = FakeClock(50.0)
    bucket = TokenBucket(10, 20, clock=clock)
    assert bucket.try_take(15, clock.now) and bucket.level == pytest.approx(5)
    assert not bucket.try_take(6, clock.now) and bucket.level == pytest.approx(5)  # refused: nothing taken
    assert bucket.try_take(5, clock.now + 0.05) is True  # 0.05 s refilled 0.5: 5.5 held
    assert not bucket.try_take(1, clock.now + 0.05)
    assert bucket.try_take(20, clock.now + 60)  # a minute idle refills to the burst, no further
    assert not bucket.try_take(0.1, clock.now + 60)
    assert not TokenBucket(10, 20, clock=clock).try_take(21, clock.now)  # more than it holds: never
    clock.now += 100
    assert bucket.try_take(10)  # without `now`: the clock's time


async def test_take_waits_for_what_is_missing_and_returns_the_seconds_waited():
    clock = FakeClock(50.0)
    bucket = TokenBucket(4, 8, clock=clock, sleep=clock.sleep)
    assert await bucket.take(8) == 0.0 and clock.sleeps == []
    assert await bucket.take(2) == pytest.approx(0.5) and clock.now == pytest.approx(50.5)
    assert await bucket.take(20) == pytest.approx(2.0)  # waits for a full bucket, then owes the rest
    assert bucket.level == pytest.approx(-12)
    assert await bucket.take(1) == pytest.approx(13 / 4)


async def test_waiters_are_served_in_arrival_order_and_adjust_gives_back_up_to_the_burst():
    clock = FakeClock(50.0)
    bucket = TokenBucket(1, 2, clock=clock, sleep=clock.sleep)
    served: list[str] = []

    async def ask(name: str, amount: float) -> None:
        await bucket.take(amount)
        served.append(name)

    await bucket.take(2)
    await asyncio.gather(ask("first", 2), ask("second", 1), ask("third", 1))
    assert served == ["first", "second", "third"]
    bucket.adjust(100)
    assert bucket.level == pytest.approx(2)


def test_per_minute_is_a_minute_s_worth_and_a_rate_must_be_above_zero():
    bucket = TokenBucket.per_minute(120)
    assert (bucket.rate, bucket.burst, bucket.level) == (2.0, 120.0, 120.0)
    assert TokenBucket.per_minute(120, 10).burst == 10.0
    for bad in (0, -1):
        with pytest.raises(ValueError):
            TokenBucket(bad, 1)
        with pytest.raises(ValueError, match="above 0 per minute"):
            TokenBucket.per_minute(bad)
