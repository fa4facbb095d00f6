"""The realtime APIs' spoken replies kept as audio: wearsim bench --output-audio saves each reply
and its voice-to-voice gap, wearsim simulate saves each reply as a WAV next to its session log and
prints a summary per turn, and a reply that cannot be saved stops the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.candidates.test_realtime import _bench
from tests.fake_realtime import TEST_KEY as SECRET
from tests.fake_realtime import FakeOpenAIRealtime


def _spoken_reply(lead_s: float) -> bytes:
    """A recorded bank utterance as a spoken reply: `lead_s` of silence, then speech, PCM16 24 kHz."""
    import numpy as np

    from media_effects.audio import decode_audio, float_to_pcm16, resample_pcm16
    from media_effects.media import MEDIA_ROOT

    speech = decode_audio(MEDIA_ROOT / "ct-19" / "turn_2.wav")
    return resample_pcm16(
        float_to_pcm16(np.concatenate([np.zeros(int(lead_s * 16000), np.float32), speech])), 16000, 24000
    )


def _check_spoken(run_dir, records, lead_s):
    import wave

    for record in records:
        assert record["error"] is None
        for turn in record["turns"]:
            reply = turn["reply"]
            with wave.open(str(run_dir / reply["audio_file"])) as saved:
                assert (saved.getframerate(), saved.getnchannels(), saved.getsampwidth()) == (24000, 1, 2)
                assert saved.getnframes() >= 24000 * 2  # the whole reply was kept
            # voice to voice: the first audio byte plus the speech's onset in it (the VAD finds it)
            assert lead_s <= reply["first_voice_s"] - reply["first_audio_s"] <= lead_s + 0.15
            assert reply["text"] == "It is the one in your hand now."  # the API's transcript is the reply


@pytest.mark.whisper
def test_output_audio_saves_each_spoken_reply_and_its_voice_to_voice_gap(gemini_env, tmp_path):
    speech = _spoken_reply(0.4)
    with FakeOpenAIRealtime(speech=speech) as server:
        direct = _bench(
            "openai-realtime:gpt-realtime",
            server.base_url,
            tmp_path / "direct",
            {"OPENAI_API_KEY": SECRET},
            "--output",
            "audio",
            "--limit",
            "2",
        )
        stream = _bench(
            "openai-realtime:gpt-realtime",
            server.base_url,
            tmp_path / "stream",
            {"OPENAI_API_KEY": SECRET},
            "--output",
            "audio",
            "--via",
            "stream",
            "--limit",
            "1",
        )
        assert {s["session"]["output_modalities"][0] for s in server.sessions} == {"audio"}
    with gemini_env(speech=speech) as server:
        gemini = _bench(
            "gemini-live:gemini-live-x",
            server.base_url,
            tmp_path / "gemini",
            {"SSL_CERT_FILE": str(server.cert)},
            "--output",
            "audio",
            "--via",
            "stream",
            "--limit",
            "1",
        )
        assert {tuple(s["setup"]["generationConfig"]["responseModalities"]) for s in server.sessions} == {("AUDIO",)}
    for run_dir, records in (("direct", direct), ("stream", stream), ("gemini", gemini)):
        _check_spoken(tmp_path / run_dir, records, 0.4)
    assert json.loads((tmp_path / "stream" / "manifest.json").read_text())["output"] == "audio"
    findings = (tmp_path / "stream" / "findings.md").read_text()
    assert "voice to voice" in findings


def test_output_audio_needs_a_realtime_model(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmark",
            "bench",
            "--model",
            "replay:x.jsonl",
            "--output",
            "audio",
            "--output-dir",
            str(tmp_path / "run"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "--output audio needs a realtime model" in done.stderr
    assert not (tmp_path / "run").exists()


@pytest.mark.clock
def test_simulate_saves_each_spoken_reply_as_a_wav_next_to_the_session_log(tmp_path):
    import wave

    speech = _spoken_reply(0.2)
    with FakeOpenAIRealtime(speech=speech) as server:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmark",
                "simulate",
                "sc-05",
                "--model",
                "openai-realtime:gpt-realtime",
                "--output",
                "audio",
                "--fast",
                "--log",
                str(tmp_path / "sc-05.json"),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "OPENAI_API_KEY": SECRET, "OPENAI_BASE_URL": server.base_url},
        )
    assert done.returncode == 0, done.stderr
    for turn in (1, 2):
        with wave.open(str(tmp_path / f"sc-05-turn{turn}.wav")) as saved:
            assert saved.getframerate() == 24000 and saved.getnframes() == len(speech) // 2
    log = json.loads((tmp_path / "sc-05.json").read_text())
    pieces = [e for e in log["events"] if e["type"] == "assistant.audio"]
    assert pieces and all(e["audio"].endswith(" bytes") for e in pieces)  # sizes in the log, not the audio
    assert SECRET not in (tmp_path / "sc-05.json").read_text() and "[assistant.audio]" not in done.stdout


@pytest.mark.clock
def test_simulate_prints_a_readable_summary_per_turn_and_a_verdict_and_json_only_when_asked(tmp_path):
    def simulate(*extra):
        with FakeOpenAIRealtime(reply="It is the red mug.") as server:
            return subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "benchmark",
                    "simulate",
                    "sc-05",
                    "--model",
                    "openai-realtime:gpt-realtime",
                    "--fast",
                    "--log",
                    str(tmp_path / "sc-05.json"),
                    *extra,
                ],
                capture_output=True,
                text=True,
                timeout=300,
                env={**os.environ, "OPENAI_API_KEY": SECRET, "OPENAI_BASE_URL": server.base_url},
            )

    done = simulate()
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for needle in (
        "Turn 1\n  heard:",
        "Turn 2\n  heard:",
        "  camera:",
        "  reply:   It is the red mug.",
        "latency from the end of speech: transcript",
        "Verdict (lexical judge",
        "  Turn 2: ",
    ):
        assert needle in out, out
    assert not any(line.startswith("{") or line.startswith("[") for line in out.splitlines())
    as_json = simulate("--json")
    events = [json.loads(line) for line in as_json.stdout.splitlines() if line.strip()]
    assert {"transcript.final", "camera.block", "assistant.done", "metrics"} <= {e["type"] for e in events}
    assert "Verdict" not in as_json.stdout


def test_a_spoken_reply_that_cannot_be_saved_stops_the_run_and_keeps_what_was_written(tmp_path):
    from benchmark.run.errors import TranscriptWriteError
    from benchmark.run.reply_audio import save_reply_audio
    from core.candidate import Reply
    from core.records import TrialRecord, TurnInput, TurnResult

    record = TrialRecord(
        scenario_id="sc-01",
        condition="baseline",
        trial=0,
        target_context="current",
        cue_type="object_in_hand",
        turns=(
            TurnResult(
                turn=1,
                input=TurnInput(turn=1, camera_block=None, speech="hi", camera_source=None, speech_source="authored"),
                reply=Reply(text="hello", model="m", audio=b"\x01\x00" * 2400),
            ),
        ),
    )
    (tmp_path / "audio").write_text("a file where the audio directory should be")
    with pytest.raises(TranscriptWriteError, match="cannot write .*audio/baseline/sc-01-t0-turn1.wav.*--resume"):
        save_reply_audio(tmp_path, record)
    assert (tmp_path / "audio").read_text() == "a file where the audio directory should be"
