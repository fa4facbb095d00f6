"""The staleness sweep: Turn 2 speech a set gap after the scene change,
synthetic frames that carry their authored text, and the sweep's table and plot."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from benchmark.scoring import metrics
from benchmark.scoring.summary_view import RunSummary
from core.judge import Verdict
from core.records import TrialRecord
from core.scenario import load_bank
from media_effects.frames import decode_jpeg, encode_jpeg
from media_effects.synthetic import synthetic_frame
from perception.describers import make_describer
from simulator.timeline import plan_turn
from tests.fake_openai import FakeOpenAI

BANK = load_bank()


def test_a_synthetic_frame_carries_its_authored_text_for_the_authored_describer():
    text = "A kettle on the left burner, steam rising; a mug by the sink."
    jpeg = synthetic_frame(text)
    assert decode_jpeg(jpeg).shape == (480, 640, 3)  # still a valid image
    described = asyncio.run(make_describer("authored").describe(jpeg))
    assert described.text == text and described.describer == "authored"
    recorded = encode_jpeg(np.zeros((48, 64, 3), np.uint8))  # no authored text inside: described from pixels
    fallback = asyncio.run(make_describer("authored").describe(recorded))
    assert fallback.describer == "opencv" and fallback.text != text


def test_turn_2_speech_starts_the_gap_after_the_first_frame():
    scenario = BANK.get("sc-01")  # no recorded frames: synthetic ones are drawn
    for gap in (0, 750):
        plan = plan_turn(scenario, 2, 10_000, lead_ms=gap, synthetic_frames=True)
        frames = [i for i in plan.items if i.kind == "frame"]
        audio = [i for i in plan.items if i.kind == "audio"]
        assert plan.synthetic_frames and frames[0].t_ms == 10_000
        samples = np.frombuffer(b"".join(i.payload for i in audio), "<i2")
        first_sound = audio[0].t_ms + int(np.flatnonzero(samples)[0]) / 16  # 16 samples per ms
        assert gap <= first_sound - 10_000 <= gap + 40  # speech begins after the gap (the file's own lead aside)
    assert not plan_turn(scenario, 2, 0).has_frames  # without the flag, no frames at all


def _trial(gap, target, label, n):
    return TrialRecord(
        scenario_id=f"s{n}",
        condition="baseline",
        trial=0,
        target_context=target,
        cue_type="object_in_hand",
        staleness_ms=gap,
        turn_2_judge=Verdict(label=label, rationale="", judge="test"),
    )


def test_staleness_metrics_by_hand():
    """Gap 0: current->prior, current->current, prior->prior: accuracy 2/3; earlier
    scene among non-prior targets 1/2. Gap 1000: two current->current: 2/2 and 0/2."""
    trials = [
        _trial(0, "current", "prior", 1),
        _trial(0, "current", "current", 2),
        _trial(0, "prior", "prior", 3),
        _trial(1000, "current", "current", 1),
        _trial(1000, "current", "current", 2),
    ]
    sweep = metrics.staleness(trials)
    assert list(sweep) == ["0", "1000"]
    assert (sweep["0"]["accuracy"]["k"], sweep["0"]["accuracy"]["n"]) == (2, 3)
    assert (sweep["0"]["earlier_scene"]["k"], sweep["0"]["earlier_scene"]["n"]) == (1, 2)
    assert (sweep["1000"]["accuracy"]["k"], sweep["1000"]["earlier_scene"]["k"]) == (2, 0)
    assert _trial(0, "current", "prior", 1).cell != _trial(1000, "current", "prior", 1).cell


def _bench(run_dir, *extra):
    with FakeOpenAI(reply="That slim screwdriver in your hand now.") as server:
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
                "2",
                "--output-dir",
                str(run_dir),
                *extra,
            ],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "OPENAI_API_KEY": ""},
        )


@pytest.mark.whisper
def test_the_sweep_runs_end_to_end_with_its_table_and_plot(tmp_path):
    run_dir = tmp_path / "sweep"
    args = ["--via", "stream", "--staleness", "1000,0", "--synthetic-frames", "--describer", "authored"]
    done = _bench(run_dir, *args)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (run_dir / "transcripts.jsonl").read_text().splitlines()]
    assert sorted((r["scenario_id"], r["staleness_ms"]) for r in records) == [
        ("sc-01", 0),
        ("sc-01", 1000),
        ("sc-02", 0),
        ("sc-02", 1000),
    ]
    for record in records:
        assert record["error"] is None
        turn_2 = record["turns"][1]
        assert turn_2["glasses"]["synthetic_frames"] and turn_2["glasses"]["lead_ms"] == record["staleness_ms"]
        assert turn_2["input"]["camera_block"] == BANK.get(record["scenario_id"]).turn_2_image
    findings = (run_dir / "findings.md").read_text()
    assert "## Staleness sweep" in findings and "| 0 ms |" in findings and "| 1000 ms |" in findings
    assert (run_dir / "plots" / "staleness.png").stat().st_size > 10_000
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["staleness_ms"] == [0, 1000] and manifest["describer"] == "authored"
    again = _bench(run_dir, *args)  # every cell finished: nothing to run
    assert again.returncode == 0 and "0 cells to run (4 already finished)" in again.stderr


@pytest.mark.whisper
def test_the_sweep_needs_the_stream(tmp_path):
    done = _bench(tmp_path / "direct", "--staleness", "0,500")
    assert done.returncode == 2 and "need --via stream" in done.stderr
    done = _bench(tmp_path / "bad", "--via", "stream", "--staleness", "soon")
    assert done.returncode == 2 and "--staleness takes milliseconds" in done.stderr


def test_a_sweep_whose_turn_2s_sent_no_frame_says_the_gap_cannot_matter():
    from benchmark.report.findings import NO_FRAMES_WARNING, render_findings
    from benchmark.scoring import build_summary
    from benchmark.scoring.trials import TrialSet
    from core.candidate import Reply
    from core.judge import Verdict
    from core.records import GlassesFacts, TrialRecord, TurnInput, TurnResult

    def sweep(frames: bool) -> str:
        turn = TurnResult(
            turn=2,
            input=TurnInput(
                turn=2, camera_block=None, speech="and now?", camera_source=None, speech_source="perceived"
            ),
            reply=Reply(text="r", model="m"),
            glasses=GlassesFacts(frames_sent=frames),
        )
        trials = [
            TrialRecord(
                scenario_id=f"sc-{i:02d}",
                condition="baseline",
                trial=0,
                target_context="current",
                cue_type="object_in_hand",
                staleness_ms=gap,
                turns=(turn,),
                turn_2_judge=Verdict(label="current", rationale="", judge="lexical"),
            )
            for i in range(1, 5)
            for gap in (0, 500)
        ]
        manifest = {"ranking_condition": "baseline", "conditions": ["baseline"], "trials": 1}
        return render_findings(
            RunSummary.from_json(build_summary(TrialSet(trials=tuple(trials), source=None), manifest))
        )

    assert NO_FRAMES_WARNING in sweep(False) and "pools its 2 Turn 2 gaps" in sweep(False)
    assert NO_FRAMES_WARNING not in sweep(True)
