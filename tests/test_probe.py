"""`wearsim probe` against each conformance server: it prints its checks, the
documented behaviours it saw, and writes a trace with media as sizes and no key."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.fake_realtime import TEST_KEY, FakeOpenAIRealtime


def _probe(model_id, base_url, trace, env, *extra):
    done = subprocess.run([sys.executable, "-m", "benchmark", "probe", model_id, "--base-url", base_url,
                           "--trace", str(trace), *extra],
                          capture_output=True, text=True, timeout=300, env={**os.environ, **env})
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


def test_probe_on_openai_realtime_reports_a_late_transcript_a_barge_in_and_usage(tmp_path):
    trace = tmp_path / "openai.jsonl"
    with FakeOpenAIRealtime(word_delay_s=0.05, transcripts="late", reply="It is the screwdriver in your hand.") as server:
        done = _probe("openai-realtime:gpt-realtime-2", server.base_url, trace, {"OPENAI_API_KEY": TEST_KEY})
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "ok  reply to the spoken question: 'It is the screwdriver in your hand.'" in out
    assert "s after the reply's end" in out  # the transcript came after response.done, and the probe says so
    assert "ok  barge-in: the reply was cut off" in out and "truncation sent" in out
    assert "usage by modality: in text" in out and "out audio" in out
    assert TEST_KEY not in done.stdout + done.stderr
    lines = _trace_is_clean(trace)
    sent = [line["message"].get("type") for line in lines if line["direction"] == "sent"]
    assert sent[0] == "session.update" and "response.cancel" in sent and "conversation.item.truncate" in sent
    assert server.sessions[0]["truncations"] and server.problems == []


def test_probe_on_gemini_live_reports_compression_and_resumption(gemini_env, tmp_path):
    trace = tmp_path / "gemini.jsonl"
    with gemini_env(word_delay_s=0.05, reply="It is the screwdriver in your hand.") as server:
        done = _probe("gemini-live:gemini-3.8-live", server.base_url, trace, {"SSL_CERT_FILE": str(server.cert)})
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "ok  reply to the spoken question" in out and "ok  spoken reply" in out
    assert "ok  every setup asked for context window compression" in out
    assert "ok  barge-in: the reply was cut off" in out and "resumption handles given: 1" in out
    lines = _trace_is_clean(trace)
    assert any("setup (as configured)" in line["message"] for line in lines)
    [session] = server.sessions
    assert session["activity"].count("start") == session["activity"].count("end")
    assert server.problems == []


def test_probe_refuses_a_chat_model_and_a_retired_one_in_one_line(tmp_path):
    for model, expected in (("openai:gpt-4o-mini", "not a realtime model id"),
                            ("gemini-live:gemini-live-2.5-flash-preview", "was shut down")):
        done = subprocess.run([sys.executable, "-m", "benchmark", "probe", model, "--trace", str(tmp_path / "t")],
                              capture_output=True, text=True, timeout=60,
                              env={**os.environ, "OPENAI_API_KEY": TEST_KEY, "GEMINI_API_KEY": TEST_KEY})
        assert done.returncode == 2 and expected in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "t").exists()
