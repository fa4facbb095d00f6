"""Real-time pacing from a monotonic deadline.

Each send is due at `start + t_ms / speed`; the pacer sleeps until then, so
lateness of one send never shifts the schedule of the next (no drift).
`speed=None` is `--fast`: no sleeping. A new pacer per turn (with
`origin_ms` at the turn's first item) lets a turn start when the user speaks
again, after the reply, without counting that wait as lateness. Optional jitter delays a send by a
random amount without moving the schedule.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable


class Pacer:
    def __init__(
        self,
        speed: float | None = 1.0,
        *,
        origin_ms: float = 0.0,
        jitter_ms: float = 0.0,
        seed: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ):
        if speed is not None and speed <= 0:
            raise ValueError("speed must be positive")
        self.speed = speed
        self.origin_ms = origin_ms  # timeline time of the first send
        self.jitter_ms = jitter_ms
        self.random = random.Random(seed)
        self.clock = clock
        self.sleep = sleep
        self.start: float | None = None
        self.lateness: list[float] = []  # seconds each send went out after its deadline

    def due(self, t_ms: float) -> float:
        if self.start is None:
            self.start = self.clock()
        return self.start + ((t_ms - self.origin_ms) / 1000.0) / self.speed if self.speed else self.start

    async def wait(self, t_ms: float) -> None:
        deadline = self.due(t_ms)
        if self.speed is None:
            await self.sleep(0)
            return
        if self.jitter_ms:
            deadline += self.random.uniform(0, self.jitter_ms) / 1000.0
        delay = deadline - self.clock()
        if delay > 0:
            await self.sleep(delay)
        self.lateness.append(max(0.0, self.clock() - deadline))
