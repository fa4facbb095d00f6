"""Gemini Live as the provider documents it beyond the happy path, through the
real SDK against the conformance server's switches (tests/fake_gemini_live.py,
docs/protocol.md "Provider behaviour"): the two-minute audio+video session
limit (scaled down), connections announced to end with a goAway, resumption
that neither loses nor repeats input, activities that all end, and a model
that does not exist."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from candidates import GenerationConfig
from candidates.realtime import open_realtime_session
from candidates.realtime_base import ModelNotFoundError
from candidates.retry import RetryableError

MODEL = "gemini-3.8-live"


def _bench(server, run_dir, *extra, status=0, model=f"gemini-live:{MODEL}"):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmark",
            "bench",
            "--model",
            model,
            "--base-url",
            server.base_url,
            "--judge-family",
            "lexical",
            "--conditions",
            "baseline",
            "--output-dir",
            str(run_dir),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "SSL_CERT_FILE": str(server.cert)},
    )
    assert done.returncode == status, done.stderr
    path = run_dir / "transcripts.jsonl"
    return ([json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []), done.stderr


@pytest.mark.whisper
def test_a_stream_run_past_the_audio_and_video_limit_loses_no_cell(gemini_env, tmp_path):
    with gemini_env(models=(MODEL,), session_limit_s=3.0) as server:
        records, _ = _bench(server, tmp_path / "run", "--via", "stream", "--synthetic-frames", "--limit", "3")
    assert server.problems == [] and [r["error"] for r in records] == [None] * 3
    setups = [s["setup"] for s in server.sessions]
    # the SDK writes the inner keys as the Python names (proto JSON reads either spelling)
    assert setups and all({"slidingWindow", "sliding_window"} & set(s["contextWindowCompression"]) for s in setups)
    assert server.limit_closes == 0
    # every session held video and more audio than the limit allows without compression
    assert all(s["frames"] > 0 and s["held_audio"] / (2 * 16000) > 3.0 for s in server.sessions)


@pytest.mark.clock
def test_the_limit_switch_ends_a_session_that_did_not_ask_for_compression(gemini_env, monkeypatch):
    """The switch is real: the same adapter with compression taken out of its setup is cut off."""
    from google.genai import types

    monkeypatch.setattr(types, "ContextWindowCompressionConfig", lambda **_: None)

    async def stream(base_url):
        session = await open_realtime_session(
            f"gemini-live:{MODEL}", "Be brief.", base_url=base_url, streaming_input=True, config=GenerationConfig()
        )
        try:
            await session.send_user(None, (b"\xff\xd8\xff\xe0fake-jpeg",))
            await session.speech_started()  # as the glasses' voice activity says it: the audio goes from here
            for _ in range(60):  # 3 s of 50 ms chunks, in a little over a second
                await session.send_audio(b"\x01\x00" * 800)
                await asyncio.sleep(0.02)
        finally:
            await session.aclose()

    with gemini_env(models=(MODEL,), session_limit_s=0.5) as server:
        with pytest.raises(RetryableError, match="closed .* times in a row|resumed connection failed"):
            asyncio.run(stream(server.base_url))
    assert server.limit_closes >= 1 and "contextWindowCompression" not in server.sessions[0]["setup"]


@pytest.mark.whisper
@pytest.mark.parametrize("via", ["stream", "direct"])
def test_connections_announced_to_end_are_left_in_time_and_no_cell_is_lost(gemini_env, tmp_path, via):
    extra = ("--synthetic-frames",) if via == "stream" else ()
    # a connection must end inside a trial for the conversation to move: a stream trial lasts about 2 s here,
    # a text-proxy trial about a second
    reset = (1.2, 0.4) if via == "stream" else (0.5, 0.15)
    with gemini_env(models=(MODEL,), reset_after_s=reset[0], go_away_left_s=reset[1], word_delay_s=0.05) as server:
        records, _ = _bench(server, tmp_path / via, "--via", via, *extra, "--limit", "3")
    assert server.problems == [] and [r["error"] for r in records] == [None] * 3
    assert server.resets >= 3 and len(server.sessions) > 3  # conversations moved to new connections
    for record in records:
        assert all(t["reply"]["text"] for t in record["turns"])
        assert via == "direct" or all(t["reply"]["heard"] for t in record["turns"])
    finals = server.final_states()
    # one conversation per cell; on the text proxy a session that kept closing may also have been replaced
    # by a new one told the turns so far, which leaves the old conversation behind
    assert len(finals) == 3 if via == "stream" else len(finals) >= 3
    for state in finals:  # each conversation, across its connections, as the API holds it
        assert state["activity"].count("start") == state["activity"].count("end")
        assert len(state["history"]) == len(set(state["history"]))  # no turn asked twice


@pytest.mark.clock
def test_resumed_input_is_neither_lost_nor_sent_twice(gemini_env):
    """Numbered audio chunks streamed across connections that end every 0.7 s: the conversation
    the API holds at the end has every chunk once, in order."""

    async def stream(base_url):
        session = await open_realtime_session(
            f"gemini-live:{MODEL}", "Be brief.", base_url=base_url, streaming_input=True, config=GenerationConfig()
        )
        try:
            for turn in range(3):
                for i in range(40):
                    await session.send_audio((turn * 100 + i).to_bytes(4, "big") + b"\x00\x00" * 318)
                    await asyncio.sleep(0.02)
                await session.respond(audio_turn=True)
            return session.reconnects
        finally:
            await session.aclose()

    with gemini_env(models=(MODEL,), reset_after_s=0.7, go_away_left_s=0.2) as server:
        reconnects = asyncio.run(stream(server.base_url))
    assert server.problems == [] and reconnects >= 3
    [final] = server.final_states()
    expected = [(turn * 100 + i).to_bytes(4, "big").hex() for turn in range(3) for i in range(40)]
    assert final["chunks"] == expected
    assert final["activity"] == ["start", "end"] * 3 and len(final["history"]) == 3


@pytest.mark.whisper
def test_every_activity_started_is_ended_when_the_session_closes(gemini_env, tmp_path):
    with gemini_env(models=(MODEL,)) as server:
        records, _ = _bench(server, tmp_path / "run", "--via", "stream", "--limit", "2")
    assert [r["error"] for r in records] == [None] * 2 and server.problems == []
    for session in server.sessions:
        assert session["activity"].count("start") == session["activity"].count("end") > 0


def test_a_model_the_api_does_not_know_is_a_user_error_not_a_retry(gemini_env):
    async def connect(base_url):
        return await open_realtime_session(
            "gemini-live:gemini-nope-live",
            "Be brief.",
            base_url=base_url,
            streaming_input=True,
            config=GenerationConfig(),
        )

    with gemini_env(models=(MODEL,)) as server:
        with pytest.raises(ModelNotFoundError, match="gemini-live:gemini-nope-live: the provider says"):
            asyncio.run(connect(server.base_url))
    assert len(server.sessions) == 1


@pytest.mark.whisper
def test_bench_on_a_gemini_model_that_does_not_exist_stops_with_one_line(gemini_env, tmp_path):
    with gemini_env(models=(MODEL,)) as server:
        records, stderr = _bench(
            server,
            tmp_path / "run",
            "--via",
            "stream",
            "--limit",
            "2",
            "--concurrency",
            "1",
            status=2,
            model="gemini-live:gemini-nope-live",
        )
    assert records == []
    assert (
        stderr.strip()
        .splitlines()[-1]
        .startswith("error: gemini-live:gemini-nope-live: the provider says this model does not exist")
    )
