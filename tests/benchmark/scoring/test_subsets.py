"""The headline is the bank subset's; the contrast subset gets its own row."""

from __future__ import annotations

from pathlib import Path

from benchmark.report.findings import render_findings
from benchmark.scoring import build_summary
from benchmark.scoring.summary_view import RunSummary
from benchmark.scoring.trials import TrialSet
from core.judge import Verdict
from core.records import TrialRecord


def _trial(sid, subset, target, label):
    return TrialRecord(
        scenario_id=sid,
        condition="baseline",
        trial=0,
        target_context=target,
        cue_type="object_in_hand",
        subset=subset,
        turn_2_judge=Verdict(label=label, rationale="", judge="test"),
    )


def test_contrast_trials_do_not_move_the_headline():
    """Bank: s1 current->current, s2 prior->prior: balanced 1.0. Contrast: c1 and c2
    current->prior: 0.0. Pooled it would be (1/3 + 1)/2 = 0.667."""
    trials = (
        _trial("s1", "bank", "current", "current"),
        _trial("s2", "bank", "prior", "prior"),
        _trial("c1", "contrast", "current", "prior"),
        _trial("c2", "contrast", "current", "prior"),
    )
    summary = build_summary(TrialSet(trials=trials, source=Path("t.jsonl")), {"ranking_condition": "baseline"})
    assert summary["primary"]["balanced_accuracy"] == 1.0 and summary["primary"]["subset"] == "bank"
    assert summary["by_subset"]["contrast"]["balanced_accuracy"] == 0.0
    assert summary["by_subset"]["bank"]["trials"] == 2
    assert summary["conditions"]["baseline"]["balanced_accuracy"] == (1 / 3 + 1) / 2  # the pooled row stays
    findings = render_findings(RunSummary.from_json(summary))
    assert "## Subsets (baseline)" in findings and "| contrast | 0.0% |" in findings


def test_one_subset_has_no_subset_rows():
    trials = (_trial("s1", "bank", "current", "current"),)
    summary = build_summary(TrialSet(trials=trials, source=Path("t.jsonl")), {})
    assert summary["by_subset"] == {} and "## Subsets" not in render_findings(RunSummary.from_json(summary))
    assert TrialRecord.from_json({k: v for k, v in trials[0].to_json().items() if k != "subset"}).subset == "bank"


def test_stream_runs_report_perception_sources_and_stages():
    from core.candidate import Reply
    from core.records import TurnInput, TurnMetrics, TurnResult

    def turn(n, camera_source, seconds):
        sent = TurnInput(
            turn=n,
            camera_block="a block" if camera_source else None,
            speech="words",
            camera_source=camera_source,
            speech_source="perceived",
            timings={"asr_decode_s": 0.5},
        )
        return TurnResult(turn=n, input=sent, reply=Reply(text="r", model="m"), metrics=TurnMetrics(reply_done=seconds))

    record = _trial("s1", "bank", "current", "current").replace(
        turns=(turn(1, "perceived", 2.0), turn(2, "authored", 4.0))
    )
    summary = build_summary(TrialSet(trials=(record,), source=Path("t.jsonl")), {})
    data = summary["perception"]
    assert data["sources"]["camera"] == {"authored": 1, "perceived": 1}
    assert data["sources"]["speech"] == {"perceived": 2}
    assert data["stages_s"]["speech_end_to_reply_done"] == {"p50": 3.0, "p95": 3.9, "n": 2}
    assert "| camera | 1 | 1 | 0 | 0 |" in render_findings(RunSummary.from_json(summary))
    assert (
        build_summary(TrialSet(trials=(_trial("s1", "bank", "current", "current"),), source=Path("t")), {})[
            "perception"
        ]
        is None
    )
