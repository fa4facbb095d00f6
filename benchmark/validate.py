"""The bank validator: structural checks 1, 2, 3 and 6, the lockfile, and the
semantic checks 4 and 5 that need a model.

Each check returns a `CheckResult` listing every problem it found (nothing
stops at the first problem) and the warnings that do not fail it. The shipped
bank's exact distributions are enforced only on the shipped bank; any other
bank gets its counts reported.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from benchmark import BENCHMARK_VERSION
from benchmark.nouns import as_object_noun, object_nouns_in
from benchmark.scenario import (
    COGNITIVE_LOADS, CUE_TYPES, DIFFICULTY_TIERS, JSONL_RENAMES, SHIPPED_BANK, TARGET_CONTEXTS, TIME_GAP_BUCKETS, Bank,
    Scenario,
)

SPEECH_FIELDS = ("turn_1_user", "turn_2_user", "turn_3_repair_anchor_deictic")
IMAGE_FIELDS = ("context_image", "turn_1_image", "turn_2_image")
ID_PATTERN = re.compile(r"^sc-\d{2,}$")
CONTRAST_ID_PATTERN = re.compile(r"^(?:sc|adv)-\d{2,}$")
# the answer list that must not be empty for each target; current and prior
# items also need the other of the two, clarify and abstain items need only their own
TARGET_LISTS = {
    "current": ("current_answers", "prior_answers"),
    "prior": ("current_answers", "prior_answers"),
    "clarify": ("clarify_indicators",),
    "abstain": ("abstain_indicators",),
}

# the shipped bank's exact distributions (check 3)
SHIPPED_DISTRIBUTIONS = {
    "target_context": {"current": 33, "prior": 12, "clarify": 3, "abstain": 2},
    "cue_type": {"object_in_hand": 12, "object_state": 8, "sequential_task": 6, "location": 6,
                 "object_in_view": 5, "absent_referent": 5, "screen_content": 4, "pre_conversation_recall": 4},
    "difficulty_tier": {"easy": 15, "medium": 20, "hard": 15},
}
MIN_DOMAINS = 14

# check 6: a pair is a near duplicate when the text of its speech and camera
# blocks is this similar (difflib ratio over the joined, lower-cased text) ...
TEXT_SIMILARITY_THRESHOLD = 0.75
# ... or when both speech turns are word-for-word the same template with the
# same shift type and target (structural overlap).
SPEECH_SIMILARITY_THRESHOLD = 0.9

LOCK_FILES = {
    "scenarios_sha256": "scenarios.json",
    "expected_answers_sha256": "expected_answers.json",
    "interventions_sha256": "interventions.json",
}
JUDGE_TEMPLATE = Path(__file__).parent / "judges" / "judge_prompt.md"


@dataclass
class CheckResult:
    name: str
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict:
        return {"name": self.name, "ok": self.ok, "problems": list(self.problems), "warnings": list(self.warnings)}


def is_shipped(bank: Bank) -> bool:
    return bank.format == "v1" and Path(bank.source).resolve() == SHIPPED_BANK.resolve()


def counts(bank: Bank) -> dict:
    scenarios = bank.scenarios

    def tally(name: str) -> dict:
        return dict(Counter("null" if getattr(s, name) is None else getattr(s, name) for s in scenarios))

    return {
        "scenarios": len(scenarios),
        **{name: tally(name) for name in ("target_context", "cue_type", "difficulty_tier", "cognitive_load",
                                          "time_gap_bucket", "subset")},
        "activity_domains": len({s.activity_domain for s in scenarios}),
    }


def _has_token(text: str, token: str) -> bool:
    return bool(re.search(r"\b" + re.escape(token) + r"\b", text, re.IGNORECASE))


def check_token_leakage(bank: Bank) -> CheckResult:
    """Check 1: no current/prior answer token in any user speech (named repair anchor exempt)."""
    result = CheckResult("token_leakage")
    for s in bank.scenarios:
        tokens = s.answers.current_answers + s.answers.prior_answers
        for name in SPEECH_FIELDS:
            text = getattr(s, name)
            if not text:
                continue
            for token in tokens:
                if _has_token(text, token):
                    result.problems.append(f"{s.scenario_id}: field '{name}' contains answer token {token!r}")
    return result


def check_object_names(bank: Bank) -> CheckResult:
    """Check 2: no camera block names the object that is one of the scenario's own
    current/prior answer tokens; any other listed object noun is a warning."""
    result = CheckResult("object_names")
    for s in bank.scenarios:
        answer_nouns = {as_object_noun(t) for t in s.answers.current_answers + s.answers.prior_answers}
        for name in IMAGE_FIELDS:
            for noun in object_nouns_in(getattr(s, name)):
                if noun in answer_nouns:
                    result.problems.append(f"{s.scenario_id}: field '{name}' names an object: {noun!r} "
                                           "(an answer token)")
                else:
                    result.warnings.append(f"{s.scenario_id}: field '{name}' names an object: {noun!r} "
                                           "(not an answer token)")
    return result


def check_structure(bank: Bank, *, shipped: bool) -> CheckResult:
    """Check 3: ids, enum values, context_image placement, answer lists, distributions."""
    result = CheckResult("schema_and_structure")
    p = result.problems
    seen: Counter[str] = Counter(s.scenario_id for s in bank.scenarios)
    for sid, n in seen.items():
        if n > 1:
            p.append(f"{sid}: scenario_id used {n} times")
    jsonl_names = {ours: theirs for theirs, ours in JSONL_RENAMES.items()} if bank.format == "jsonl" else {}
    enums = {"target_context": TARGET_CONTEXTS, "cue_type": CUE_TYPES, "difficulty_tier": DIFFICULTY_TIERS,
             "cognitive_load": COGNITIVE_LOADS, "time_gap_bucket": TIME_GAP_BUCKETS}
    for s in bank.scenarios:
        if s.subset == "contrast" and not CONTRAST_ID_PATTERN.match(s.scenario_id):
            p.append(f"{s.scenario_id}: field 'scenario_id' must look like sc-01 or adv-01 on a contrast item")
        elif s.subset != "contrast" and not ID_PATTERN.match(s.scenario_id):
            p.append(f"{s.scenario_id}: field 'scenario_id' must look like sc-01")
        for name, allowed in enums.items():
            value = getattr(s, name)
            if value is None and name == "time_gap_bucket":
                continue
            if value not in allowed:
                label = f"'{name}'" + (f" (JSONL '{jsonl_names[name]}')" if name in jsonl_names else "")
                extra = " or null" if name == "time_gap_bucket" else ""
                p.append(f"{s.scenario_id}: field {label} is {value!r}; allowed: {', '.join(allowed)}{extra}")
        recall = s.cue_type == "pre_conversation_recall"
        if recall and not s.context_image:
            p.append(f"{s.scenario_id}: field 'context_image' is required on pre_conversation_recall")
        if not recall and s.context_image:
            p.append(f"{s.scenario_id}: field 'context_image' is only allowed on pre_conversation_recall")
        for name in ("turn_1_user", "turn_2_user", "turn_3_repair_anchor", "activity_domain"):
            if not getattr(s, name).strip():
                p.append(f"{s.scenario_id}: field '{name}' is empty")
        for name in TARGET_LISTS.get(s.target_context, ()):
            if not getattr(s.answers, name):
                p.append(f"{s.scenario_id}: answer list '{name}' is empty on a {s.target_context} item")
    if shipped:
        c = counts(bank)
        for key, wanted in SHIPPED_DISTRIBUTIONS.items():
            if c[key] != wanted:
                p.append(f"shipped bank: {key} counts are {c[key]}, expected {wanted}")
        if c["scenarios"] != 50:
            p.append(f"shipped bank: {c['scenarios']} scenarios, expected 50")
        if c["activity_domains"] < MIN_DOMAINS:
            p.append(f"shipped bank: {c['activity_domains']} activity domains, expected at least {MIN_DOMAINS}")
    return result


def _scenario_text(s: Scenario) -> str:
    parts = [s.turn_1_user, s.turn_2_user, s.turn_1_image or "", s.turn_2_image or ""]
    return " ".join(parts).lower()


def check_near_duplicates(bank: Bank) -> CheckResult:
    """Check 6: pairs of scenarios whose text or structure overlaps too much.

    A contrast item and the bank item it names by `pair_id` are meant to mirror
    each other and are not compared."""
    result = CheckResult("near_duplicates")
    for a, b in itertools.combinations(bank.scenarios, 2):
        if a.pair_id is not None and a.pair_id == b.pair_id and {a.subset, b.subset} == {"bank", "contrast"}:
            continue
        text = difflib.SequenceMatcher(None, _scenario_text(a), _scenario_text(b), autojunk=False).ratio()
        if text >= TEXT_SIMILARITY_THRESHOLD:
            result.problems.append(f"{a.scenario_id} ~ {b.scenario_id}: text similarity {text:.2f}")
            continue
        if (a.cue_type, a.target_context) == (b.cue_type, b.target_context):
            speech = difflib.SequenceMatcher(None, f"{a.turn_1_user}|{a.turn_2_user}".lower(),
                                             f"{b.turn_1_user}|{b.turn_2_user}".lower()).ratio()
            if speech >= SPEECH_SIMILARITY_THRESHOLD:
                result.problems.append(
                    f"{a.scenario_id} ~ {b.scenario_id}: same shift type and target with speech similarity {speech:.2f}")
    return result


def lock_hashes(directory: Path) -> dict:
    hashes = {}
    for key, name in LOCK_FILES.items():
        path = directory / name
        hashes[key] = hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None
    hashes["judge_prompt_sha256"] = (hashlib.sha256(JUDGE_TEMPLATE.read_bytes()).hexdigest()
                                     if JUDGE_TEMPLATE.exists() else None)
    return hashes


def write_lock(directory: Path) -> Path:
    path = directory / "MANIFEST.lock.json"
    data = {"benchmark_version": BENCHMARK_VERSION, **lock_hashes(directory)}
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def check_lockfile(directory: Path, *, required: bool = False) -> CheckResult:
    """Computed hashes against MANIFEST.lock.json; drift fails unless the version was bumped.

    A missing lockfile is a warning unless `required` (the shipped bank)."""
    result = CheckResult("lockfile")
    path = directory / "MANIFEST.lock.json"
    if not path.exists():
        message = f"{path}: missing; run `wearsim validate --scenarios {directory} --write-lock` to lock this bank"
        (result.problems if required else result.warnings).append(message)
        return result
    try:
        lock = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        result.problems.append(f"{path}: line {exc.lineno}: invalid JSON: {exc.msg}")
        return result
    computed = lock_hashes(directory)
    if computed["judge_prompt_sha256"] is None:
        result.problems.append(f"{JUDGE_TEMPLATE}: judge prompt template missing")
    if lock.get("benchmark_version") != BENCHMARK_VERSION:
        return result  # a version bump re-baselines the hashes
    for key, value in computed.items():
        if value is not None and lock.get(key) != value:
            result.problems.append(
                f"{path}: {key} drifted (bank content changed without a BENCHMARK_VERSION bump; "
                "bump it or run `wearsim validate --write-lock` for an intended change)")
    return result


def validate_bank(bank: Bank) -> list[CheckResult]:
    shipped = is_shipped(bank)
    checks = [check_token_leakage(bank), check_object_names(bank), check_structure(bank, shipped=shipped),
              check_near_duplicates(bank)]
    if bank.format == "v1":
        checks.append(check_lockfile(Path(bank.source), required=shipped))
    else:
        checks.append(CheckResult("lockfile", warnings=[f"{bank.source}: a JSON Lines bank has no lockfile"]))
    return checks
