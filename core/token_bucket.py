"""The one token bucket: a rate on average, with bursts up to a cap.

`rate` units a second refill the bucket continuously up to `burst`; it
starts full. Two ways to take from it:

- `take(n)` waits (with `sleep`) until the bucket holds `n`, or is full when
  `n` is more than it can hold, then takes `n`: a request larger than the
  bucket leaves it in debt. Waiters are served first come, first served.
  It returns the seconds waited. Client-side limits pace themselves with it.
- `try_take(n, now)` never waits: it takes `n` if the bucket holds that
  much at `now` and says so, else takes nothing. A server measures arrivals
  with it.

`clock` and `sleep` are given so tests can run on a fake clock.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


class TokenBucket:
    def __init__(
        self,
        rate: float,
        burst: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ):
        if rate <= 0:
            raise ValueError(f"a token bucket's rate must be above 0, got {rate}")
        self.rate, self.burst = float(rate), float(burst)
        self.clock, self.sleep = clock, sleep
        self.level = self.burst
        self.at = clock()
        self._lock = asyncio.Lock()

    @classmethod
    def per_minute(
        cls,
        rate_per_minute: float,
        capacity: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> TokenBucket:
        """`rate_per_minute` units a minute, holding `capacity` (default: one minute's worth)."""
        if rate_per_minute <= 0:
            raise ValueError("a rate limit must be above 0 per minute")
        return cls(
            rate_per_minute / 60.0, capacity if capacity is not None else rate_per_minute, clock=clock, sleep=sleep
        )

    def _refill(self, now: float) -> None:
        self.level = min(self.burst, self.level + (now - self.at) * self.rate)
        self.at = now

    async def take(self, amount: float = 1.0) -> float:
        """Wait until `amount` units are there (a full bucket, for more than it holds) and take
        them; return the seconds waited."""
        waited = 0.0
        async with self._lock:
            need = min(amount, self.burst)
            while True:
                self._refill(self.clock())
                if self.level >= need:
                    self.level -= amount
                    return waited
                delay = (need - self.level) / self.rate
                waited += delay
                await self.sleep(delay)

    def try_take(self, amount: float, now: float | None = None) -> bool:
        """Take `amount` units if the bucket holds them at `now` (default: the clock's time)."""
        self._refill(self.clock() if now is None else now)
        if amount > self.level:
            return False
        self.level -= amount
        return True

    def adjust(self, delta: float) -> None:
        """Give back (`delta` > 0) or take (< 0) units after the fact."""
        self._refill(self.clock())
        self.level = min(self.burst, self.level + delta)
