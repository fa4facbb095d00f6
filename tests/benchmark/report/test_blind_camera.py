"""Issue 48: no blind runs. `bench --via stream --subset proactive` with no `--describer` runs with
`authored` (the frames are drawn camera text) and says so; a describer that cannot read its frames
(opencv or ocr on synthetic or pictograph frames), or one whose camera text is the same for every
scene of a trial, is named blind in the first lines and in the headline."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmark.cli import bench, main
from benchmark.report.camera_text import camera_text_note
from benchmark.report.proactive_findings import proactive_headline, render_proactive_findings
from benchmark.scoring import build_summary
from benchmark.scoring.blind import blind_camera
from benchmark.scoring.summary_view import RunSummary
from benchmark.scoring.trials import TrialSet
from core.candidate import Reply
from core.records import TrialRecord, TurnInput, TurnResult
from core.watching import Probe, Watching


@pytest.fixture
def started(monkeypatch):
    """`wearsim bench` up to its first cell: the settings it would run with."""
    seen = {}

    def no_cells(bank, settings, run_dir, prepared, base_url):
        from benchmark.run.runner import RunCounts

        seen["settings"] = settings
        return RunCounts(empty_shard="(the test stops before the first cell)")

    monkeypatch.setattr(bench, "_run_cells", no_cells)
    return seen


def _bench(tmp_path, *flags) -> list[str]:
    return [
        "bench",
        "--via",
        "stream",
        "--subset",
        "proactive",
        "--limit",
        "3",
        "--judge-family",
        "lexical",
        "--output-dir",
        str(tmp_path / "run"),
        *flags,
    ]


def test_a_proactive_run_with_no_describer_reads_the_drawn_text_and_says_so(tmp_path, started, capsys):
    assert main(_bench(tmp_path)) == 0
    err = capsys.readouterr().err
    assert started["settings"].glasses.hello.describer == "authored"
    first = err.splitlines()[:3]
    assert any(line.startswith("describer authored (no --describer given)") for line in first), err
    assert "BLIND" not in err


def test_a_proactive_run_with_a_describer_that_cannot_read_drawn_frames_says_so_first(tmp_path, started, capsys):
    assert main(_bench(tmp_path, "--describer", "opencv")) == 0
    first = capsys.readouterr().err.splitlines()[:3]
    assert any(line.startswith("BLIND CAMERA: the opencv describer cannot read synthetic frames") for line in first)


def test_a_qa_stream_run_on_synthetic_frames_with_the_default_describer_is_named_blind(tmp_path, started, capsys):
    args = [
        "bench",
        "--via",
        "stream",
        "--synthetic-frames",
        "--limit",
        "1",
        "--judge-family",
        "lexical",
        "--output-dir",
        str(tmp_path / "qa"),
    ]
    assert main(args) == 0
    assert started["settings"].glasses.hello.describer == "opencv"  # a Q&A run keeps its default
    assert "BLIND CAMERA: the opencv describer cannot read synthetic frames" in capsys.readouterr().err


MANIFEST = {"via": "stream", "candidate_model": "local", "proactive": ["change"], "judge_family": "lexical"}


def _watched(camera_of) -> TrialRecord:
    probes = tuple(
        Probe(n=n, asked_ms=t, frame_ms=t, text="[silent]", silent=True, scene=scene, camera=camera_of(scene))
        for n, (t, scene) in enumerate(((2_000, 0), (14_000, 1), (24_000, 1)), start=1)
    )
    watching = Watching(
        strategy="change",
        kind="quiet",
        stream_ms=30_000,
        scene_starts_ms=(0, 12_000),
        onset_ms=None,
        window_end_ms=None,
        expected=(),
        probes=probes,
    )
    return TrialRecord(
        scenario_id="pq-01",
        condition="baseline",
        trial=0,
        target_context="stay_quiet",
        cue_type="x",
        subset="proactive",
        proactive="change",
        watching=watching,
    )


def test_the_headline_names_a_blind_describer_from_the_manifest():
    summary = build_summary(
        TrialSet(trials=(_watched(lambda s: f"scene {s}"),), source=Path("t.jsonl")),
        {**MANIFEST, "describer": "opencv"},
    )
    assert summary["blind_camera"]["reason"] == "the opencv describer cannot read synthetic frames"
    assert proactive_headline(RunSummary.from_json(summary)).startswith(
        "Blind camera: the opencv describer cannot read synthetic frames"
    )
    assert "**Blind camera:" in render_proactive_findings(RunSummary.from_json(summary))
    authored = build_summary(
        TrialSet(trials=(_watched(lambda s: f"scene {s}"),), source=Path("t.jsonl")),
        {**MANIFEST, "describer": "authored"},
    )
    assert authored["blind_camera"] is None and "Blind" not in proactive_headline(RunSummary.from_json(authored))


def test_a_describer_whose_text_is_the_same_for_every_scene_is_blind():
    same = "Mostly white. The view is bright and sharp."
    summary = build_summary(
        TrialSet(trials=(_watched(lambda s: same),), source=Path("t.jsonl")),
        {**MANIFEST, "describer": "openai:gpt-4o-mini"},
    )
    assert summary["blind_camera"] == {
        "reason": "the camera text was the same for every scene in 1 of 1 trials",
        "same_text": 1,
        "trials": 1,
    }
    assert "Blind camera: the camera text was the same for every scene" in proactive_headline(
        RunSummary.from_json(summary)
    )


def test_a_qa_trial_whose_two_scenes_read_alike_counts_and_a_realtime_api_is_never_blind():
    def trial(sid, first, second):
        turns = tuple(
            TurnResult(
                turn=n,
                input=TurnInput(
                    turn=n, camera_block=text, speech="words", camera_source="perceived", speech_source="perceived"
                ),
                reply=Reply(text="r", model="m"),
            )
            for n, text in ((1, first), (2, second))
        )
        return TrialRecord(
            scenario_id=sid,
            condition="baseline",
            trial=0,
            target_context="current",
            cue_type="object_in_hand",
            turns=turns,
        )

    records = [
        trial("s1", "a grey room", "a grey room"),
        trial("s2", "a grey room", "a grey room"),
        trial("s3", "a desk", "a kitchen"),
    ]
    block = blind_camera(records, {"via": "stream", "describer": "openai:m", "candidate_model": "local"})
    assert block["reason"] == "the camera text was the same for every scene in 2 of 3 trials"
    assert blind_camera(records[2:], {"via": "stream", "describer": "openai:m", "candidate_model": "local"}) is None
    realtime = {
        "via": "stream",
        "describer": "opencv",
        "synthetic_frames": True,
        "candidate_model": "openai-realtime:gpt-realtime",
    }
    assert blind_camera([], realtime) is None
    assert "Blind camera" in camera_text_note(RunSummary.from_json({"blind_camera": block}))


def test_the_viewer_headline_of_a_blind_qa_run_says_so():
    from benchmark.report.viewer import page_headline

    turns = tuple(
        TurnResult(
            turn=n,
            input=TurnInput(
                turn=n,
                camera_block="Mostly white.",
                speech="words",
                camera_source="perceived",
                speech_source="perceived",
            ),
            reply=Reply(text="r", model="m"),
        )
        for n in (1, 2)
    )
    record = TrialRecord(
        scenario_id="s1",
        condition="baseline",
        trial=0,
        target_context="current",
        cue_type="object_in_hand",
        turns=turns,
    )
    summary = build_summary(
        TrialSet(trials=(record,), source=Path("t.jsonl")),
        {"via": "stream", "describer": "opencv", "synthetic_frames": True, "candidate_model": "local"},
    )
    assert "Blind camera: the opencv describer cannot read synthetic frames" in page_headline(
        RunSummary.from_json(summary)
    )
