"""How long a request's body may take to arrive, for every route of ours that reads one (the studio's
`POST /v1/record`, `streaming.web_routes`; the labelling page's `POST /v1/annotate/label`,
`streaming.annotate_app`).

A request whose headers are in holds its place in the server's room
(`streaming.connection_room`) until it is answered, so a body trickled in
a byte at a time would hold it for good (issue 57 row 4: 530 label POSTs
sending one byte every 8 s kept the labelling page 503 for as long as they
kept sending). A `BodyDeadline` bounds the wait: the whole body within
`total_s`, at least `min_rate` bytes a second on average once `grace_s`
have passed, and (where set) no pause longer than `gap_s`; past any of
them `BodyTooSlow`, which the route answers with 408 and `connection: close`
(`TOO_SLOW_HEADERS`), so the place is free as soon as the answer is sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

from starlette.requests import Request

TOO_SLOW_HEADERS = {"connection": "close"}  # the 408's: the connection ends with it, its place given back


class BodyTooSlow(Exception):
    """The body did not arrive within its deadline or under its minimum rate; the message says the terms."""


@dataclass(frozen=True, kw_only=True)
class BodyDeadline:
    total_s: float
    min_rate: float  # bytes a second on average, once grace_s have passed
    grace_s: float
    gap_s: float | None = None  # the longest pause between pieces; None: only the total and the rate

    def terms(self) -> str:
        pause = f", with no pause over {self.gap_s:.0f} s" if self.gap_s is not None else ""
        return (
            f"the body must come within {self.total_s:.0f} s{pause} and at least "
            f"{self.min_rate / 1024:.0f} KB/s after the first {self.grace_s:.0f} s"
        )

    async def chunks(self, request: Request) -> AsyncIterator[bytes]:
        """The body's pieces as they arrive; `BodyTooSlow` as soon as it falls behind its terms."""
        body = request.stream().__aiter__()
        clock = asyncio.get_running_loop().time
        started = clock()
        size = 0
        while True:
            slow = started + max(self.grace_s, size / self.min_rate)  # when its average falls under the rate
            wait = min(started + self.total_s, slow) - clock()
            if self.gap_s is not None:
                wait = min(wait, self.gap_s)
            try:
                chunk = await asyncio.wait_for(body.__anext__(), max(wait, 0.0))
            except StopAsyncIteration:
                return
            except TimeoutError:
                raise BodyTooSlow(self.terms()) from None
            size += len(chunk)
            yield chunk
