"""The scenario model and the bank loaders.

One model (`Scenario`, `AnswerKey`, `Bank`) and one entry point, `load_bank`,
which detects the format:

1. the v1 trio: a directory holding `scenarios.json`, `expected_answers.json`
   and `interventions.json` (or the path of its `scenarios.json`);
2. JSON Lines with inline gold, as other tools publish it.

Both accept the shapes other implementations publish (docs/schema.md): the
optional `turn_3_repair_anchor_deictic`, `turn_3_target_context`, `notes` and
`time_gap_bucket`, the spec's referent-complexity vocabulary for
`cognitive_load`, and prompt conditions as a list of objects. Enum values are
checked by the validator.

Every problem found in the input is collected and raised together in one
`BankError` whose lines name the file, the line or scenario id and the field.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TARGET_CONTEXTS = ("current", "prior", "clarify", "abstain")
# a scenario id names a folder (media/<id>/) and is part of file names: a plain name, never a path.
# The validator's rule for the shipped bank (sc-01, adv-01, ct-01) is stricter.
SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")
CUE_TYPES = (
    "object_in_hand",
    "object_state",
    "sequential_task",
    "location",
    "object_in_view",
    "absent_referent",
    "screen_content",
    "pre_conversation_recall",
)
DIFFICULTY_TIERS = ("easy", "medium", "hard")
# cognitive_load takes either the shipped bank's scale or the spec schema's
# referent-complexity vocabulary (JSON Lines field `referent_complexity`).
LOAD_LEVELS = ("low", "medium", "high")
REFERENT_COMPLEXITIES = ("single_referent", "multi_referent", "distractor_present", "absent_referent", "compound_shift")
COGNITIVE_LOADS = LOAD_LEVELS + REFERENT_COMPLEXITIES
# time_gap_bucket may also be null or absent (unknown gap)
TIME_GAP_BUCKETS = ("seconds", "minutes", "hours", "next_day")
SUBSETS = ("bank", "contrast")
ANSWER_LISTS = ("current_answers", "prior_answers", "clarify_indicators", "abstain_indicators")

SHIPPED_BANK = Path(__file__).resolve().parents[1] / "benchmark" / "v1"  # the bank is the benchmark's data

REQUIRED = object()
NULL = type(None)
# field name -> (allowed types, value when the field is absent, or REQUIRED)
SCENARIO_FIELDS: dict[str, tuple[tuple[type, ...], Any]] = {
    "scenario_id": ((str,), REQUIRED),
    "target_context": ((str,), REQUIRED),
    "cue_type": ((str,), REQUIRED),
    "activity_domain": ((str,), REQUIRED),
    "cognitive_load": ((str,), REQUIRED),
    "difficulty_tier": ((str,), REQUIRED),
    "time_gap_bucket": ((str, NULL), None),
    "context_image": ((str, NULL), REQUIRED),
    "turn_1_image": ((str, NULL), REQUIRED),
    "turn_1_user": ((str,), REQUIRED),
    "turn_2_image": ((str, NULL), REQUIRED),
    "turn_2_user": ((str,), REQUIRED),
    "turn_3_repair_anchor": ((str,), REQUIRED),
    "turn_3_repair_anchor_deictic": ((str, NULL), None),
    # the context Turn 3 (the repair) is judged against; absent or null: target_context
    "turn_3_target_context": ((str, NULL), None),
    "notes": ((str, NULL), ""),
}

# JSON Lines field names -> our names.
JSONL_RENAMES = {
    "change_type": "cue_type",
    "referent_complexity": "cognitive_load",
    "turn_3_repair_prompt": "turn_3_repair_anchor",
    "turn_3_repair_prompt_deictic": "turn_3_repair_anchor_deictic",
}
JSONL_CUE_RENAMES = {"cross_session_reference": "pre_conversation_recall"}


class InputProblems(ValueError):
    """Unreadable or invalid input; `problems` lists every one found (file, line
    or id, and field), one per line of the message. Banks, records and
    transcripts each raise their own kind."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


class BankError(InputProblems):
    """Unreadable or invalid bank input."""


@dataclass(frozen=True, kw_only=True)
class AnswerKey:
    current_answers: tuple[str, ...]
    prior_answers: tuple[str, ...]
    clarify_indicators: tuple[str, ...]
    abstain_indicators: tuple[str, ...]

    def lists(self) -> dict[str, tuple[str, ...]]:
        return {name: getattr(self, name) for name in ANSWER_LISTS}


@dataclass(frozen=True, kw_only=True)
class Scenario:
    scenario_id: str
    target_context: str
    cue_type: str
    activity_domain: str
    cognitive_load: str
    difficulty_tier: str
    time_gap_bucket: str | None
    context_image: str | None
    turn_1_image: str | None
    turn_1_user: str
    turn_2_image: str | None
    turn_2_user: str
    turn_3_repair_anchor: str
    turn_3_repair_anchor_deictic: str | None
    notes: str
    answers: AnswerKey
    subset: str = "bank"
    pair_id: str | None = None
    turn_3_target_context: str | None = None

    @property
    def repair_target(self) -> str:
        """The label a Turn 3 reply must get to pass: `turn_3_target_context` where the
        bank sets it (a clarify item whose named anchor resolves the ambiguity), else
        `target_context`."""
        return self.turn_3_target_context or self.target_context

    def repair_anchor(self, style: str = "named") -> str:
        """The Turn 3 text; deictic falls back to the named anchor where it is null, empty or absent."""
        if style == "deictic" and self.turn_3_repair_anchor_deictic:
            return self.turn_3_repair_anchor_deictic
        return self.turn_3_repair_anchor


@dataclass(frozen=True, kw_only=True)
class Condition:
    """A prompt condition: a name and the system prompt sent on every call."""

    name: str
    system_prompt: str
    description: str = ""


@dataclass(frozen=True, kw_only=True)
class Bank:
    scenarios: tuple[Scenario, ...]
    conditions: tuple[Condition, ...]
    source: Path
    format: str  # "v1" or "jsonl"
    files: dict[str, Path] = field(default_factory=dict)  # role -> path, for hashing
    subset: str | None = None  # set by `select(subset)`: the subset this bank was narrowed to

    def get(self, scenario_id: str) -> Scenario:
        for scenario in self.scenarios:
            if scenario.scenario_id == scenario_id:
                return scenario
        raise KeyError(f"no scenario {scenario_id!r} in {self.source}")

    def condition(self, name: str) -> Condition:
        for condition in self.conditions:
            if condition.name == name:
                return condition
        known = ", ".join(c.name for c in self.conditions)
        raise KeyError(f"no prompt condition {name!r} (known: {known})")

    def select(self, subset: str | None = None, limit: int | None = None) -> Bank:
        scenarios = [s for s in self.scenarios if subset is None or s.subset == subset]
        if limit is not None:
            scenarios = scenarios[:limit]
        return Bank(
            scenarios=tuple(scenarios),
            conditions=self.conditions,
            source=self.source,
            format=self.format,
            files=dict(self.files),
            subset=subset if subset is not None else self.subset,
        )


def load_bank(path: str | Path | None = None) -> Bank:
    """Load a bank from a v1 directory, its scenarios.json, or a JSONL file."""
    path = Path(path) if path is not None else SHIPPED_BANK
    if not path.exists():
        raise BankError([f"{path}: no such file or directory"])
    if path.is_dir():
        if (path / "scenarios.json").exists():
            return _load_v1(path)
        jsonl = sorted(path.glob("*.jsonl"))
        if len(jsonl) == 1:
            return _load_jsonl(jsonl[0])
        raise BankError([f"{path}: holds neither scenarios.json nor exactly one .jsonl file"])
    if path.suffix == ".jsonl" or _looks_like_jsonl(path):
        return _load_jsonl(path)
    return _load_v1(path.parent)


def load_conditions(path: Path, problems: list[str]) -> tuple[Condition, ...]:
    """Prompt conditions: an object of name -> {system_prompt, description} or a
    list of {name, system_prompt, description, token_count?} objects."""
    data = _read_json(path, problems)
    if data is None:
        return ()
    if isinstance(data, dict):
        entries = [(f"condition {name!r}", name, body) for name, body in data.items()]
    elif isinstance(data, list):
        entries = [
            (f"condition #{i}", body.get("name") if isinstance(body, dict) else None, body)
            for i, body in enumerate(data, start=1)
        ]
    else:
        problems.append(
            f"{path}: expected an object of condition name -> {{system_prompt, description}} "
            "or a list of {name, system_prompt, description} objects"
        )
        return ()
    conditions: list[Condition] = []
    for where, name, body in entries:
        if not isinstance(body, dict):
            problems.append(f"{path}: {where}: expected an object")
            continue
        if not isinstance(name, str) or not name:
            problems.append(f"{path}: {where}: field 'name' must be a non-empty string")
            continue
        if not isinstance(body.get("system_prompt"), str):
            problems.append(f"{path}: {where}: field 'system_prompt' must be a string")
            continue
        if name in {c.name for c in conditions}:
            problems.append(f"{path}: {where}: condition name {name!r} used twice")
            continue
        conditions.append(
            Condition(name=name, system_prompt=body["system_prompt"], description=str(body.get("description", "")))
        )
    if conditions and "baseline" not in {c.name for c in conditions}:
        problems.append(f"{path}: no 'baseline' condition")
    return tuple(conditions)


def _looks_like_jsonl(path: Path) -> bool:
    with path.open("rb") as handle:
        head = handle.read(1).strip()
    return head == b"{"


def _read_json(path: Path, problems: list[str]) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        problems.append(f"{path}: missing")
    except json.JSONDecodeError as exc:
        problems.append(f"{path}: line {exc.lineno}: invalid JSON: {exc.msg}")
    except UnicodeDecodeError as exc:
        problems.append(f"{path}: not UTF-8 text ({exc.reason})")
    except RecursionError:
        problems.append(f"{path}: invalid JSON: nested too deeply to be a bank file")
    return None


def _load_v1(directory: Path) -> Bank:
    problems: list[str] = []
    files = {
        "scenarios": directory / "scenarios.json",
        "expected_answers": directory / "expected_answers.json",
        "interventions": directory / "interventions.json",
    }
    raw_scenarios = _read_json(files["scenarios"], problems)
    raw_answers = _read_json(files["expected_answers"], problems)
    conditions = load_conditions(files["interventions"], problems)
    scenarios: list[Scenario] = []
    if isinstance(raw_scenarios, list) and isinstance(raw_answers, dict):
        for index, raw in enumerate(raw_scenarios):
            where = f"{files['scenarios']}: scenario #{index + 1}"
            if isinstance(raw, dict) and isinstance(raw.get("scenario_id"), str):
                where = f"{files['scenarios']}: {_shown_id(raw['scenario_id'])}"
                gold = raw_answers.get(raw["scenario_id"])
                gold_where = f"{files['expected_answers']}: {_shown_id(raw['scenario_id'])}"
            else:
                gold, gold_where = None, where
            scenario = _build_scenario(raw, gold, where, gold_where, problems)
            if scenario is not None:
                scenarios.append(scenario)
        known = {s.get("scenario_id") for s in raw_scenarios if isinstance(s, dict)}
        for extra in sorted(set(raw_answers) - known):
            problems.append(f"{files['expected_answers']}: {extra}: answers for a scenario that does not exist")
    else:
        if raw_scenarios is not None and not isinstance(raw_scenarios, list):
            problems.append(f"{files['scenarios']}: expected a JSON list of scenarios")
        if raw_answers is not None and not isinstance(raw_answers, dict):
            problems.append(f"{files['expected_answers']}: expected an object of scenario_id -> answer lists")
    if problems:
        raise BankError(problems)
    return Bank(scenarios=tuple(scenarios), conditions=conditions, source=directory, format="v1", files=files)


def _load_jsonl(path: Path) -> Bank:
    problems: list[str] = []
    scenarios: list[Scenario] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise BankError([f"{path}: not UTF-8 text ({exc.reason})"]) from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: invalid JSON: {exc.msg} (column {exc.colno})")
            continue
        except RecursionError:
            problems.append(f"{where}: invalid JSON: nested too deeply to be a scenario")
            continue
        if not isinstance(raw, dict):
            problems.append(f"{where}: expected a JSON object")
            continue
        if isinstance(raw.get("scenario_id"), str):
            where = f"{where} ({_shown_id(raw['scenario_id'])})"
        raw = {JSONL_RENAMES.get(key, key): value for key, value in raw.items()}
        if raw.get("cue_type") in JSONL_CUE_RENAMES:
            raw["cue_type"] = JSONL_CUE_RENAMES[raw["cue_type"]]
        gold = raw.pop("gold", None)
        scenario = _build_scenario(raw, gold, where, f"{where}: gold", problems)
        if scenario is not None:
            scenarios.append(scenario)
    if not lines or not any(line.strip() for line in lines):
        problems.append(f"{path}: empty bank")
    if problems:
        raise BankError(problems)
    shipped: list[str] = []
    conditions = load_conditions(SHIPPED_BANK / "interventions.json", shipped)
    return Bank(
        scenarios=tuple(scenarios),
        conditions=conditions,
        source=path,
        format="jsonl",
        files={"scenarios": path, "interventions": SHIPPED_BANK / "interventions.json"},
    )


def _shown_id(scenario_id: str) -> str:
    """A scenario id as an error message shows it: quoted when it is not a plain name (one line always)."""
    return scenario_id if SAFE_ID.fullmatch(scenario_id) else repr(scenario_id[:80])


def _build_scenario(raw: Any, gold: Any, where: str, gold_where: str, problems: list[str]) -> Scenario | None:
    if not isinstance(raw, dict):
        problems.append(f"{where}: expected a JSON object")
        return None
    before = len(problems)
    values: dict[str, Any] = {}
    for name, (types, default) in SCENARIO_FIELDS.items():
        if name not in raw:
            if default is REQUIRED:
                problems.append(f"{where}: field '{name}' is missing")
            else:
                values[name] = default
            continue
        value = raw[name]
        if not isinstance(value, types):
            wanted = " or ".join("null" if t is NULL else t.__name__ for t in types)
            problems.append(f"{where}: field '{name}' must be {wanted}, got {type(value).__name__}")
            continue
        values[name] = value
    if isinstance(values.get("scenario_id"), str) and not SAFE_ID.fullmatch(values["scenario_id"]):
        problems.append(
            f"{where}: field 'scenario_id' {values['scenario_id'][:80]!r} must be a plain name (letters, "
            "digits, '.', '_', '-'; not starting with '.'): it names the scenario's media folder"
        )
    values["notes"] = values.get("notes") or ""
    subset = raw.get("subset", "bank")
    if subset not in SUBSETS:
        problems.append(f"{where}: field 'subset' must be one of {', '.join(SUBSETS)}, got {subset!r}")
    pair_id = raw.get("pair_id")
    if pair_id is not None and not isinstance(pair_id, str):
        problems.append(f"{where}: field 'pair_id' must be a string or null")
    answers = _build_answers(gold, gold_where, problems)
    if len(problems) > before or answers is None:
        return None
    return Scenario(**values, answers=answers, subset=subset, pair_id=pair_id)


def _build_answers(gold: Any, where: str, problems: list[str]) -> AnswerKey | None:
    if gold is None:
        problems.append(f"{where}: no answer lists")
        return None
    if not isinstance(gold, dict):
        problems.append(f"{where}: answer lists must be an object")
        return None
    lists: dict[str, tuple[str, ...]] = {}
    for name in ANSWER_LISTS:
        value = gold.get(name)
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            problems.append(f"{where}: field '{name}' must be a list of strings")
            continue
        lists[name] = tuple(value)
    if len(lists) != len(ANSWER_LISTS):
        return None
    return AnswerKey(**lists)
