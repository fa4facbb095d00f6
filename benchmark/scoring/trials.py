"""Load trial records from a run dir or a transcripts file.

One loader reads our own `transcripts.jsonl` and the transcripts published by
other implementations of this benchmark. Their names differ in a few places:

| ours | also accepted |
|---|---|
| `cue_type` | `change_type` |
| `turn_2_judge_label` | `turn_2_judge_policy` |
| `turn_3_judge_label` | `turn_3_judge_policy` |

Every problem in the file is collected and raised together in a
`TranscriptError`, each line naming the file, the line number and the field.
A later record for the same (scenario, condition, trial) replaces an earlier
one (a resumed run re-runs cells that errored); the number replaced is kept.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmark.scenario import JSONL_CUE_RENAMES, TARGET_CONTEXTS

LABELS = TARGET_CONTEXTS  # the four judge labels are the four target contexts

# our field name -> the other names that mean the same thing
ALIASES = {
    "cue_type": ("change_type",),
    "turn_2_judge_label": ("turn_2_judge_policy",),
    "turn_3_judge_label": ("turn_3_judge_policy",),
    "turn_2_ranking_judge_label": ("turn_2_ranking_judge_policy",),
}


class TranscriptError(ValueError):
    """Unreadable or invalid transcripts; `problems` lists every one found."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class Trial:
    """One trial as the scoring sees it."""

    scenario_id: str
    condition: str
    trial: int
    target_context: str
    cue_type: str
    difficulty_tier: str
    turn_2_label: str | None  # None = unscored (or errored)
    turn_2_response: str | None
    turn_3_repair_attempted: bool
    turn_3_label: str | None
    turn_3_response: str | None
    error: str | None = None
    ranking_label: str | None = None  # the second, fixed judge on Turn 2
    previous_turn_2_label: str | None = None  # the label before a rescore
    code_signals: dict | None = None
    line: int = 0
    record: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def errored(self) -> bool:
        return self.error is not None

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
        """Turn 3 label matches the target context; None when there is no scored Turn 3."""
        if self.errored or not self.turn_3_repair_attempted or self.turn_3_label is None:
            return None
        return self.turn_3_label == self.target_context

    @property
    def cell(self) -> tuple[str, str, int]:
        return (self.scenario_id, self.condition, self.trial)


@dataclass(frozen=True)
class TrialSet:
    trials: tuple[Trial, ...]
    source: Path
    superseded: int = 0  # records replaced by a later record of the same cell


def transcripts_path(path: str | Path) -> Path:
    """The transcripts file of a run dir, or the file itself."""
    path = Path(path)
    if path.is_dir():
        path = path / "transcripts.jsonl"
    if not path.exists():
        raise TranscriptError([f"{path}: no such file"])
    return path


def load_trials(path: str | Path) -> TrialSet:
    """Read every trial from a run dir or a transcripts JSON Lines file."""
    path = transcripts_path(path)
    problems: list[str] = []
    cells: dict[tuple[str, str, int], Trial] = {}
    superseded = 0
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise TranscriptError([f"{path}: not UTF-8 text ({exc.reason})"]) from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: invalid JSON: {exc.msg} (column {exc.colno})")
            continue
        if not isinstance(raw, dict):
            problems.append(f"{where}: expected a JSON object, got {type(raw).__name__}")
            continue
        trial = parse_trial(raw, where, number, problems)
        if trial is None:
            continue
        if trial.cell in cells:
            superseded += 1
        cells[trial.cell] = trial
    if not cells and not problems:
        problems.append(f"{path}: no trial records")
    if problems:
        raise TranscriptError(problems)
    return TrialSet(tuple(cells.values()), path, superseded)


def _field(raw: dict, name: str) -> Any:
    if raw.get(name) is not None:
        return raw[name]
    for alias in ALIASES.get(name, ()):
        if raw.get(alias) is not None:
            return raw[alias]
    return None


def parse_trial(raw: dict, where: str, number: int, problems: list[str]) -> Trial | None:
    """Build a `Trial` from one record, appending problems (file, line, field) when invalid."""
    before = len(problems)

    def text(name: str, required: bool) -> str | None:
        value = _field(raw, name)
        if value is None:
            if required:
                problems.append(f"{where}: field '{name}' is missing")
            return None
        if not isinstance(value, str):
            problems.append(f"{where}: field '{name}' must be a string, got {type(value).__name__}")
            return None
        return value

    def label(name: str) -> str | None:
        value = _field(raw, name)
        if value is None:
            return None
        if value not in LABELS:
            problems.append(f"{where}: field '{name}' must be one of {', '.join(LABELS)} or null, got {value!r}")
            return None
        return value

    scenario_id = text("scenario_id", True)
    condition = text("condition", True)
    index = raw.get("trial")
    if isinstance(index, bool) or not isinstance(index, int):
        problems.append(f"{where}: field 'trial' must be an integer, got {index!r}")
    target = text("target_context", True)
    if target is not None and target not in LABELS:
        problems.append(f"{where}: field 'target_context' must be one of {', '.join(LABELS)}, got {target!r}")
    cue = text("cue_type", True)
    cue = JSONL_CUE_RENAMES.get(cue, cue)
    difficulty = text("difficulty_tier", False) or "unknown"
    error = raw.get("error")
    if error is not None and not isinstance(error, str):
        error = json.dumps(error)
    attempted = raw.get("turn_3_repair_attempted")
    if attempted is None:  # not recorded: a Turn 3 happened if it left a response or a label
        attempted = raw.get("turn_3_response") is not None or _field(raw, "turn_3_judge_label") is not None
    if not isinstance(attempted, bool):
        problems.append(f"{where}: field 'turn_3_repair_attempted' must be true or false, got {attempted!r}")
    signals = raw.get("turn_2_code_signals")
    if signals is not None and not isinstance(signals, dict):
        problems.append(f"{where}: field 'turn_2_code_signals' must be an object or null")
        signals = None
    turn_2 = label("turn_2_judge_label")
    turn_3 = label("turn_3_judge_label")
    ranking = label("turn_2_ranking_judge_label")
    previous = label("turn_2_previous_judge_label")
    responses = {}
    for name in ("turn_2_response", "turn_3_response"):
        value = raw.get(name)
        responses[name] = value if isinstance(value, str) else None
    if len(problems) > before:
        return None
    return Trial(
        scenario_id=scenario_id, condition=condition, trial=index, target_context=target,
        cue_type=cue, difficulty_tier=difficulty, turn_2_label=turn_2,
        turn_2_response=responses["turn_2_response"], turn_3_repair_attempted=attempted,
        turn_3_label=turn_3, turn_3_response=responses["turn_3_response"], error=error,
        ranking_label=ranking, previous_turn_2_label=previous, code_signals=signals,
        line=number, record=raw,
    )
