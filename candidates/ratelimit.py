"""Client-side rate limits: token buckets (`core.token_bucket`) per endpoint.

`--max-requests-per-minute` and `--max-tokens-per-minute` give each endpoint
(provider and base URL) two buckets, shared by every call made to it in this
process: the candidate, the judge and the ranking judge alike. A request
waits until both buckets hold enough: one request, and its token estimate
(prompt characters / 4 plus the reply cap). When the reply says how many
tokens it used, the difference to the estimate is given back or taken. This
sits under the 429 backoff of `retry.py`: each attempt, retries included,
passes the buckets.

`REQUESTS` counts requests in flight and waiting on a bucket, for the
progress line. Buckets take a clock and a sleep function, so tests run on a
fake clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from candidates.retry import with_retries
from core.token_bucket import TokenBucket


class RequestGauge:
    """Requests in flight (sent, no reply yet) and waiting on a rate limit."""

    def __init__(self):
        self.in_flight = 0
        self.waiting = 0


REQUESTS = RequestGauge()


@dataclass(frozen=True, kw_only=True)
class Limits:
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None

    def __bool__(self) -> bool:
        return bool(self.requests_per_minute or self.tokens_per_minute)


class EndpointLimiter:
    """The two buckets of one endpoint."""

    def __init__(self, limits: Limits, *, clock=time.monotonic, sleep=asyncio.sleep):
        self.limits = limits
        self.requests = (
            TokenBucket.per_minute(limits.requests_per_minute, clock=clock, sleep=sleep)
            if limits.requests_per_minute
            else None
        )
        self.tokens = (
            TokenBucket.per_minute(limits.tokens_per_minute, clock=clock, sleep=sleep)
            if limits.tokens_per_minute
            else None
        )

    @contextlib.asynccontextmanager
    async def slot(self, estimated_tokens: int):
        """Wait for the buckets, count the request in flight; `used(n)` corrects the token estimate."""
        REQUESTS.waiting += 1
        try:
            if self.requests is not None:
                await self.requests.take(1)
            if self.tokens is not None:
                await self.tokens.take(estimated_tokens)
        finally:
            REQUESTS.waiting -= 1
        correction = _Correction(self.tokens, estimated_tokens)
        REQUESTS.in_flight += 1
        try:
            yield correction
        finally:
            REQUESTS.in_flight -= 1


class _Correction:
    def __init__(self, bucket: TokenBucket | None, estimate: int):
        self.bucket, self.estimate = bucket, estimate

    def used(self, tokens: int) -> None:
        if self.bucket is not None and tokens > 0:
            self.bucket.adjust(self.estimate - tokens)


class _Unlimited:
    @contextlib.asynccontextmanager
    async def slot(self, estimated_tokens: int):
        REQUESTS.in_flight += 1
        try:
            yield _Correction(None, estimated_tokens)
        finally:
            REQUESTS.in_flight -= 1


UNLIMITED = _Unlimited()


class RateLimits:
    """Limits per provider and the shared limiter of each endpoint."""

    def __init__(
        self,
        default: Limits = Limits(),
        per_provider: dict[str, Limits] | None = None,
        *,
        clock=time.monotonic,
        sleep=asyncio.sleep,
    ):
        self.default = default
        self.per_provider = dict(per_provider or {})
        self.clock, self.sleep = clock, sleep
        self._limiters: dict[str, EndpointLimiter] = {}

    def limits_for(self, provider: str) -> Limits:
        return self.per_provider.get(provider, self.default)

    def limiter(self, provider: str, endpoint: str | None):
        """The one limiter of (provider, endpoint), or `UNLIMITED`."""
        limits = self.limits_for(provider)
        if not limits:
            return UNLIMITED
        key = f"{provider}|{endpoint or 'default'}"
        if key not in self._limiters:
            self._limiters[key] = EndpointLimiter(limits, clock=self.clock, sleep=self.sleep)
        return self._limiters[key]

    def describe(self) -> dict | None:
        """For the manifest: the limits set, or None."""
        if not self.default and not self.per_provider:
            return None
        out = {}
        if self.default:
            out["default"] = {
                "requests_per_minute": self.default.requests_per_minute,
                "tokens_per_minute": self.default.tokens_per_minute,
            }
        for provider, limits in sorted(self.per_provider.items()):
            out[provider] = {
                "requests_per_minute": limits.requests_per_minute,
                "tokens_per_minute": limits.tokens_per_minute,
            }
        return out


_CONFIGURED = RateLimits()


def configure(limits: RateLimits | None) -> None:
    """Set the process's rate limits (`wearsim bench` does, from its flags)."""
    global _CONFIGURED
    _CONFIGURED = limits or RateLimits()


def configured() -> RateLimits:
    return _CONFIGURED


def limiter_for(provider: str, endpoint: str | None):
    return _CONFIGURED.limiter(provider, endpoint)


def parse_limit(text: str | None, flag: str) -> tuple[float | None, dict[str, float]]:
    """`N` (every provider) or `PROVIDER=N,...` (and optionally a bare N as the default)."""
    if text is None or not str(text).strip():
        return None, {}
    default, per = None, {}
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, value = part.rpartition("=")
        try:
            number = float(value)
        except ValueError:
            raise ValueError(
                f"{flag} takes a number per minute, or PROVIDER=N,... (e.g. openai=500,gemini=1000); got {text!r}"
            ) from None
        if number <= 0:
            raise ValueError(f"{flag} must be above 0; got {value}")
        if sep:
            per[name.strip().lower()] = number
        else:
            default = number
    return default, per


def build_limits(requests: str | None, tokens: str | None) -> RateLimits:
    """`RateLimits` from the two flags' text."""
    rpm, rpm_per = parse_limit(requests, "--max-requests-per-minute")
    tpm, tpm_per = parse_limit(tokens, "--max-tokens-per-minute")
    providers = set(rpm_per) | set(tpm_per)
    per = {p: Limits(requests_per_minute=rpm_per.get(p, rpm), tokens_per_minute=tpm_per.get(p, tpm)) for p in providers}
    return RateLimits(Limits(requests_per_minute=rpm, tokens_per_minute=tpm), per)


def estimate_tokens(system: str, texts, max_tokens: int) -> int:
    """A request's token estimate before it is sent: about 4 characters a token, plus the reply cap."""
    chars = len(system or "") + sum(len(t or "") for t in texts)
    return chars // 4 + 1 + max_tokens


async def limited(limiter, system: str, messages, config, request):
    """One request (`await request()` -> Reply) through the endpoint's buckets; the
    token estimate is corrected by the reply's usage. Every adapter sends through it."""
    estimate = estimate_tokens(system, (m.text for m in messages), config.max_tokens)
    async with limiter.slot(estimate) as slot:
        reply = await request()
        slot.used(reply.usage.input_tokens + reply.usage.output_tokens)
        return reply


class LimitedChat:
    """How a hosted chat API's adapter sends: each try passes the endpoint's
    buckets (`limited`), and a `RetryableError` is tried again (`with_retries`).
    The adapter sets `limiter` and `attempts` and makes one request in `_request`."""

    limiter: Any
    attempts: int

    async def respond(self, messages, system: str, config, on_delta: Callable[[str], None] | None = None):
        def once():
            return limited(
                self.limiter, system, messages, config, lambda: self._request(messages, system, config, on_delta)
            )

        return await with_retries(once, attempts=self.attempts)
