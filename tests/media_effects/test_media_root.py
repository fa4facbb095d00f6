"""`bench --via stream --media-root DIR`: the user's own recordings instead of media/."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from media_effects.media_library import register
from media_effects.tts import synthesize
from perception.quality import word_error_rate
from tests.fake_openai import FakeOpenAI

OWN_WORDS = "Could you tell me whether the green kettle has boiled yet"


@pytest.mark.whisper
def test_a_stream_run_takes_speech_from_the_media_root(tmp_path):
    root = tmp_path / "mine"
    recording = synthesize(OWN_WORDS, root / "sc-01" / "turn_1.wav")
    register(root, recording, "recorded", "a test recording")
    with FakeOpenAI(reply="The kettle is still cold.") as server:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmark",
                "bench",
                "--via",
                "stream",
                "--model",
                "openai:fake",
                "--base-url",
                server.base_url,
                "--judge-family",
                "lexical",
                "--conditions",
                "baseline",
                "--ids",
                "sc-01",
                "--media-root",
                str(root),
                "--output-dir",
                str(tmp_path / "run"),
            ],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "OPENAI_API_KEY": ""},
        )
    assert done.returncode == 0, done.stderr
    [record] = [json.loads(line) for line in (tmp_path / "run" / "transcripts.jsonl").read_text().splitlines()]
    heard = record["turns"][0]["input"]["speech"]
    assert word_error_rate(OWN_WORDS, heard) <= 0.5, heard  # the recording, not the scenario's line
    assert record["turns"][0]["glasses"]["speech_media"] == "media"
    assert record["turns"][1]["glasses"]["speech_media"] == "tts"  # no turn_2 recording there: synthesized now
    assert "streaming server on ws://127.0.0.1:" in (tmp_path / "run" / "logs" / "server.log").read_text()
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["media_root"] == str(root.resolve())


def test_media_root_must_exist_and_needs_the_stream(tmp_path):
    base = [sys.executable, "-m", "benchmark", "bench", "--ids", "sc-01", "--output-dir", str(tmp_path / "r")]
    done = subprocess.run(
        [*base, "--via", "stream", "--media-root", str(tmp_path / "nowhere")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "no such directory" in done.stderr
    done = subprocess.run([*base, "--media-root", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "need --via stream" in done.stderr
    assert not (tmp_path / "r").exists()
