"""The recording studio's own worker: imports never run on the event loop's default
thread pool, which Whisper and every session's frame steps share.

An import decodes a whole recording and encodes its video (seconds of CPU for a
minute of WebM). `ImportPool` runs them on `workers` threads of their own, at the
lowest CPU priority (a live session's threads come first on a busy core), with at
most `waiting` more queued behind them; past that `ImportBusy` (the route answers
503 "busy, try again").
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, TypeVar

T = TypeVar("T")
THREAD_PREFIX = "studio-import"
log = logging.getLogger("wearsim.server")


class ImportBusy(RuntimeError):
    """Every worker is busy and the queue is full."""


def _lowest_priority() -> None:
    """Run this worker thread at nice 19 (Linux: nice is per thread; elsewhere nothing changes)."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError) as exc:  # not Linux, or not allowed: the pool still bounds the work
        log.info("studio imports run at normal priority (%s)", exc)


class ImportPool:
    def __init__(self, workers: int, waiting: int):
        if workers < 1 or waiting < 0:
            raise ValueError("an import pool needs at least one worker and a queue of zero or more")
        self.workers, self.waiting = workers, waiting
        self._executor = ThreadPoolExecutor(workers, thread_name_prefix=THREAD_PREFIX, initializer=_lowest_priority)
        self._held = 0  # imports running or queued

    @property
    def held(self) -> int:
        return self._held

    def reserve(self) -> None:
        """Take a place (running or queued) before the upload is read; `ImportBusy` when none is left.
        Called on the event loop only, so the count needs no lock."""
        if self._held >= self.workers + self.waiting:
            raise ImportBusy(f"the studio is busy importing {self._held} recordings; try again in a minute")
        self._held += 1

    def release(self) -> None:
        self._held = max(0, self._held - 1)

    async def run(self, fn: Callable[..., T], *args) -> T:
        """`fn(*args)` on the pool's threads (the caller holds a place)."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)
