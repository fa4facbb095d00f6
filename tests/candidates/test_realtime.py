"""OpenAI Realtime and Gemini Live as candidates, through the real SDK
clients against local conformance servers (tests/fake_realtime.py): the text
proxy, the simulated glasses relaying audio and frames, errors sent as
events, a refused TEXT output, a dropped connection."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from candidates import GenerationConfig, Message, open_candidate
from candidates.realtime_base import RealtimeError
from candidates.retry import RetryableError
from media_effects.media import FPS
from tests.fake_realtime import TEST_KEY as SECRET
from tests.fake_realtime import FakeOpenAIRealtime


async def _two_turns(model_id, base_url):
    async with open_candidate(model_id, base_url=base_url) as model:
        candidate = model.conversation()  # one conversation, as a trial's (the runner closes it)
        try:
            messages = [Message(role="user", text="[Camera: a red mug]\nWhat is this?")]
            first = await candidate.respond(messages, "Be brief.", GenerationConfig())
            messages += [Message(role="assistant", text=first.text), Message(role="user", text="And now?")]
            second = await candidate.respond(messages, "Be brief.", GenerationConfig())
        finally:
            await candidate.aclose()
        return first, second, candidate


def test_openai_realtime_text_proxy_keeps_one_session_per_conversation(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeOpenAIRealtime(reply="A red mug.") as server:
        first, second, candidate = asyncio.run(_two_turns("openai-realtime:gpt-realtime", server.base_url))
    assert server.problems == []
    assert (first.text, second.text) == ("A red mug.", "A red mug.")
    assert first.usage.input_tokens == server.usages[0]["input_tokens"] and first.first_token_s is not None
    [session] = server.sessions  # Turn 2 went into the same session
    assert session["path"] == "/v1/realtime?model=gpt-realtime" and session["auth"] == f"Bearer {SECRET}"
    assert session["session"]["output_modalities"] == ["text"]
    assert session["session"]["audio"]["input"]["turn_detection"] is None
    assert session["session"]["instructions"] == "Be brief."
    assert [i["content"][0]["text"] for i in session["items"]] == ["[Camera: a red mug]\nWhat is this?", "And now?"]
    assert session["events"].count("response.create") == 2
    assert candidate.live.session is None  # aclose closed it


def test_gemini_live_text_proxy_falls_back_to_audio_when_text_is_refused(gemini_env):
    with gemini_env(refuse_text=True, reply="A red mug.") as server:
        first, second, _ = asyncio.run(_two_turns("gemini-live:gemini-live-x", server.base_url))
    assert server.problems == []
    refused, spoken = server.sessions
    assert refused["setup"]["generationConfig"]["responseModalities"] == ["TEXT"]
    assert spoken["setup"]["generationConfig"]["responseModalities"] == ["AUDIO"]
    assert "outputAudioTranscription" in spoken["setup"] and spoken["key"] == SECRET
    assert (first.text, second.text) == ("A red mug.", "A red mug.")  # read from the output transcription
    assert [turn[0]["parts"][0]["text"] for turn in spoken["client_turns"]] == [
        "[Camera: a red mug]\nWhat is this?",
        "And now?",
    ]


def test_an_error_event_fails_the_turn_with_the_apis_message_and_no_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeOpenAIRealtime(error_on_response=1) as server:
        with pytest.raises(RealtimeError) as info:
            asyncio.run(_two_turns("openai-realtime:gpt-realtime", server.base_url))
    assert "invalid_value: Invalid value: 'x'." in str(info.value)
    assert SECRET not in str(info.value)


def test_a_dropped_connection_replays_the_conversation_into_a_new_session(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeOpenAIRealtime(drop_on_responses=(2,), reply="A red mug.") as server:
        first, second, _ = asyncio.run(_two_turns("openai-realtime:gpt-realtime", server.base_url))
    assert (first.text, second.text) == ("A red mug.", "A red mug.")
    dropped, fresh = server.sessions
    texts = [[c["text"] for c in item["content"]] for item in fresh["items"]]
    assert texts == [["[Camera: a red mug]\nWhat is this?"], ["A red mug."], ["And now?"]]  # replayed, then Turn 2
    assert fresh["items"][1]["role"] == "assistant"


def test_a_replaced_sessions_cause_goes_into_the_turn_record(monkeypatch):
    from core.records import TurnInput, TurnResult

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeOpenAIRealtime(drop_on_responses=(2,), reply="A red mug.") as server:
        first, second, _ = asyncio.run(_two_turns("openai-realtime:gpt-realtime", server.base_url))
    assert first.session_lost is None and "connection lost" in second.session_lost
    line = TurnResult(
        turn=2,
        input=TurnInput(turn=2, camera_block=None, speech="And now?", camera_source=None, speech_source="authored"),
        reply=second,
    ).to_json()
    assert TurnResult.from_json(line, "t").reply.session_lost == second.session_lost


@pytest.mark.slow
def test_a_connection_that_keeps_dropping_fails_the_turn_as_retryable(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeOpenAIRealtime(drop_on_responses=(1, 2, 3)) as server:
        with pytest.raises(RetryableError, match="connection lost"):
            asyncio.run(_two_turns("openai-realtime:gpt-realtime", server.base_url))
    assert len(server.sessions) == 3  # ATTEMPTS sessions, each asked once


def test_gemini_live_moves_to_a_new_connection_after_a_go_away(gemini_env):
    with gemini_env(go_away_on_turn=1, reply="A red mug.") as server:
        first, second, _ = asyncio.run(_two_turns("gemini-live:gemini-live-x", server.base_url))
        assert server.went_away.wait(10)  # the server has closed the first connection
    assert server.problems == [] and (first.text, second.text) == ("A red mug.", "A red mug.")
    old, new = server.sessions
    assert "sessionResumption" in old["setup"] and new["resumed_from"] == "handle-1"
    assert new["history"] == [1, 2] and len(new["client_turns"]) == 1  # Turn 2 only: the context was resumed


def test_gemini_live_resumes_a_connection_dropped_mid_turn_and_asks_again(gemini_env):
    with gemini_env(drop_on_turn=2, reply="A red mug.") as server:
        first, second, _ = asyncio.run(_two_turns("gemini-live:gemini-live-x", server.base_url))
    assert server.problems == [] and second.text == "A red mug."
    old, new = server.sessions
    assert new["resumed_from"] == "handle-1" and [len(t) for t in new["client_turns"]] == [1]
    assert new["client_turns"][0][0]["parts"][0]["text"] == "And now?"


def _bench(model_id, base_url, run_dir, env, *extra, status=0):
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
        env={**os.environ, **env},
    )
    assert done.returncode == status, done.stderr
    return [json.loads(line) for line in (run_dir / "transcripts.jsonl").read_text().splitlines()]


def _heard_ms(record):
    return [int(t["reply"]["heard"].split()[1]) for t in record["turns"]]


@pytest.mark.whisper
def test_bench_via_stream_relays_audio_and_frames_to_both_apis(gemini_env, tmp_path):
    ids = ["sc-01", "sc-02", "sc-05"]  # sc-05 has rendered stills; the others only speech
    with FakeOpenAIRealtime() as server:
        openai_records = _bench(
            "openai-realtime:gpt-realtime",
            server.base_url,
            tmp_path / "openai",
            {"OPENAI_API_KEY": SECRET},
            "--via",
            "stream",
            "--limit",
            "5",
        )
        openai_seen = server
    with gemini_env() as server:
        gemini_records = _bench(
            "gemini-live:gemini-live-x",
            server.base_url,
            tmp_path / "gemini",
            {"SSL_CERT_FILE": str(server.cert)},
            "--via",
            "stream",
            "--limit",
            "5",
        )
        gemini_seen = server
    assert openai_seen.problems == [] and gemini_seen.problems == []
    for records in (openai_records, gemini_records):
        by_id = {r["scenario_id"]: r for r in records}
        for scenario_id in ids:
            record = by_id[scenario_id]
            assert record["error"] is None and record["via"] == "stream"
            for turn in record["turns"]:
                assert turn["input"]["speech_source"] == "media" and turn["input"]["speech"]
                assert turn["metrics"]["speech_end_to_first_token"] > 0
                assert turn["metrics"]["turn_end_to_first_token"] >= 0
                assert turn["reply"]["heard"].startswith("heard ")
        assert [t["input"]["camera_source"] for t in by_id["sc-05"]["turns"]] == ["media", "media"]
        assert [t["input"]["camera_source"] for t in by_id["sc-01"]["turns"]] == ["authored", "authored"]
        # frames streamed as they came under the default policy, one a second: the newest the API had
        # was at most a second and one frame interval old when the speech ended
        newest = (1000 + 1000 / FPS) / 1000
        assert all(0 <= t["metrics"]["last_frame_age_s"] <= newest for t in by_id["sc-05"]["turns"])
        assert all(t["metrics"]["last_frame_age_s"] is None for t in by_id["sc-01"]["turns"])
        assert SECRET not in json.dumps(records)
    # each turn committed once, at 24 kHz for OpenAI and 16 kHz for Gemini: both heard the same durations
    assert all(len(s["commits"]) == 2 for s in openai_seen.sessions)
    assert all(s["audio_mime"] == {"audio/pcm;rate=16000"} for s in gemini_seen.sessions)
    openai_ms = {r["scenario_id"]: _heard_ms(r)[0] for r in openai_records}
    gemini_ms = {r["scenario_id"]: _heard_ms(r)[0] for r in gemini_records}
    assert all(abs(openai_ms[i] - gemini_ms[i]) <= 0.02 * gemini_ms[i] for i in openai_ms)
    # frames went as images; a turn without frames sent its authored camera text
    images = [[c["type"] for c in item["content"]] for s in openai_seen.sessions for item in s["items"]]
    assert ["input_image"] in images and ["input_text"] in images
    sc05 = [s for s in gemini_seen.sessions if s["frames"]]
    assert len(sc05) == 1 and 4 <= sc05[0]["frames"] <= 30  # about one per second of the trial, not every frame
    assert any(text.startswith("[Camera: ") for s in gemini_seen.sessions for text in s["texts"])


@pytest.mark.whisper
def test_an_openai_stream_session_lost_mid_turn_is_replaced_and_told_the_conversation(tmp_path):
    """sc-05 behind the glasses: the connection drops when Turn 2 is asked. A new session gets
    Turn 1 (its transcript, its last frame, the reply), Turn 2's frames and audio again, then the ask."""
    with FakeOpenAIRealtime(reply="A red mug.") as server:
        [steady] = _bench(
            "openai-realtime:gpt-realtime",
            server.base_url,
            tmp_path / "steady",
            {"OPENAI_API_KEY": SECRET},
            "--via",
            "stream",
            "--ids",
            "sc-05",
        )
    with FakeOpenAIRealtime(reply="A red mug.", drop_on_responses=(2,)) as server:
        [record] = _bench(
            "openai-realtime:gpt-realtime",
            server.base_url,
            tmp_path / "run",
            {"OPENAI_API_KEY": SECRET},
            "--via",
            "stream",
            "--ids",
            "sc-05",
        )
    assert server.problems == []
    assert record["error"] is None and [t["reply"]["text"] for t in record["turns"]][:2] == ["A red mug."] * 2
    lost, new = server.sessions
    first = new["items"][0]
    assert first["role"] == "user" and [c["type"] for c in first["content"]] == ["input_image", "input_text"]
    assert first["content"][1]["text"] == record["turns"][0]["input"]["speech"]  # Whisper's transcript of Turn 1
    assert new["items"][1]["role"] == "assistant" and new["items"][1]["content"][0]["text"] == "A red mug."
    assert all(c["type"] == "input_image" for item in new["items"][2:] for c in item["content"])  # Turn 2's frames
    assert len(new["items"]) >= 3
    # Turn 2's audio, sent again: the new session heard as much of it as an undisturbed run did
    assert abs(_heard_ms(record)[1] - _heard_ms(steady)[1]) <= 0.05 * _heard_ms(steady)[1]
    assert len(lost["commits"]) == 2 and len(new["commits"]) >= 1


@pytest.mark.whisper
def test_an_openai_stream_session_that_keeps_being_lost_fails_the_cell(tmp_path):
    with FakeOpenAIRealtime(drop_on_responses=(2, 3, 4)) as server:
        [record] = _bench(
            "openai-realtime:gpt-realtime",
            server.base_url,
            tmp_path / "run",
            {"OPENAI_API_KEY": SECRET},
            "--via",
            "stream",
            "--ids",
            "sc-01",
            status=3,
        )
    assert "connection lost" in record["error"] and SECRET not in json.dumps(record)
    assert len(server.sessions) == 3  # ATTEMPTS sessions for Turn 2: the first, and two new ones


@pytest.mark.whisper
def test_bench_via_stream_records_an_api_error_event_against_the_cell(tmp_path):
    with FakeOpenAIRealtime(error_on_response=1) as server:
        records = _bench(
            "openai-realtime:gpt-realtime",
            server.base_url,
            tmp_path / "run",
            {"OPENAI_API_KEY": SECRET},
            "--via",
            "stream",
            "--limit",
            "1",
            status=3,
        )  # 1 of 1 errored
    assert "invalid_value: Invalid value: 'x'." in records[0]["error"]
    assert SECRET not in json.dumps(records)


@pytest.mark.slow
def test_bench_via_direct_on_a_realtime_api_opens_one_session_per_trial(tmp_path):
    with FakeOpenAIRealtime(reply="Swing the hammer harder.") as server:
        records = _bench(
            "openai-realtime:gpt-realtime",
            server.base_url,
            tmp_path / "run",
            {"OPENAI_API_KEY": SECRET},
            "--limit",
            "3",
        )
    assert [r["error"] for r in records] == [None, None, None]
    assert len(server.sessions) == 3
    sent = sorted(sum(m["role"] == "user" for m in r["messages"]) for r in records)
    assert sorted(len(s["items"]) for s in server.sessions) == sent  # every turn in its trial's one session


@pytest.mark.whisper
def test_a_gemini_stream_dropped_mid_turn_resends_the_turns_audio_on_the_resumed_connection(gemini_env, tmp_path):
    with gemini_env(drop_on_turn=2) as server:
        records = _bench(
            "gemini-live:gemini-live-x",
            server.base_url,
            tmp_path / "run",
            {"SSL_CERT_FILE": str(server.cert)},
            "--via",
            "stream",
            "--ids",
            "sc-05",
        )
    assert server.problems == [] and records[0]["error"] is None
    first, resumed = server.sessions
    # resumed from Turn 1's handle, Turn 2 asked again next (a last turn may follow: the stream's trailing
    # activity, ended when the session closes)
    assert resumed["resumed_from"] == "handle-1" and resumed["history"][:2] == [1, 3]
    assert resumed["activity"][:2] == ["start", "end"] and resumed["audio_bytes"] > 16000  # Turn 2's speech again
    assert resumed["frames"] >= 1  # and its frame


@pytest.mark.whisper
def test_a_staleness_sweep_on_a_realtime_api_reports_the_age_of_the_newest_frame_it_had(tmp_path):
    with FakeOpenAIRealtime() as server:
        records = _bench(
            "openai-realtime:gpt-realtime",
            server.base_url,
            tmp_path / "sweep",
            {"OPENAI_API_KEY": SECRET},
            "--via",
            "stream",
            "--ids",
            "sc-01",
            "--synthetic-frames",
            "--staleness",
            "0,1500",
        )
    ages = {r["staleness_ms"]: r["turns"][1]["metrics"]["last_frame_age_s"] for r in records}
    assert sorted(ages) == [0, 1500] and all(age is not None for age in ages.values())
    summary = json.loads((tmp_path / "sweep" / "summary.json").read_text())
    assert {gap: row["frame_age_p50_s"] for gap, row in summary["by_staleness"]["baseline"].items()} == {
        str(gap): age for gap, age in ages.items()
    }
    assert "newest frame's age at the end of speech" in (tmp_path / "sweep" / "findings.md").read_text()
