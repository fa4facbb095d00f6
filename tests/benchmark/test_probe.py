"""`wearsim probe` against each conformance server: it prints its checks, the
documented behaviours it saw and what the sight check's reply named, and
writes a trace with media as sizes and no key, nor any 8 characters of one,
also when a server spells the key back a few characters at a time; a failed
session leaves its trace, and a trace path that cannot be written stops the
probe before the first request."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.fake_realtime import TEST_KEY, FakeOpenAIRealtime


def _probe(model_id, base_url, trace, env, *extra):
    done = subprocess.run(
        [sys.executable, "-m", "benchmark", "probe", model_id, "--base-url", base_url, "--trace", str(trace), *extra],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
    )
    return done


def _trace_is_clean(trace) -> list[dict]:
    text = trace.read_text()
    assert TEST_KEY not in text
    lines = [json.loads(line) for line in text.splitlines()]
    longest = max(len(v) for line in lines for v in _strings(line["message"]))
    assert longest < 2000  # media never in it, only its size
    return lines


def _strings(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, str):
        yield value


@pytest.mark.slow
def test_probe_on_openai_realtime_reports_a_late_transcript_a_barge_in_and_usage(tmp_path):
    trace = tmp_path / "openai.jsonl"
    with FakeOpenAIRealtime(
        word_delay_s=0.05, transcripts="late", reply="It is the screwdriver in your hand."
    ) as server:
        done = _probe("openai-realtime:gpt-realtime-2", server.base_url, trace, {"OPENAI_API_KEY": TEST_KEY})
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "ok  reply to the spoken question: 'It is the screwdriver in your hand.'" in out
    assert "s after the reply's end" in out  # the transcript came after response.done, and the probe says so
    assert "ok  barge-in: the reply was cut off" in out and "truncation sent" in out
    assert "usage by modality: in text" in out and "out audio" in out
    # the sight check: the pictograph of sc-01's Turn 2 scene (a screwdriver in hand), and what was named
    assert "ok  sight: the reply names screwdriver (in hand: screwdriver)" in out
    assert TEST_KEY not in done.stdout + done.stderr
    lines = _trace_is_clean(trace)
    sent = [line["message"].get("type") for line in lines if line["direction"] == "sent"]
    assert sent[0] == "session.update" and "response.cancel" in sent and "conversation.item.truncate" in sent
    assert server.sessions[0]["truncations"] and server.problems == []
    [sight] = [line["message"]["sight"] for line in lines if line["direction"] == "check"]
    assert sight["expected"] == ["screwdriver"] and sight["named"] == ["screwdriver"]


@pytest.mark.slow
def test_probe_on_gemini_live_reports_compression_and_resumption(gemini_env, tmp_path):
    trace = tmp_path / "gemini.jsonl"
    with gemini_env(word_delay_s=0.05, reply="It is the screwdriver in your hand.") as server:
        done = _probe("gemini-live:gemini-3.8-live", server.base_url, trace, {"SSL_CERT_FILE": str(server.cert)})
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "ok  reply to the spoken question" in out and "ok  spoken reply" in out
    assert "ok  every setup asked for context window compression" in out
    # a handle after each reply answered in full: Turn 1 and the sight check (Turn 2 was cut off)
    assert "ok  barge-in: the reply was cut off" in out and "resumption handles given: 2" in out
    assert "ok  sight: the reply names screwdriver (in hand: screwdriver)" in out
    lines = _trace_is_clean(trace)
    assert any("setup (as configured)" in line["message"] for line in lines)
    [session] = server.sessions
    assert session["activity"].count("start") == session["activity"].count("end")
    assert server.problems == []


def test_probe_refuses_a_chat_model_and_a_retired_one_in_one_line(tmp_path):
    for model, expected in (
        ("openai:gpt-4o-mini", "not a realtime model id"),
        ("gemini-live:gemini-live-2.5-flash-preview", "was shut down"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "benchmark", "probe", model, "--trace", str(tmp_path / "t")],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "OPENAI_API_KEY": TEST_KEY, "GEMINI_API_KEY": TEST_KEY},
        )
        assert done.returncode == 2 and expected in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "t").exists()


def _runs_of_the_key(text: str) -> list[str]:
    """Every 8-character piece of the test key that `text` holds."""
    return [TEST_KEY[i : i + 8] for i in range(len(TEST_KEY) - 7) if TEST_KEY[i : i + 8] in text]


def _no_base64_left(lines: list[dict]) -> None:
    """Every media field of the trace is a size: the audio deltas received and the audio sent."""
    for line in lines:
        message = line["message"]
        kind = str(message.get("type", ""))
        if kind.endswith("audio.delta"):
            assert message["delta"].startswith("<") and "base64" in message["delta"], message
        if kind == "input_audio_buffer.append":
            assert message["audio"].startswith("<"), message


@pytest.mark.slow
def test_a_server_that_spells_the_key_back_gets_it_into_no_output_and_a_failed_session_keeps_its_trace(tmp_path):
    """The key in 3-character transcript deltas with 60-byte audio deltas (Turn 1), then an error event
    naming the key (Turn 2): the probe fails, and neither stdout, stderr nor the trace holds the key,
    any 8 characters of it, or any base64 audio."""
    reply = f"Your key is {TEST_KEY}, said three letters at a time."
    pieces = -(-len(reply) // 3)
    trace = tmp_path / "leak.jsonl"
    with FakeOpenAIRealtime(
        reply=reply,
        delta_chars=3,
        speech=b"\x01\x02" * 30 * pieces,
        error_on_response=2,
        error_message=f"Incorrect API key provided: {TEST_KEY}. Find your key in settings.",
    ) as server:
        done = _probe("openai-realtime:gpt-realtime-2", server.base_url, trace, {"OPENAI_API_KEY": TEST_KEY})
    assert done.returncode == 1
    assert "the probe session failed" in done.stderr and "Incorrect API key provided: [redacted]" in done.stderr
    assert _runs_of_the_key(done.stdout + done.stderr) == []
    text = trace.read_text()  # written although the session failed, up to the failure
    assert _runs_of_the_key(text) == []
    lines = [json.loads(line) for line in text.splitlines()]
    deltas = [line["message"] for line in lines if line["message"].get("type", "").endswith("audio.delta")]
    assert len(deltas) == pieces and all(d["delta"] == "<80 characters of base64>" for d in deltas)  # 60 bytes each
    _no_base64_left(lines)
    errors = [line["message"] for line in lines if line["message"].get("type") == "error"]
    assert errors and "[redacted]" in errors[0]["error"]["message"]
    assert server.responses == 2  # Turn 1 answered, Turn 2 failed: the trace holds both


def test_a_trace_path_that_cannot_be_written_stops_the_probe_before_the_first_request(tmp_path):
    target = tmp_path / "elsewhere.jsonl"
    target.write_text("kept\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    with FakeOpenAIRealtime() as server:
        for path, words in (
            (link, "is a symbolic link"),
            (tmp_path / "no" / "such" / "t.jsonl", "does not exist"),
            (tmp_path, "is not a regular file"),
        ):
            done = _probe("openai-realtime:gpt-realtime-2", server.base_url, path, {"OPENAI_API_KEY": TEST_KEY})
            assert done.returncode == 2 and words in done.stderr, done.stderr
            assert len(done.stderr.strip().splitlines()) == 1
    assert server.sessions == [] and server.responses == 0  # nothing was asked of the API
    assert target.read_text() == "kept\n"
