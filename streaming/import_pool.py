"""The recording studio's own worker: imports never run on the event loop's default
thread pool, which Whisper and every session's frame steps share.

An import decodes a whole recording and encodes its video (seconds of CPU for a
minute of WebM). `ImportPool` runs them on `workers` threads of their own, at the
lowest CPU priority (a live session's threads come first on a busy core), with at
most `waiting` more queued behind them; past that `ImportBusy` (the route answers
503 "busy, try again").

A place is taken when the upload starts, before a byte of it is stored, with
the bytes it declares (`Content-Length`); a body that comes in chunks, or runs
past what it declared, takes more as it arrives (`Place.grow`). The bytes all
places hold never pass `incoming_bytes`, so what the uploads store in
`.incoming` stays under that cap whatever the number of clients (30 slow
uploads of 30 MB once stored 900 MB at once: the pool was asked only when a
body was complete).

One address holds at most `per_client` places and `per_client_bytes` of the
bytes, the rest kept for other addresses (issue 57 row 14: 25 chunked uploads from one address, each sending a
byte every 8 s, held all 25 places, and a real upload from another address
got 503 for 105 s); past its share, that address's next upload is 503 and
the others still find room. The route also holds each upload to a minimum
rate (`streaming.web_routes.MIN_RECORD_RATE`), so a slow one lets go soon.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

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


class Place:
    """One upload's place in the pool: the bytes it may store, grown as a body comes in."""

    def __init__(self, pool: ImportPool, size: int, host: str | None = None):
        self.pool, self.bytes, self.host = pool, size, host
        self.released = False

    def grow(self, size: int) -> None:
        """Hold `size` bytes in all (more than now); `ImportBusy` when the pool's bytes would pass the cap."""
        if size > self.bytes:
            self.pool._take_bytes(size - self.bytes, self.host)
            self.bytes = size

    def release(self) -> None:
        if self.released:
            return
        self.pool._held -= 1
        self.pool._places[self.host] -= 1
        self.pool._bytes -= self.bytes
        self.pool._host_bytes[self.host] -= self.bytes
        self.bytes, self.released = 0, True


class ImportPool:
    def __init__(
        self,
        workers: int,
        waiting: int,
        incoming_bytes: int,
        per_client: int | None = None,
        per_client_bytes: int | None = None,
    ):
        if workers < 1 or waiting < 0 or incoming_bytes < 1:
            raise ValueError("an import pool needs at least one worker, a queue of zero or more and a byte cap")
        self.workers, self.waiting, self.incoming_bytes = workers, waiting, incoming_bytes
        self.per_client = per_client or workers + waiting  # places one address may hold
        self.per_client_bytes = per_client_bytes or incoming_bytes  # and bytes
        self._places: Counter[str | None] = Counter()
        self._host_bytes: Counter[str | None] = Counter()
        self._executor = ThreadPoolExecutor(workers, thread_name_prefix=THREAD_PREFIX, initializer=_lowest_priority)
        self._held = 0  # uploads being stored, and imports running or queued
        self._bytes = 0  # what their places may store

    @property
    def held(self) -> int:
        return self._held

    @property
    def held_bytes(self) -> int:
        return self._bytes

    def reserve(self, size: int, host: str | None = None) -> Place:
        """A place for an upload of `size` bytes (0: not declared) from address `host`, taken before any
        of it is stored; `ImportBusy` when no place, or not that many bytes, is left (in all, or of the
        address's share). Called on the event loop only, so the counts need no lock."""
        if self._held >= self.workers + self.waiting:
            raise ImportBusy(f"the studio is busy with {self._held} recordings; try again in a minute")
        if self._places[host] >= self.per_client:
            raise ImportBusy(
                f"this address is sending {self._places[host]} recordings, at most {self.per_client} "
                "at once; try again when one is done"
            )
        self._take_bytes(size, host)
        self._held += 1
        self._places[host] += 1
        return Place(self, size, host)

    def _take_bytes(self, size: int, host: str | None) -> None:
        if self._bytes + size > self.incoming_bytes:
            raise ImportBusy(
                f"the studio is storing {self._bytes / 2**20:.0f} MB of uploads, at most "
                f"{self.incoming_bytes / 2**20:.0f} MB at once; try again in a minute"
            )
        if self._host_bytes[host] + size > self.per_client_bytes:
            raise ImportBusy(
                f"this address's uploads hold {self._host_bytes[host] / 2**20:.0f} MB, at most "
                f"{self.per_client_bytes / 2**20:.0f} MB at once; try again when one is done"
            )
        self._bytes += size
        self._host_bytes[host] += size

    async def run(self, fn: Callable[..., T], *args) -> T:
        """`fn(*args)` on the pool's threads (the caller holds a `Place`)."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)
