"""One trial: `TrialRecord`, one line of `transcripts.jsonl`. `to_json` and the reader
(`core.records.reading`) are the only places its field names are spelled."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields, replace
from typing import Any, cast

from core.candidate import Message
from core.judge import JudgeCase, Verdict
from core.records.messages import build_user_turn
from core.records.reading import RecordReader
from core.records.turn_facts import RecordError, SweepPoint
from core.records.turns import TurnInput, TurnResult, judge_case
from core.scenario import Scenario
from core.watching import Watching

SCHEMA_VERSION = 2
VERDICTS = {
    "turn_2_judge": "turn_2_judge",
    "turn_2_ranking_judge": "turn_2_ranking_judge",
    "turn_3_judge": "turn_3_judge",
}  # dataclass field -> key prefix in the JSON form


@dataclass(frozen=True, kw_only=True)
class TrialRecord:
    """One trial: the cell, every message and reply, the verdicts, per-turn provenance."""

    scenario_id: str
    condition: str
    trial: int
    target_context: str
    cue_type: str
    difficulty_tier: str = "unknown"
    activity_domain: str | None = None
    subset: str = "bank"  # the bank subset (the primary score) or contrast
    via: str | None = None
    candidate_model: str | None = None
    system_prompt: str | None = None
    messages: tuple[Message, ...] = ()
    turns: tuple[TurnResult, ...] = ()
    turn_1_response: str | None = None
    turn_2_user_message: str | None = None
    turn_2_response: str | None = None
    turn_2_judge: Verdict | None = None
    turn_2_code_signals: dict | None = None
    turn_2_ranking_judge: Verdict | None = None
    turn_3_repair_attempted: bool = False
    turn_3_message: str | None = None
    turn_3_response: str | None = None
    turn_3_judge: Verdict | None = None
    repair_target_context: str | None = None  # the bank's turn_3_target_context; None: target_context
    turn_2_previous_judge_label: str | None = None  # set by a rescore: the label before it
    turn_3_previous_judge_label: str | None = None
    staleness_ms: int | None = None  # staleness sweep: Turn 2 speech began this long after the scene change
    frame_policy: str | None = None  # frame policy sweep: the policy this cell ran under
    impairment: str | None = None  # impairment sweep: the profile this cell's glasses played under
    proactive: str | None = None  # a proactive trial's strategy (a sweep axis: `--proactive change,every:5`)
    watching: Watching | None = None  # a proactive trial's stream, event, probes and remarks
    error: str | None = None
    fault: str | None = None  # one of FAULTS when the cell errored or its Turn 2 is unscored
    wall_s: float | None = None
    schema_version: int = SCHEMA_VERSION

    # -- what scoring reads
    @property
    def cell(self) -> tuple:
        """(scenario, condition, trial), plus the staleness gap, frame policy and impairment profile
        in a sweep."""
        return (self.scenario_id, self.condition, self.trial, *(v for v in self.sweep if v is not None))

    @property
    def sweep(self) -> SweepPoint:
        return SweepPoint(self.staleness_ms, self.frame_policy, self.impairment, self.proactive)

    @property
    def errored(self) -> bool:
        return self.error is not None

    @property
    def turn_2_label(self) -> str | None:
        return self.turn_2_judge.label if self.turn_2_judge else None

    @property
    def turn_3_label(self) -> str | None:
        return self.turn_3_judge.label if self.turn_3_judge else None

    @property
    def ranking_label(self) -> str | None:
        return self.turn_2_ranking_judge.label if self.turn_2_ranking_judge else None

    @property
    def scored(self) -> bool:
        """Turn 2 has a judge label and the trial did not error."""
        return not self.errored and self.turn_2_label is not None

    @property
    def passed(self) -> bool | None:
        """Turn 2 label matches the target context; None when not scored."""
        return self.turn_2_label == self.target_context if self.scored else None

    @property
    def repair_passed(self) -> bool | None:
        """Turn 3 label matches the repair's target (`repair_target_context`, recorded
        from the bank's `turn_3_target_context`; records without it: the target
        context); None when there is no scored Turn 3."""
        if self.errored or not self.turn_3_repair_attempted or self.turn_3_label is None:
            return None
        return self.turn_3_label == (self.repair_target_context or self.target_context)

    def turn_input(self, turn: int) -> TurnInput | None:
        return next((t.input for t in self.turns if t.turn == turn), None)

    def judge_case(self, scenario: Scenario, turn: int) -> JudgeCase:
        """The judge's view of Turn 2 or 3 as recorded. Records without per-turn
        inputs (older ones, other implementations') fall back to the recorded
        messages, then to the bank's authored text."""
        response = (self.turn_2_response if turn == 2 else self.turn_3_response) or ""
        inputs = {t.turn: t.input for t in self.turns}
        if 1 in inputs and 2 in inputs and (turn == 2 or 3 in inputs):
            return judge_case(scenario, turn, response, list(inputs.values()))
        users = [m.text for m in self.messages if m.role == "user"]
        sent = 3 if self.turn_3_repair_attempted else 2
        if len(users) >= sent:
            turn_2 = users[-2] if self.turn_3_repair_attempted else users[-1]
            turn_3 = users[-1] if self.turn_3_repair_attempted else None
            context_sent = len(users) > sent
        else:
            turn_2 = self.turn_2_user_message or build_user_turn(scenario.turn_2_image, scenario.turn_2_user)
            turn_3 = self.turn_3_message
            context_sent = bool(scenario.context_image)
        if turn == 3 and turn_3 is None:
            turn_3 = scenario.repair_anchor("named")
        return JudgeCase(
            scenario=scenario,
            turn=turn,
            user_message=turn_2 if turn == 2 else cast(str, turn_3),
            response=response,
            turn_2_message=turn_2,
            context_sent=context_sent,
        )

    # -- the JSON form
    def to_json(self) -> dict:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in VERDICTS:
                out.update(verdict_json(VERDICTS[f.name], value))
            elif f.name == "messages":
                out["messages"] = [{"role": m.role, "text": m.text} for m in value]
            elif f.name == "turns":
                out["turns"] = [t.to_json() for t in value]
            elif f.name == "watching":
                out["watching"] = None if value is None else value.to_json()
            else:
                out[f.name] = value
            if f.name == "turn_2_judge":
                out["turn_2_passed"] = self.passed
            if f.name == "turn_3_judge":
                out["turn_3_repair_passed"] = self.repair_passed
        return out

    def to_line(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, raw: Any, where: str = "record") -> TrialRecord:
        """Read one record (ours of any schema version, or another implementation's);
        raises `RecordError` naming `where` and the field of every problem."""
        if not isinstance(raw, dict):
            raise RecordError([f"{where}: expected a JSON object, got {type(raw).__name__}"])
        return cls(**RecordReader(raw, where).fields())

    def replace(self, **changes: Any) -> TrialRecord:
        return replace(self, **changes)


def verdict_json(prefix: str, verdict: Verdict | None) -> dict:
    values = (
        (None,) * 8
        if verdict is None
        else (
            verdict.label,
            verdict.rationale,
            verdict.judge,
            verdict.prompt,
            verdict.raw,
            verdict.unscored_reason,
            verdict.cached,
            None if verdict.usage is None else verdict.usage.to_json(),
        )
    )
    names = ("label", "rationale", "name", "prompt", "raw", "unscored_reason", "cached", "usage")
    return {f"{prefix}_{name}": value for name, value in zip(names, values)}
