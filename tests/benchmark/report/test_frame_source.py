"""Issue 50: findings.md, the viewer and the Perception table name where a run's camera frames came from
(`pictograph`, `synthetic`, `recorded`, `none`), and say when the scene describer could not read the
drawn frames it was given, with what reads them; `wearsim simulate` says so before it plays."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmark.report.findings import render_findings
from benchmark.report.viewer import figures_html
from benchmark.scoring import build_summary
from benchmark.scoring.summary_view import RunSummary
from benchmark.scoring.trials import TrialSet
from core.candidate import Reply
from core.judge import Verdict
from core.records import GlassesFacts, TrialRecord, TurnInput, TurnMetrics, TurnResult

RECORD_SOURCE = {"pictograph": "pictograph", "synthetic": "synthetic", "recorded": "recording", "none": None}


def stream_record(sid: str, frames: str, camera: str = "perceived") -> TrialRecord:
    def turn(n: int) -> TurnResult:
        source = RECORD_SOURCE[frames] if n < 3 else None
        sent = TurnInput(
            turn=n,
            camera_block="a block",
            speech="words",
            camera_source=camera if source else "authored",
            speech_source="perceived",
        )
        return TurnResult(
            turn=n,
            input=sent,
            reply=Reply(text="r", model="m"),
            metrics=TurnMetrics(reply_done=1.0),
            glasses=GlassesFacts(frames_source=source),
        )

    return TrialRecord(
        scenario_id=sid,
        condition="baseline",
        trial=0,
        target_context="current",
        cue_type="object_in_hand",
        turn_2_judge=Verdict(label="current", rationale="", judge="test"),
        turns=(turn(1), turn(2), turn(3)),
    )


def summary_of(records, **manifest) -> dict:
    return build_summary(TrialSet(trials=tuple(records), source=Path("t.jsonl")), manifest)


def run(frames: str, describer: str = "opencv", camera: str = "perceived") -> dict:
    return summary_of(
        [stream_record(f"sc-0{n}", frames, camera) for n in range(1, 4)],
        via="stream",
        describer=describer,
        pictograph_frames=frames == "pictograph",
        synthetic_frames=frames == "synthetic",
    )


def head(findings: str) -> str:
    return findings[: findings.index("## ")]


@pytest.mark.parametrize(
    "frames, words",
    [
        ("pictograph", "Frames: pictograph in 6 of 6 camera turns (each turn's scene spec drawn as pictures"),
        ("synthetic", "Frames: synthetic in 6 of 6 camera turns (the scenario's camera text drawn on a grey card)"),
        ("recorded", "Frames: recorded in 6 of 6 camera turns (recordings from the media folder)"),
        (
            "none",
            "Frames: none in 6 of 6 camera turns (no frame of its own: the camera block was the scenario's "
            "written text)",
        ),
    ],
)
def test_findings_and_the_viewer_name_the_frame_source(frames, words):
    # pictographs go to a realtime API, which looks at them; synthetic frames to `authored`, which reads them
    summary = run(
        frames,
        describer="authored" if frames == "synthetic" else "opencv",
        camera="media" if frames == "pictograph" else "perceived",
    )
    findings = render_findings(RunSummary.from_json(summary))
    assert words in head(findings)
    assert words in figures_html(RunSummary.from_json(summary)).replace("&#x27;", "'")
    perception = findings[findings.index("## Perception") :]
    assert f"| `{frames}` |" in perception and perception.count("| 6 |") >= 1
    assert "cannot read" not in findings  # each describer here reads what it was given
    assert "perceived (from media)" not in findings


def test_a_text_proxy_run_has_no_frames():
    text = TrialRecord(
        scenario_id="sc-01",
        condition="baseline",
        trial=0,
        target_context="current",
        cue_type="object_in_hand",
        turn_2_judge=Verdict(label="current", rationale="", judge="t"),
    )
    summary = summary_of([text], via="direct")
    words = "Frames: none (the text proxy: every camera block was the scenario's written text)."
    assert words in head(render_findings(RunSummary.from_json(summary))) and words in figures_html(
        RunSummary.from_json(summary)
    ).replace("&#x27;", "'")


@pytest.mark.parametrize("describer", ["opencv", "authored", "ocr"])
def test_no_offline_describer_reads_a_pictograph_and_findings_say_what_does(describer):
    summary = run("pictograph", describer=describer)
    page = figures_html(RunSummary.from_json(summary))
    assert "`" not in page and f"The <code>{describer}</code> describer" in page  # code spans, no raw Markdown
    for text in (
        head(render_findings(RunSummary.from_json(summary))),
        page.replace("<code>", "`").replace("</code>", "`"),
    ):
        assert f"The `{describer}` describer cannot read pictograph frames" in text
        assert "a realtime API (`--model openai-realtime:gpt-realtime-2`)" in text
        assert "a vision model as the describer (`--describer openai:MODEL`)" in text
    assert f"perceived (Whisper; describer `{describer}`)" in render_findings(RunSummary.from_json(summary))


def test_no_describer_note_when_a_realtime_api_saw_the_pictographs_or_a_vision_model_described_them():
    assert "cannot read" not in render_findings(RunSummary.from_json(run("pictograph", camera="media")))
    assert "cannot read" not in render_findings(RunSummary.from_json(run("pictograph", describer="openai:gpt-4o-mini")))


def test_opencv_cannot_read_synthetic_frames_and_findings_say_which_describers_do():
    findings = head(render_findings(RunSummary.from_json(run("synthetic", describer="opencv"))))
    assert "The `opencv` describer cannot read synthetic frames" in findings
    assert "`--describer authored` (the text from the frame's comment) or `--describer ocr`" in findings


def test_simulate_with_pictographs_says_the_describer_cannot_read_them(capsys):
    from benchmark.cli import main

    # no server answers on port 9: the session fails after the note is printed
    assert (
        main(
            [
                "simulate",
                "sc-01",
                "--pictograph-frames",
                "--describer",
                "authored",
                "--server",
                "ws://127.0.0.1:9",
                "--fast",
            ]
        )
        != 0
    )
    err = capsys.readouterr().err
    assert (
        "note: The `authored` describer cannot read pictograph frames (it finds no written text in them and "
        "falls back to opencv's colours and shapes)" in err
    )


def test_bench_says_before_it_plays_that_the_describer_cannot_read_the_drawn_frames():
    from benchmark.cli.bench import _frames_note
    from benchmark.run.settings import StreamSettings
    from simulator.settings import GlassesSettings
    from streaming.wire import SessionConfig

    class Settings:
        def __init__(self, describer: str, pictograph_frames: bool = False, synthetic_frames: bool = False):
            self.stream = StreamSettings(pictograph_frames=pictograph_frames)
            self.glasses = GlassesSettings(hello=SessionConfig(describer=describer), synthetic_frames=synthetic_frames)

    note = _frames_note(Settings(pictograph_frames=True, describer="opencv"), "local")
    assert note.startswith("note: The `opencv` describer cannot read pictograph frames")
    assert _frames_note(Settings(pictograph_frames=True, describer="opencv"), "openai-realtime:gpt-realtime-2") is None
    assert _frames_note(Settings(synthetic_frames=True, describer="authored"), "local") is None
    assert _frames_note(Settings(synthetic_frames=True, describer="opencv"), "local").startswith(
        "note: The `opencv` describer cannot read synthetic frames"
    )


def test_a_summary_made_before_the_count_names_the_frames_from_the_manifest_and_never_calls_a_stream_run_text():
    summary = run("pictograph", camera="media")
    del summary["perception"]["frames"]
    assert "Frames: pictograph (each turn's scene spec drawn as pictures" in head(
        render_findings(RunSummary.from_json(summary))
    )
    summary["manifest"] = {}  # a stream summary whose manifest says nothing
    assert "Frames:" not in head(render_findings(RunSummary.from_json(summary)))
