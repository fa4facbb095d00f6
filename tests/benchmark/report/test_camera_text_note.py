"""Issue 34, item 9: when the camera block was the scenario's written text (no frame reached the
assistant) for most turns of a stream run, the findings' headline says so, with the count."""

from __future__ import annotations

from pathlib import Path

from benchmark.report.findings import render_findings
from benchmark.scoring import build_summary
from benchmark.scoring.summary_view import RunSummary
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
    """Issue 60, item 4: in plain words, over the camera turns (Turns 1 and 2; Turn 3 has no camera block),
    the denominator the Frames line uses too."""
    records = [_record(f"s{n}", ("authored", "perceived", None)) for n in range(3)]
    summary = build_summary(TrialSet(trials=tuple(records), source=Path("t.jsonl")), {})
    assert "no frame reached the assistant" not in render_findings(RunSummary.from_json(summary))  # 3 of 6 is not most
    records.append(_record("s8", ("authored", "authored", None)))
    summary = build_summary(TrialSet(trials=tuple(records), source=Path("t.jsonl")), {})
    paragraph = _headline_paragraph(render_findings(RunSummary.from_json(summary)))
    assert (
        "In 5 of the 8 camera turns (Turns 1 and 2 of each played cell) no frame reached the assistant, so it "
        "got the scenario's written description of the scene instead: this number measures the glasses' "
        "camera only in the other 3."
    ) in paragraph, paragraph
    assert "text proxy's camera" not in paragraph and " 12 " not in paragraph


def test_no_note_when_frames_reached_the_assistant_in_most_turns_or_on_the_text_proxy():
    records = [_record("s1", ("perceived", "perceived", "authored"))]
    findings = render_findings(
        RunSummary.from_json(build_summary(TrialSet(trials=tuple(records), source=Path("t.jsonl")), {}))
    )
    assert "no frame reached the assistant" not in findings
    text_proxy = TrialRecord(
        scenario_id="s1",
        condition="baseline",
        trial=0,
        target_context="current",
        cue_type="object_in_hand",
        turn_2_judge=Verdict(label="current", rationale="", judge="t"),
    )
    assert "no frame reached the assistant" not in render_findings(
        RunSummary.from_json(build_summary(TrialSet(trials=(text_proxy,), source=Path("t")), {}))
    )
