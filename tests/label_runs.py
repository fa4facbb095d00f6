"""Small run dirs for the labelling tests: one Turn 2 trial per shipped scenario,
with the judge labels a test chooses (a rescore dir of the same run is the
same trials with other labels)."""

from __future__ import annotations

import json
from pathlib import Path

from core.candidate import Message
from core.judge import Verdict
from core.records import TrialRecord, build_user_turn
from core.scenario import load_bank


def build_run(
    path: Path,
    judge_labels: list[str | None],
    *,
    judge: str = "lexical",
    repaired: tuple[int, ...] = (),
    replies: dict[int, str] | None = None,
) -> Path:
    """A run dir of len(judge_labels) trials, trial i on the bank's i-th scenario (past the bank's 70, round
    again as trial 1, 2, ...), its Turn 2 reply `reply i ...` (or `replies[i]`) labelled judge_labels[i] by
    `judge` (None: unscored); trials in `repaired` have a Turn 3."""
    scenarios = load_bank(None).scenarios
    path.mkdir(parents=True, exist_ok=True)
    lines = []
    for i, label in enumerate(judge_labels):
        s = scenarios[i % len(scenarios)]
        turn_1 = build_user_turn(s.turn_1_image, s.turn_1_user)
        turn_2 = build_user_turn(s.turn_2_image, s.turn_2_user)
        reply = (replies or {}).get(i, f"reply {i}: the {s.answers.current_answers[0]} is what I would use here.")
        verdict = Verdict(label=label, rationale="fixture", judge=judge, unscored_reason=None if label else "no signal")
        messages = [
            Message(role="user", text=turn_1),
            Message(role="assistant", text=f"turn one answer {i}"),
            Message(role="user", text=turn_2),
        ]
        extra = {}
        if i in repaired:
            messages.append(Message(role="user", text=s.repair_anchor("named")))
            extra = dict(
                turn_3_repair_attempted=True,
                turn_3_message=s.repair_anchor("named"),
                turn_3_response=f"repair reply {i}",
                turn_3_judge=Verdict(label="current", rationale="fixture", judge=judge),
            )
        record = TrialRecord(
            scenario_id=s.scenario_id,
            condition="baseline",
            trial=i // len(scenarios),
            target_context=s.target_context,
            cue_type=s.cue_type,
            difficulty_tier=s.difficulty_tier,
            activity_domain=s.activity_domain,
            via="direct",
            candidate_model="replay:fixture",
            messages=tuple(messages),
            turn_1_response=f"turn one answer {i}",
            turn_2_user_message=turn_2,
            turn_2_response=reply,
            turn_2_judge=verdict,
            **extra,
        )
        lines.append(record.to_line())
    (path / "transcripts.jsonl").write_text("".join(lines), encoding="utf-8")
    manifest = {
        "benchmark_version": "v1",
        "candidate_model": "replay:fixture",
        "judge_family": judge,
        "judge_model": judge,
        "ranking_condition": "baseline",
        "trials": -(-len(judge_labels) // len(scenarios)),
    }
    (path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return path
