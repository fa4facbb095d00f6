"""Load trial records from a run dir or a transcripts file.

One loader reads our own `transcripts.jsonl` (any schema version) and the
transcripts published by other implementations of this benchmark; the
record's fields and their aliases are `benchmark.records.TrialRecord`'s.

Every problem in the file is collected and raised together in a
`TranscriptError`, each line naming the file, the line number and the field.
A later record for the same (scenario, condition, trial) replaces an earlier
one (a resumed run re-runs cells that errored); the number replaced is kept.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from benchmark.records import RecordError, TrialRecord
from benchmark.scenario import TARGET_CONTEXTS

LABELS = TARGET_CONTEXTS  # the four judge labels are the four target contexts


class TranscriptError(ValueError):
    """Unreadable or invalid transcripts; `problems` lists every one found."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class TrialSet:
    trials: tuple[TrialRecord, ...]
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
    cells: dict[tuple[str, str, int], TrialRecord] = {}
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
            trial = TrialRecord.from_json(json.loads(line), where)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: invalid JSON: {exc.msg} (column {exc.colno})")
            continue
        except RecordError as exc:
            problems.extend(exc.problems)
            continue
        if trial.cell in cells:
            superseded += 1
        cells[trial.cell] = trial
    if not cells and not problems:
        problems.append(f"{path}: no trial records")
    if problems:
        raise TranscriptError(problems)
    return TrialSet(tuple(cells.values()), path, superseded)
