"""`wearsim bench --via stream --end-of-turn silence|model|text`: the rule each session's hello asks for, carried
to the server, recorded in the manifest (a resume key) and visible in the turns it ended; refused on the
text proxy and, before anything is written, when the in-process server has no end-of-turn model."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from tests.fake_openai import FakeOpenAI
from tests.paths import ROOT


def _bench(run_dir, *extra, env=None):
    with FakeOpenAI(reply="The one in your hand now.") as server:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmark",
                "bench",
                "--model",
                "openai:fake",
                "--base-url",
                server.base_url,
                "--judge-family",
                "lexical",
                "--conditions",
                "baseline",
                "--limit",
                "1",
                "--output-dir",
                str(run_dir),
                *extra,
            ],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "OPENAI_API_KEY": "", **(env or {})},
        )


def _turn_ends(run_dir) -> list[dict]:
    records = [json.loads(line) for line in (run_dir / "transcripts.jsonl").read_text().splitlines()]
    assert records and all(r["error"] is None for r in records)
    return [turn["turn_end"] for r in records for turn in r["turns"]]


def _manifest(run_dir) -> dict:
    return json.loads((run_dir / "manifest.json").read_text())


@pytest.mark.slow
def test_end_of_turn_needs_the_stream(tmp_path):
    done = _bench(tmp_path / "direct", "--end-of-turn", "model")
    assert done.returncode == 2 and "--end-of-turn" in done.stderr and "need --via stream" in done.stderr
    assert not (tmp_path / "direct").exists()


@pytest.mark.whisper
def test_a_missing_end_of_turn_model_stops_the_run_before_it_starts(tmp_path):
    done = _bench(
        tmp_path / "run",
        "--via",
        "stream",
        "--end-of-turn",
        "model",
        env={"WEARSIM_TURN_MODEL": str(tmp_path / "no-such.onnx")},
    )
    assert done.returncode == 2 and "--end-of-turn model" in done.stderr and "WEARSIM_TURN_MODEL" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "run").exists()


@pytest.mark.whisper
def test_model_end_of_turn_reaches_the_server_and_the_manifest_and_a_resume_keeps_it(tmp_path):
    run_dir = tmp_path / "model"
    done = _bench(run_dir, "--via", "stream", "--end-of-turn", "model")
    assert done.returncode == 0, done.stderr
    assert _manifest(run_dir)["end_of_turn"] == "model"
    ends = _turn_ends(run_dir)
    # the server asked the model in every turn's pause, and it ended at least one turn before the fixed silence
    assert all(end["model_probability"] is not None for end in ends), ends
    assert any(end["rule"] == "model" for end in ends), ends
    manifest = (run_dir / "manifest.json").read_bytes()
    again = _bench(run_dir, "--via", "stream", "--resume")  # the default rule now: another run
    assert again.returncode == 2 and "different end_of_turn" in again.stderr, again.stderr
    assert (run_dir / "manifest.json").read_bytes() == manifest


@pytest.mark.whisper
def test_the_default_is_the_fixed_silence(tmp_path):
    run_dir = tmp_path / "silence"
    done = _bench(run_dir, "--via", "stream")
    assert done.returncode == 0, done.stderr
    assert _manifest(run_dir)["end_of_turn"] == "silence"
    ends = _turn_ends(run_dir)
    assert ends and all(end["rule"] != "model" and end["model_probability"] is None for end in ends), ends
    direct = _bench(tmp_path / "direct")
    assert direct.returncode == 0, direct.stderr
    assert _manifest(tmp_path / "direct")["end_of_turn"] is None


def test_a_proactive_session_asks_for_the_same_rule(monkeypatch):
    """A proactive trial's opening line is a user turn too: its hello carries the run's rule."""
    from benchmark.conversations.watch import WatchConversation
    from core.proactive_scenario import load_proactive
    from core.scenario import load_bank
    from simulator.settings import GlassesSettings
    from streaming.wire import SessionConfig

    hellos = []

    class Refused(Exception):
        pass

    class Client:  # stands in for the glasses' socket: keeps the hello and goes no further
        def __init__(self, url, **_options):
            pass

        async def connect(self, config):
            hellos.append(config)
            raise Refused

    monkeypatch.setattr("simulator.client.GlassesClient", Client)
    scenario = next(s for s in load_proactive(ROOT / "benchmark/v1/proactive.json") if s.opening_user)
    condition = load_bank().condition("baseline")
    for asked, sent in (({"end_of_turn": "model"}, "model"), ({}, "silence")):
        watch = WatchConversation(
            scenario,
            condition,
            GlassesSettings(url="ws://x", hello=SessionConfig(backend="openai:fake", **asked)),
            strategy="change",
        )
        with pytest.raises(Refused):
            asyncio.run(watch.watch())
        assert hellos[-1].end_of_turn == sent


@pytest.mark.whisper
def test_text_end_of_turn_reaches_the_server_and_the_manifest(tmp_path):
    run_dir = tmp_path / "text"
    done = _bench(run_dir, "--via", "stream", "--end-of-turn", "text", "--speed", "1")  # Whisper keeps up in real time
    assert done.returncode == 0, done.stderr
    assert _manifest(run_dir)["end_of_turn"] == "text"
    ends = _turn_ends(run_dir)
    assert {end["rule"] for end in ends} <= {"text", "silence"} and any(end["rule"] == "text" for end in ends), ends
    assert all(end["model_probability"] is None for end in ends)


@pytest.mark.slow
def test_text_end_of_turn_is_refused_for_a_realtime_model_before_anything_is_written(tmp_path):
    run_dir = tmp_path / "rt"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmark",
            "bench",
            "--model",
            "openai-realtime:gpt-realtime-2",
            "--via",
            "stream",
            "--end-of-turn",
            "text",
            "--limit",
            "1",
            "--output-dir",
            str(run_dir),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "OPENAI_API_KEY": "sk-test-never-sent"},
    )
    assert done.returncode == 2 and "--end-of-turn text" in done.stderr and "chat models" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and not run_dir.exists()
