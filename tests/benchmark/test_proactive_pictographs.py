"""Issue 48: pictograph frames on the proactive subset. Every proactive scene has a scene spec
(`benchmark/v1/scenes/proactive/<id>.json`, one per scene in the order played) whose pictures are in
the picture set; `bench --subset proactive --pictograph-frames` against the OpenAI Realtime
conformance server sends the API exactly the frames the record lists, each one a scene's pictograph,
and the record says the frames were pictographs."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys

import pytest

from benchmark.cli.bench_checks import pictograph_problem
from benchmark.cli.proactive_checks import timelines
from core.proactive_scenario import load_proactive
from core.scenes import read_timeline
from media_effects.pictures import unknown_pictures
from tests.fake_realtime import TEST_KEY, FakeOpenAIRealtime
from tests.paths import ROOT

BANK = ROOT / "benchmark" / "v1"


def test_every_proactive_scene_has_a_spec_whose_pictures_are_in_the_set():
    from benchmark.cli.proactive_checks import proactive_bank
    from core.scenario import load_bank

    bank = proactive_bank(load_bank(BANK), None, None)
    specs = timelines(bank)
    scenarios = load_proactive(BANK / "proactive.json")
    assert sorted(specs) == sorted(s.scenario_id for s in scenarios)
    assert all(len(specs[s.scenario_id].scenes) == len(s.scenes) for s in scenarios)
    assert unknown_pictures(specs) == [] and pictograph_problem(bank, False) is None


def test_a_timeline_of_the_wrong_length_is_named(tmp_path):
    folder = tmp_path / "proactive"
    folder.mkdir()
    (folder / "pa-01.json").write_text(json.dumps({"scenario_id": "pa-01", "timeline": []}))
    try:
        read_timeline(tmp_path, "pa-01", 3)
    except ValueError as exc:
        assert "must list the scenario's 3 scenes" in str(exc)
    else:
        raise AssertionError("a timeline of 0 scenes for 3 was read")


@pytest.mark.whisper
def test_pictograph_frames_on_the_proactive_subset_reach_a_realtime_api_as_recorded(tmp_path):
    from media_effects.pictograph import pictograph_frame

    run_dir = tmp_path / "picto"
    with FakeOpenAIRealtime(reply="[silent]") as server:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmark",
                "bench",
                "--model",
                "openai-realtime:gpt-realtime",
                "--base-url",
                server.base_url,
                "--judge-family",
                "lexical",
                "--conditions",
                "baseline",
                "--via",
                "stream",
                "--subset",
                "proactive",
                "--ids",
                "pq-01",
                "--proactive",
                "every:10",
                "--pictograph-frames",
                "--output-dir",
                str(run_dir),
            ],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=ROOT,
            env={**os.environ, "OPENAI_API_KEY": TEST_KEY},
        )
        sessions = server.sessions
    assert done.returncode == 0, done.stderr
    [record] = [json.loads(line) for line in (run_dir / "transcripts.jsonl").read_text().splitlines()]
    watching = record["watching"]
    assert record["error"] is None and watching["frames_source"] == "pictograph"
    images = [
        base64.b64decode(part["image_url"].partition(",")[2])
        for s in sessions
        for item in s["items"]
        for part in item["content"]
        if part["type"] == "input_image"
    ]
    assert len(images) == len(watching["frames_sent_ms"]) > 0
    drawn = {pictograph_frame(scene) for scene in read_timeline(BANK / "scenes", "pq-01", 2)}
    assert set(images) == drawn  # every frame the API got is one of the scenes' pictographs, and each was shown
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["pictograph_frames"] is True and len(manifest["scenes_sha256"]) == 64
