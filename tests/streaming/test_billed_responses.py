"""Every response a realtime API is asked for is read, recorded and priced (issue 45).

The conformance servers count the responses they began and keep the usage of
each (the Gemini server's `answer_every_activity` bills an answer even when
the client closes before reading it, as the real service may). A run's
recorded replies must be exactly those responses, and its cost the servers'
usage priced by hand from a price file, in direct, stream and (in
test_proactive_stream.py) proactive runs; on OpenAI Realtime also with
barge-in cancels and rate-limited responses asked again."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from candidates import GenerationConfig
from core.candidate import USAGE_FIELDS, Usage
from perception.speech import FinalTranscript, SpeechStarted
from streaming import wire
from streaming.backends import RealtimeBackend
from streaming.session import Session
from tests.benchmark.run.test_cost_runs import (
    REALTIME_PRICES,
    TRANSCRIBE,
    TRANSCRIBE_PRICES,
    realtime_usage_cost,
    write_prices,
)
from tests.fake_realtime import TEST_KEY, FakeOpenAIRealtime
from tests.paths import ROOT
from tests.streaming.test_barge_in import of, until

MILLION = 1_000_000
GEMINI = "gemini-live:gemini-3.8-live"
GEMINI_PRICES = {
    "text_input": 0.7,
    "text_cached_input": 0.07,
    "text_output": 2.5,
    "audio_input": 3.5,
    "audio_cached_input": 0.35,
    "audio_output": 13.0,
    "image_input": 3.5,
    "image_cached_input": 0.35,
}
GEMINI_KEYS = {"TEXT": "text", "AUDIO": "audio", "VIDEO": "image", "IMAGE": "image"}


def gemini_usage_cost(usage: dict, p: dict = GEMINI_PRICES) -> float:
    """One `usageMetadata` as the conformance server sent it, priced by hand (it reports no cache)."""
    given = sum(d["tokenCount"] * p[f"{GEMINI_KEYS[d['modality']]}_input"] for d in usage["promptTokensDetails"])
    said = sum(d["tokenCount"] * p[f"{GEMINI_KEYS[d['modality']]}_output"] for d in usage["responseTokensDetails"])
    return (given + said) / MILLION


def gemini_price_file(folder: Path) -> Path:
    return write_prices(folder / "gemini-prices.toml", GEMINI, GEMINI_PRICES)


def _bench(run_dir: Path, *argv: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmark",
            "bench",
            "--judge-family",
            "lexical",
            "--conditions",
            "baseline",
            "--output-dir",
            str(run_dir),
            *argv,
        ],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
        env={**os.environ, **env},
    )


def _recorded(run_dir: Path) -> tuple[list[dict], dict]:
    records = [json.loads(line) for line in (run_dir / "transcripts.jsonl").read_text().splitlines()]
    return records, json.loads((run_dir / "summary.json").read_text())


@pytest.mark.whisper
@pytest.mark.parametrize("via", ["direct", "stream"])
def test_gemini_live_every_response_asked_is_recorded_and_the_cost_is_what_the_server_billed(gemini_env, tmp_path, via):
    prices = gemini_price_file(tmp_path)
    with gemini_env(models=("gemini-3.8-live",), answer_every_activity=True) as server:
        done = _bench(
            tmp_path / "run",
            "--model",
            GEMINI,
            "--base-url",
            server.base_url,
            "--via",
            via,
            "--limit",
            "3",
            "--prices",
            str(prices),
            *(["--synthetic-frames"] if via == "stream" else []),
            env={"SSL_CERT_FILE": str(server.cert)},
        )
    assert done.returncode == 0, done.stderr
    assert server.problems == []
    records, summary = _recorded(tmp_path / "run")
    assert [r["error"] for r in records] == [None] * 3
    replies = [t["reply"] for r in records for t in r["turns"]]
    # every response the server began is a recorded reply: none asked for the silence after the last turn
    assert server.responses == len(replies) == len(server.usages)
    if via == "stream":  # no activity is left open, and each one ended was a turn
        for session in server.sessions:
            assert session["activity"].count("start") == session["activity"].count("end") > 0
    billed = sum(gemini_usage_cost(u) for u in server.usages)
    assert billed > 0
    cost = summary["cost"]["conditions"]["baseline"]
    assert cost["candidate_usd"] == pytest.approx(billed, rel=1e-9) and cost["unknown"] == []
    assert round(cost["candidate_usd"], 2) == round(billed, 2)  # to the cent, as a bill reads
    assert sum(r["usage"]["input_tokens"] for r in replies) == sum(u["promptTokenCount"] for u in server.usages)
    assert sum(r["usage"]["output_tokens"] for r in replies) == sum(u["responseTokenCount"] for u in server.usages)


@pytest.mark.whisper
def test_openai_realtime_stream_run_with_rate_limited_responses_asked_again_records_every_billed_response(tmp_path):
    prices = write_prices(tmp_path / "prices.toml", "openai-realtime:gpt-realtime-x", REALTIME_PRICES)
    prices.write_text(
        prices.read_text() + "\n" + write_prices(tmp_path / "t.toml", TRANSCRIBE, TRANSCRIBE_PRICES).read_text()
    )
    with FakeOpenAIRealtime(fail_every=4, failed_usage=True) as server:
        done = _bench(
            tmp_path / "run",
            "--model",
            "openai-realtime:gpt-realtime-x",
            "--base-url",
            server.base_url,
            "--via",
            "stream",
            "--limit",
            "3",
            "--synthetic-frames",
            "--prices",
            str(prices),
            env={"OPENAI_API_KEY": TEST_KEY},
        )
    assert done.returncode == 0, done.stderr
    assert server.problems == [] and server.failed >= 1
    records, summary = _recorded(tmp_path / "run")
    assert [r["error"] for r in records] == [None] * 3
    replies = [t["reply"] for r in records for t in r["turns"]]
    # each response asked is a recorded reply or a failed one asked again, whose usage its turn carries
    assert server.responses == len(replies) + server.failed
    assert (
        sum("asked again after" in (t["reply"].get("session_lost") or "") for r in records for t in r["turns"])
        == server.failed
    )
    from tests.benchmark.run.test_cost_runs import transcription_usage_cost

    billed = sum(realtime_usage_cost(u, REALTIME_PRICES) for u in server.usages) + sum(
        transcription_usage_cost(u, TRANSCRIBE_PRICES) for u in server.transcription_usages
    )
    cost = summary["cost"]["conditions"]["baseline"]
    assert cost["candidate_usd"] == pytest.approx(billed, rel=1e-9) and cost["unknown"] == []
    assert round(cost["candidate_usd"], 2) == round(billed, 2)


class Script:
    """Voice activity by script: the events each chunk's stream time brings."""

    in_speech = False

    def __init__(self, events: dict[int, list]):
        self.events = events

    async def feed(self, pcm16: bytes, t_ms: int) -> list:
        return self.events.get(t_ms, [])

    async def end_turn(self) -> list:
        return []


def _final(text: str, end_ms: int) -> FinalTranscript:
    import numpy as np

    return FinalTranscript(
        text=text, start_ms=end_ms - 500, end_ms=end_ms, decode_seconds=0.01, audio=np.zeros(1, np.float32)
    )


@pytest.mark.clock
def test_openai_realtime_with_barge_in_and_rate_limits_records_every_response_the_server_billed(monkeypatch):
    """Turn 1 is talked over (its response cancelled), every third response fails rate-limited and is
    asked again; the replies the session reports carry every token the server billed."""
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    script = Script(
        {
            0: [SpeechStarted(t_ms=0)],
            1000: [_final("What is this?", 1000)],
            2000: [SpeechStarted(t_ms=2000)],
            3000: [_final("And now?", 3000)],
            4000: [SpeechStarted(t_ms=4000)],
            5000: [_final("And this one?", 5000)],
        }
    )
    chunk = b"\x01\x00" * 320  # 20 ms at 16 kHz

    async def go(server) -> list:
        events: list = []

        async def send(event):
            events.append(event)

        backend = await RealtimeBackend.open(
            "openai-realtime:gpt-realtime-x", "Be brief.", GenerationConfig(), base_url=server.base_url
        )
        session = Session(wire.SessionConfig(camera=False, barge_in=True), script, backend, send)
        worker = asyncio.create_task(session.run())

        async def stream(start_ms: int, end_ms: int):
            for t_ms in range(start_ms, end_ms + 1, 20):
                await session.on_media(wire.Media(kind=wire.KIND_AUDIO, t_ms=t_ms, payload=chunk))

        await stream(0, 1000)
        await until(lambda: of(events, wire.AssistantDelta, 1))
        await stream(1020, 3000)  # speech at 2000 cuts turn 1's reply off
        await until(lambda: of(events, wire.Metrics, 2), timeout=30)
        await stream(3020, 5000)
        await until(lambda: of(events, wire.Metrics, 3), timeout=30)
        await stream(5020, 6000)  # the silence after the last turn: no response is asked for it
        await asyncio.sleep(0.3)
        worker.cancel()
        await session.aclose()
        return events

    with FakeOpenAIRealtime(
        reply=" ".join(f"w{i}" for i in range(40)), word_delay_s=0.02, fail_every=3, failed_usage=True
    ) as server:
        events = asyncio.run(go(server))
    assert server.problems == []
    done = of(events, wire.AssistantDone)
    assert [d.turn for d in done] == [1, 2, 3] and done[0].interrupted
    assert server.sessions[0]["events"].count("response.cancel") == 1 and server.failed >= 1
    assert server.responses == len(done) + server.failed
    recorded = sum((d.usage for d in done), Usage())
    billed = [Usage(input_tokens=u["input_tokens"], output_tokens=u["output_tokens"]) for u in server.usages]
    assert (recorded.input_tokens, recorded.output_tokens) == (
        sum(u.input_tokens for u in billed),
        sum(u.output_tokens for u in billed),
    )
    # and by modality, cached parts included: the same money at any price
    by_field = {name: 0 for name in USAGE_FIELDS}
    for d in done:
        for name in USAGE_FIELDS:
            by_field[name] += getattr(d.usage, name)
    given = [u["input_token_details"] for u in server.usages]
    said = [u["output_token_details"] for u in server.usages]
    for kind in ("text", "audio", "image"):
        assert by_field[f"input_{kind}_tokens"] == sum(g[f"{kind}_tokens"] for g in given), kind
        assert by_field[f"cached_{kind}_tokens"] == sum(g["cached_tokens_details"][f"{kind}_tokens"] for g in given)
    for kind in ("text", "audio"):
        assert by_field[f"output_{kind}_tokens"] == sum(s[f"{kind}_tokens"] for s in said), kind
