"""A reply's pieces on their way to the client while the reply is still coming.

A backend hands text and audio pieces to callbacks that must not wait
(`Relay.put`); a task of the relay's own sends them, in order. Leaving the
`async with` sends what is still queued and waits for it, so a turn's or a
probe's closing event always comes after its pieces; a failed send is
raised there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any


class Relay:
    def __init__(self, send: Callable[[Any], Awaitable[None]]):  # takes what `put` is given
        self.send = send
        self._queue: asyncio.Queue = asyncio.Queue()
        self._task: asyncio.Task | None = None

    def put(self, event) -> None:
        self._queue.put_nowait(event)

    async def __aenter__(self) -> Relay:
        self._task = asyncio.create_task(self._forward())
        return self

    async def __aexit__(self, *exc) -> None:
        self._queue.put_nowait(None)
        if self._task is not None:  # (set on entering)
            await self._task

    async def _forward(self) -> None:
        while (event := await self._queue.get()) is not None:
            await self.send(event)
