"""Retries with exponential backoff and jitter, honouring Retry-After.

Adapters raise `RetryableError` for 429, 5xx and timeouts; anything else is
final. `with_retries` gives up after `attempts` tries and re-raises the last
error, which the runner records against the cell.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


class RetryableError(RuntimeError):
    """A transient failure: rate limit, server error or timeout."""

    def __init__(self, message: str, retry_after: float | None = None, same_session: bool = False, usage=None):
        super().__init__(message)
        self.retry_after = retry_after
        self.same_session = same_session  # a live session that failed a reply but kept the conversation
        self.usage = usage  # what the failed reply was billed, where the API said (a `Usage`); None: not said


def backoff_delay(attempt: int, base: float = 1.0, cap: float = 30.0, retry_after: float | None = None) -> float:
    """Delay before retry number `attempt` (0-based): Retry-After when given, else full jitter."""
    if retry_after is not None:
        return min(max(retry_after, 0.0), cap)
    return random.uniform(0, min(cap, base * (2**attempt)))


async def with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    attempts: int = 5,
    base: float = 1.0,
    cap: float = 30.0,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> T:
    for attempt in range(attempts):
        try:
            return await call()
        except RetryableError as exc:
            if attempt == attempts - 1:
                raise
            await sleep(backoff_delay(attempt, base, cap, exc.retry_after))
    raise AssertionError("unreachable")


def retry_after_seconds(headers) -> float | None:
    """Seconds from a Retry-After header (seconds form), or None."""
    if headers is None:
        return None
    value = headers.get("retry-after") or headers.get("Retry-After")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
