"""OpenAI Realtime as the provider documents it beyond the happy path, through
the real SDK against the conformance server's switches (tests/fake_realtime.py,
docs/protocol.md "Provider behaviour"): input transcripts that come after the
reply, responses that end `failed` (rate limits, quota, a model that does not
exist) or `incomplete`."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from candidates import GenerationConfig, Message, open_candidate
from candidates.realtime_base import ModelNotFoundError
from core.records import TurnInput, TurnResult
from tests.fake_realtime import TEST_KEY as SECRET
from tests.fake_realtime import FakeOpenAIRealtime


def _bench(model_id, base_url, run_dir, *extra, status=0):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmark",
            "bench",
            "--model",
            model_id,
            "--base-url",
            base_url,
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
        timeout=600,
        env={**os.environ, "OPENAI_API_KEY": SECRET},
    )
    assert done.returncode == status, done.stderr
    path = run_dir / "transcripts.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return records, done.stderr


def _commits_ms(session) -> list[int]:
    return [size * 1000 // (2 * 24000) for size in session["commits"]]


@pytest.mark.whisper
@pytest.mark.parametrize("when", ["before", "late"])
def test_each_turn_records_its_own_input_transcript_whenever_it_comes(tmp_path, when):
    with FakeOpenAIRealtime(transcripts=when, transcript_delay_s=0.4) as server:
        records, _ = _bench(
            "openai-realtime:gpt-realtime-2", server.base_url, tmp_path / when, "--via", "stream", "--limit", "3"
        )
    assert server.problems == [] and [r["error"] for r in records] == [None] * 3
    heard = sorted([t["reply"]["heard"] for t in r["turns"]] for r in records)
    committed = sorted([f"heard {ms} ms of audio" for ms in _commits_ms(s)] for s in server.sessions)
    assert heard == committed  # turn by turn, each its own item's transcript
    assert all(len(set(turns)) == len(turns) for turns in heard)  # no turn took another's


@pytest.mark.whisper
def test_a_transcript_that_never_comes_is_recorded_as_missing_not_as_another_turns(tmp_path):
    with FakeOpenAIRealtime(transcripts="never") as server:
        records, _ = _bench(
            "openai-realtime:gpt-realtime-2", server.base_url, tmp_path / "run", "--via", "stream", "--limit", "1"
        )
    assert records[0]["error"] is None
    assert [t["reply"]["heard"] for t in records[0]["turns"]] == [None] * len(records[0]["turns"])


@pytest.mark.slow
@pytest.mark.parametrize("via", ["stream", "direct"])
def test_with_every_third_response_rate_limited_a_run_loses_no_cell(tmp_path, via):
    with FakeOpenAIRealtime(fail_every=3, fail_with="rate_limit") as server:
        records, _ = _bench(
            "openai-realtime:gpt-realtime-2", server.base_url, tmp_path / "run", "--via", via, "--limit", "3"
        )
    assert server.problems == [] and server.failed >= 2
    assert [r["error"] for r in records] == [None] * 3  # every cell answered (the lexical judge may not label it)
    retried = [t["reply"]["session_lost"] for r in records for t in r["turns"] if t["reply"]["session_lost"]]
    # every failed response asked again, each named (one turn may have needed two)
    assert sum(s.count("asked again after") for s in retried) == server.failed
    assert all("rate_limit_exceeded" in s for s in retried)
    assert len(server.sessions) == 3  # asked again on the same session: none was replaced
    answered = sum(len(r["turns"]) for r in records)
    assert server.responses == answered + server.failed


@pytest.mark.whisper
def test_a_failed_response_the_api_will_not_mend_fails_the_cell_at_once(tmp_path):
    with FakeOpenAIRealtime(fail_every=1, fail_with="insufficient_quota") as server:
        records, _ = _bench(
            "openai-realtime:gpt-realtime-2",
            server.base_url,
            tmp_path / "run",
            "--via",
            "stream",
            "--limit",
            "1",
            status=3,
        )
    assert "insufficient_quota" in records[0]["error"] and records[0]["fault"] == "rate_limited"
    assert server.responses == 1  # not asked again
    assert SECRET not in json.dumps(records)


def test_an_incomplete_reply_is_recorded_with_its_reason(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)

    async def two_turns(base_url):
        async with open_candidate("openai-realtime:gpt-realtime-2", base_url=base_url) as model:
            talk = model.conversation()
            try:
                messages = [Message(role="user", text="[Camera: a red mug]\nWhat is this?")]
                first = await talk.respond(messages, "Be brief.", GenerationConfig())
                messages += [Message(role="assistant", text=first.text), Message(role="user", text="And now?")]
                return first, await talk.respond(messages, "Be brief.", GenerationConfig())
            finally:
                await talk.aclose()

    with FakeOpenAIRealtime(reply="It is the red mug.", incomplete_on=(1,)) as server:
        first, second = asyncio.run(two_turns(server.base_url))
    assert (first.text, first.incomplete) == ("It is", "max_output_tokens")
    assert (second.text, second.incomplete) == ("It is the red mug.", None)
    line = TurnResult(
        turn=1,
        input=TurnInput(
            turn=1, camera_block=None, speech="What is this?", camera_source=None, speech_source="authored"
        ),
        reply=first,
    ).to_json()
    assert line["reply"]["incomplete"] == "max_output_tokens"
    assert TurnResult.from_json(line, "t").reply.incomplete == "max_output_tokens"


@pytest.mark.slow
@pytest.mark.parametrize("via", ["direct", "stream"])
def test_a_model_the_provider_says_does_not_exist_stops_the_run_with_one_line(tmp_path, via):
    with FakeOpenAIRealtime(models=("gpt-realtime-2",)) as server:
        records, stderr = _bench(
            "openai-realtime:gpt-realtime-nope",
            server.base_url,
            tmp_path / "run",
            "--via",
            via,
            "--limit",
            "3",
            "--concurrency",
            "1",
            status=2,
        )
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("error: openai-realtime:gpt-realtime-nope: the provider says this model does not exist")
    assert "wearsim models" in last and SECRET not in stderr
    assert records == [] and server.responses == 1  # one ask found it out; no retry, no other cell


def test_the_adapter_raises_model_not_found_not_a_retryable_fault(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)

    async def ask(base_url):
        async with open_candidate("openai-realtime:gpt-nope", base_url=base_url) as model:
            return await model.respond([Message(role="user", text="Hi")], "Be brief.", GenerationConfig())

    with FakeOpenAIRealtime(models=("gpt-realtime-2",)) as server:
        with pytest.raises(ModelNotFoundError, match="openai-realtime:gpt-nope: the provider says"):
            asyncio.run(ask(server.base_url))
    assert server.responses == 1


def test_a_retired_model_id_stops_bench_before_anything_is_written(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmark",
            "bench",
            "--model",
            "gemini-live:gemini-live-2.5-flash-preview",
            "--judge-family",
            "lexical",
            "--output-dir",
            str(tmp_path / "run"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "GEMINI_API_KEY": SECRET},
    )
    assert done.returncode == 2
    assert "gemini-live-2.5-flash-preview was shut down by the provider on 2025-12-09" in done.stderr
    assert "gemini-live:gemini-3.8-live" in done.stderr and not (tmp_path / "run").exists()


@pytest.mark.clock
def test_serve_refuses_to_offer_a_retired_model():
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmark",
            "serve",
            "--backend",
            "gemini-live:gemini-live-2.5-flash-preview",
            "--port",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "GEMINI_API_KEY": SECRET},
    )
    assert done.returncode == 2 and "was shut down by the provider on 2025-12-09" in done.stderr
