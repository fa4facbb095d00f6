"""Issue 34, item 9: when the camera block was the scenario's written text (no frame reached the
assistant) for most turns of a stream run, the findings' headline says so, with the count."""

from __future__ import annotations

from pathlib import Path

from benchmark.report.findings import render_findings
from benchmark.scoring import build_summary
from benchmark.scoring.trials import TrialSet
from core.candidate import Reply
from core.judge import Verdict
from core.records import TrialRecord, TurnInput, TurnMetrics, TurnResult


def _record(sid: str, sources: tuple[str | None, ...]) -> TrialRecord:
    def turn(n, camera_source):
        sent = TurnInput(
            turn=n,
            camera_block="a block" if camera_source else None,
            speech="words",
            camera_source=camera_source,
            speech_source="perceived",
        )
        return TurnResult(turn=n, input=sent, reply=Reply(text="r", model="m"), metrics=TurnMetrics(reply_done=1.0))

    return TrialRecord(
        scenario_id=sid,
        condition="baseline",
        trial=0,
        target_context="current",
        cue_type="object_in_hand",
        turn_2_judge=Verdict(label="current", rationale="", judge="test"),
        turns=tuple(turn(n + 1, s) for n, s in enumerate(sources)),
    )


def _headline_paragraph(findings: str) -> str:
    return next(p for p in findings.split("\n\n") if "Balanced Turn 2 accuracy" in p or "not a measurement" in p)


def test_the_headline_says_the_camera_block_was_written_text_in_most_turns():
    records = [_record(f"s{n}", ("authored", "authored", None)) for n in range(3)]
    records.append(_record("s9", ("perceived", "perceived", None)))
    summary = build_summary(TrialSet(trials=tuple(records), source=Path("t.jsonl")), {})
    paragraph = _headline_paragraph(render_findings(summary))
    assert (
        "the camera block was the scenario's written text in 6 of 12 turns (no frame reached the assistant in them)"
    ) not in paragraph  # 6 of 12 is not most
    records.append(_record("s8", ("authored", "authored", None)))
    summary = build_summary(TrialSet(trials=tuple(records), source=Path("t.jsonl")), {})
    paragraph = _headline_paragraph(render_findings(summary))
    assert (
        "the camera block was the scenario's written text in 8 of 15 turns (no frame reached the assistant in them"
    ) in paragraph, paragraph


def test_no_note_when_frames_reached_the_assistant_in_most_turns_or_on_the_text_proxy():
    records = [_record("s1", ("perceived", "perceived", "authored"))]
    findings = render_findings(build_summary(TrialSet(trials=tuple(records), source=Path("t.jsonl")), {}))
    assert "scenario's written text in" not in findings
    text_proxy = TrialRecord(
        scenario_id="s1",
        condition="baseline",
        trial=0,
        target_context="current",
        cue_type="object_in_hand",
        turn_2_judge=Verdict(label="current", rationale="", judge="t"),
    )
    assert "scenario's written text in" not in render_findings(
        build_summary(TrialSet(trials=(text_proxy,), source=Path("t")), {})
    )
