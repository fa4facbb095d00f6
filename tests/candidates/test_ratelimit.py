"""Client-side rate limits (issue 12): token buckets on a fake clock, one
bucket per endpoint shared by the candidate and the judges, the flags."""

import json
import os
import subprocess
import sys

import pytest

from candidates import GenerationConfig, Message, ratelimit
from candidates.openai_chat import OpenAIChatCandidate
from candidates.ratelimit import (
    REQUESTS,
    Limits,
    RateLimits,
    build_limits,
    estimate_tokens,
    parse_limit,
)
from core.token_bucket import TokenBucket
from tests.fake_clock import FakeClock
from tests.fake_openai import FakeOpenAI
from tests.paths import ROOT


async def test_a_full_bucket_lets_a_minute_s_worth_through_then_paces():
    clock = FakeClock()
    bucket = TokenBucket.per_minute(60, clock=clock, sleep=clock.sleep)
    for _ in range(60):
        assert await bucket.take() == 0.0
    assert clock.sleeps == []
    waited = await bucket.take()
    assert waited == pytest.approx(1.0) and clock.now == pytest.approx(1001.0)
    clock.now += 30  # half a minute idle refills 30
    for _ in range(30):
        assert await bucket.take() == 0.0
    assert await bucket.take() == pytest.approx(1.0)


async def test_tokens_are_estimated_then_corrected_by_the_reported_usage():
    clock = FakeClock()
    bucket = TokenBucket.per_minute(1000, clock=clock, sleep=clock.sleep)
    await bucket.take(800)
    bucket.adjust(800 - 100)  # the reply used 100 tokens, not 800
    assert bucket.level == pytest.approx(900)
    assert await bucket.take(900) == 0.0
    assert await bucket.take(120) == pytest.approx(120 / (1000 / 60))
    big = TokenBucket.per_minute(100, clock=clock, sleep=clock.sleep)
    assert await big.take(250) == 0.0 and big.level == pytest.approx(-150)  # larger than a minute: goes into debt
    assert estimate_tokens("abcd" * 10, ["x" * 40], 300) == 10 + 10 + 1 + 300


@pytest.mark.slow
async def test_candidate_and_judge_on_one_endpoint_share_a_bucket():
    clock = FakeClock()
    ratelimit.configure(RateLimits(Limits(requests_per_minute=6), clock=clock, sleep=clock.sleep))
    try:
        with FakeOpenAI(reply="ok") as server, FakeOpenAI(reply="ok") as other:
            candidate = OpenAIChatCandidate("cand", base_url=server.base_url, api_key="x")
            judge = OpenAIChatCandidate("judge", base_url=server.base_url, api_key="x")
            elsewhere = OpenAIChatCandidate("judge", base_url=other.base_url, api_key="x")
            assert candidate.limiter is judge.limiter and elsewhere.limiter is not candidate.limiter
            config = GenerationConfig(max_tokens=5)
            for model in (candidate, judge) * 3:  # six requests: the whole minute's allowance
                await model.respond([Message(role="user", text="hi")], "", config)
            assert clock.sleeps == []
            await judge.respond([Message(role="user", text="hi")], "", config)  # the seventh waits 10 s
            assert sum(clock.sleeps) == pytest.approx(10.0)
            await elsewhere.respond([Message(role="user", text="hi")], "", config)  # another endpoint: its own bucket
            assert sum(clock.sleeps) == pytest.approx(10.0)
            for model in (candidate, judge, elsewhere):
                await model.aclose()
        assert len(server.requests) == 7 and len(other.requests) == 1
    finally:
        ratelimit.configure(None)


async def test_retries_pass_the_bucket_again_and_the_gauge_counts_waiting_and_in_flight():
    clock = FakeClock()
    ratelimit.configure(RateLimits(Limits(requests_per_minute=2), clock=clock, sleep=clock.sleep))
    try:
        with FakeOpenAI(reply="ok", fail_first=2, retry_after="0") as server:
            model = OpenAIChatCandidate("m", base_url=server.base_url, api_key="x")
            seen = []
            limiter = model.limiter
            original = limiter.requests.take

            async def take(amount=1.0):
                seen.append((REQUESTS.waiting, REQUESTS.in_flight))
                return await original(amount)

            limiter.requests.take = take
            await model.respond([Message(role="user", text="hi")], "", GenerationConfig())
            await model.aclose()
        assert server.statuses == [429, 429, 200]
        assert len(seen) == 3  # every attempt took from the bucket
        assert sum(clock.sleeps) == pytest.approx(30.0)  # the third attempt waited for a refill
        assert all(waiting == 1 and in_flight == 0 for waiting, in_flight in seen)
        assert REQUESTS.waiting == 0 and REQUESTS.in_flight == 0
    finally:
        ratelimit.configure(None)


def test_limits_per_provider_and_flag_parsing():
    assert parse_limit("500", "--x") == (500.0, {})
    assert parse_limit("openai=500, gemini=1000", "--x") == (None, {"openai": 500.0, "gemini": 1000.0})
    with pytest.raises(ValueError, match="--max-requests-per-minute takes a number"):
        build_limits("lots", None)
    with pytest.raises(ValueError, match="above 0"):
        build_limits("0", None)
    limits = build_limits("openai=500,100", "gemini=9000")
    assert limits.limits_for("openai") == Limits(requests_per_minute=500, tokens_per_minute=None)
    assert limits.limits_for("gemini") == Limits(requests_per_minute=100, tokens_per_minute=9000)
    assert limits.limits_for("anthropic") == Limits(requests_per_minute=100, tokens_per_minute=None)
    assert limits.describe()["openai"] == {"requests_per_minute": 500, "tokens_per_minute": None}
    assert build_limits(None, None).describe() is None
    assert build_limits(None, None).limiter("openai", "x") is ratelimit.UNLIMITED


@pytest.mark.clock
def test_bench_records_the_limits_and_shows_requests_in_flight(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "OPENAI_BASE_URL"}
    with FakeOpenAI(reply="The screwdriver you hold now.") as server:
        base = [
            sys.executable,
            "-m",
            "benchmark",
            "bench",
            "--model",
            "openai:m",
            "--base-url",
            server.base_url,
            "--judge-family",
            "lexical",
            "--conditions",
            "baseline",
            "--limit",
            "2",
        ]
        done = subprocess.run(
            base
            + [
                "--max-requests-per-minute",
                "6000",
                "--max-tokens-per-minute",
                "openai=2000000",
                "--output-dir",
                str(tmp_path / "run"),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=ROOT,
            env=env,
        )
        assert done.returncode == 0, done.stderr
        bad = subprocess.run(
            base + ["--max-requests-per-minute", "fast", "--output-dir", str(tmp_path / "bad")],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=ROOT,
            env=env,
        )
    assert "in flight" in done.stderr and "waiting" in done.stderr
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["rate_limits"] == {
        "default": {"requests_per_minute": 6000.0, "tokens_per_minute": None},
        "openai": {"requests_per_minute": 6000.0, "tokens_per_minute": 2000000.0},
    }
    assert bad.returncode == 2 and "--max-requests-per-minute takes a number" in bad.stderr
