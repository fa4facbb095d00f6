"""The bank validator: structural checks 1, 2, 3 and 6, the authoring checks
(camera blocks, answer lists, repair anchors: `benchmark.bank.authoring`),
and the lockfile. Check 6's search is `benchmark.bank.duplicates`, the lockfile's hashes
`benchmark.bank.lockfile`, the shipped bank's counts `benchmark.bank.counts`. The
semantic checks 4 and 5 need a model and live in `benchmark.bank.semantic`.

Each check returns a `CheckResult` listing every problem it found (nothing
stops at the first problem) and the warnings that do not fail it. The shipped
bank's exact distributions are enforced only on the shipped bank; any other
bank gets its counts reported. The authoring rules of v1.1 (camera blocks of
2-4 sentences naming no listed object, rich scenario-specific answer lists,
repair anchors naming both objects) are errors on the shipped bank and
warnings on any other bank, whose authors may follow other rules
(`--strict` turns the warnings into failures).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from benchmark.bank.authoring import (
    ABSENCE,
    answer_list_findings,
    camera_block_findings,
    is_generic,
    mentions,
    object_name_findings,
    repair_anchor_findings,
    sentences,
)
from benchmark.bank.counts import shipped_count_problems
from benchmark.bank.duplicates import near_duplicates
from benchmark.bank.lockfile import lock_drift
from core.scenario import (
    COGNITIVE_LOADS,
    CUE_TYPES,
    DIFFICULTY_TIERS,
    JSONL_RENAMES,
    SHIPPED_BANK,
    TARGET_CONTEXTS,
    TIME_GAP_BUCKETS,
    Bank,
    BankError,
    load_bank,
)

SPEECH_FIELDS = ("turn_1_user", "turn_2_user", "turn_3_repair_anchor_deictic")
ID_PATTERN = re.compile(r"^sc-\d{2,}$")
CONTRAST_ID_PATTERN = re.compile(r"^(?:sc|adv|ct)-\d{2,}$")
# the answer list that must not be empty for each target; current and prior
# items also need the other of the two, clarify and abstain items need only their own
TARGET_LISTS = {
    "current": ("current_answers", "prior_answers"),
    "prior": ("current_answers", "prior_answers"),
    "clarify": ("clarify_indicators",),
    "abstain": ("abstain_indicators",),
}

# check 3: no text field may be longer than this (it also bounds checks 2 and 6)
MAX_TEXT_CHARS = 2000
TEXT_FIELDS = (
    "context_image",
    "turn_1_image",
    "turn_2_image",
    "turn_1_user",
    "turn_2_user",
    "turn_3_repair_anchor",
    "turn_3_repair_anchor_deictic",
)


@dataclass(kw_only=True)
class CheckResult:
    name: str
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    details: dict = field(default_factory=dict)  # per scenario id, what a check found (the semantic checks)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict:
        out = {"name": self.name, "ok": self.ok, "problems": list(self.problems), "warnings": list(self.warnings)}
        if self.details:
            out["per_scenario"] = dict(self.details)
        return out


def is_shipped(bank: Bank) -> bool:
    return bank.format == "v1" and Path(bank.source).resolve() == SHIPPED_BANK.resolve()


@lru_cache(maxsize=1 << 16)
def _token_pattern(token: str) -> re.Pattern:
    return re.compile(r"\b" + re.escape(token) + r"\b", re.IGNORECASE)


def _has_token(text: str, token: str) -> bool:
    return _token_pattern(token).search(text) is not None


def check_token_leakage(bank: Bank) -> CheckResult:
    """Check 1: no current/prior answer token in any user speech (named repair anchor exempt)."""
    result = CheckResult(name="token_leakage")
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


def check_object_names(bank: Bank, *, shipped: bool = False) -> CheckResult:
    """Check 2: no camera block names an object of the scenario's own answer lists
    (`benchmark.bank.authoring.object_name_findings`)."""
    problems, warnings = object_name_findings(bank, shipped=shipped)
    return CheckResult(name="object_names", problems=problems, warnings=warnings)


def check_camera_blocks(bank: Bank, *, shipped: bool = False) -> CheckResult:
    """Camera blocks of 2-4 sentences that narrate no absence (`benchmark.bank.authoring`)."""
    problems, warnings = camera_block_findings(bank, shipped=shipped)
    return CheckResult(name="camera_blocks", problems=problems, warnings=warnings)


def check_answer_lists(bank: Bank, *, shipped: bool = False) -> CheckResult:
    """Answer lists a judge can use (`benchmark.bank.authoring.answer_list_findings`)."""
    problems, warnings = answer_list_findings(bank, shipped=shipped)
    return CheckResult(name="answer_lists", problems=problems, warnings=warnings)


def check_repair_anchors(bank: Bank, *, shipped: bool = False) -> CheckResult:
    """The named repair anchor names the intended object and the wrong one
    (`benchmark.bank.authoring.repair_anchor_findings`)."""
    problems, warnings = repair_anchor_findings(bank, shipped=shipped)
    return CheckResult(name="repair_anchors", problems=problems, warnings=warnings)


def check_structure(bank: Bank, *, shipped: bool) -> CheckResult:
    """Check 3: ids, enum values (`turn_3_target_context` too), context_image placement,
    answer lists, distributions."""
    result = CheckResult(name="schema_and_structure")
    p = result.problems
    seen: Counter[str] = Counter(s.scenario_id for s in bank.scenarios)
    for sid, n in seen.items():
        if n > 1:
            p.append(f"{sid}: scenario_id used {n} times")
    jsonl_names = {ours: theirs for theirs, ours in JSONL_RENAMES.items()} if bank.format == "jsonl" else {}
    enums = {
        "target_context": TARGET_CONTEXTS,
        "cue_type": CUE_TYPES,
        "difficulty_tier": DIFFICULTY_TIERS,
        "cognitive_load": COGNITIVE_LOADS,
        "time_gap_bucket": TIME_GAP_BUCKETS,
    }
    for s in bank.scenarios:
        for name in TEXT_FIELDS:
            value = getattr(s, name) or ""
            if len(value) > MAX_TEXT_CHARS:
                p.append(
                    f"{s.scenario_id}: field '{name}' is {len(value):,} characters; the limit is "
                    f"{MAX_TEXT_CHARS:,} (a camera block is 2-4 sentences, a turn one utterance)"
                )
        if s.subset == "contrast" and not CONTRAST_ID_PATTERN.match(s.scenario_id):
            p.append(f"{s.scenario_id}: field 'scenario_id' must look like sc-01, adv-01 or ct-01 on a contrast item")
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
        repair = s.turn_3_target_context
        if repair is not None and repair not in TARGET_CONTEXTS:
            p.append(
                f"{s.scenario_id}: field 'turn_3_target_context' is {repair!r}; allowed: "
                f"{', '.join(TARGET_CONTEXTS)} or null"
            )
        elif repair is not None and s.target_context in ("current", "prior") and repair != s.target_context:
            p.append(
                f"{s.scenario_id}: field 'turn_3_target_context' is {repair!r} on a {s.target_context} item; "
                "a repair of a current or prior item points at the same context"
            )
        elif shipped and s.target_context == "clarify" and repair not in ("current", "prior"):
            p.append(
                f"{s.scenario_id}: field 'turn_3_target_context' must be current or prior on a shipped clarify "
                "item: its named repair anchor resolves the ambiguity"
            )
    if shipped:
        p.extend(shipped_count_problems(bank))
    return result


def check_near_duplicates(bank: Bank) -> CheckResult:
    """Check 6 (`benchmark.bank.duplicates`)."""
    return CheckResult(name="near_duplicates", problems=near_duplicates(bank, MAX_TEXT_CHARS))


def check_lockfile(directory: Path, *, required: bool = False) -> CheckResult:
    """The bank's files against MANIFEST.lock.json (`benchmark.bank.lockfile`); drift fails unless the version
    was bumped. A missing lockfile is a warning unless `required` (the shipped bank)."""
    drift = lock_drift(directory)
    if drift is not None:
        return CheckResult(name="lockfile", problems=drift)
    missing = (
        f"{directory / 'MANIFEST.lock.json'}: missing; run `wearsim validate --scenarios {directory} "
        "--write-lock` to lock this bank"
    )
    return (
        CheckResult(name="lockfile", problems=[missing])
        if required
        else CheckResult(name="lockfile", warnings=[missing])
    )


def check_scene_specs(bank: Bank, *, shipped: bool = False) -> CheckResult:
    """The scene specs (`benchmark.bank.scenes`): answer-key objects in view, nothing carried over unsaid."""
    from benchmark.bank.scenes import scene_spec_findings

    problems, warnings = scene_spec_findings(bank, mentions, shipped=shipped)
    return CheckResult(name="scene_specs", problems=problems, warnings=warnings)


def check_proactive(bank: Bank, *, shipped: bool = False) -> CheckResult:
    """The proactive subset's authoring checks (`benchmark.bank.proactive`) on the bank directory's
    proactive.json, its ids and domains held against the three-turn bank's (all of it, even when `bank` was
    narrowed to a subset)."""
    from benchmark.bank.proactive import proactive_findings

    whole = bank
    if bank.subset is not None:
        try:
            whole = load_bank(bank.source)
        except BankError:
            pass
    problems, warnings = proactive_findings(
        Path(bank.source),
        proactive_rules(),
        shipped=shipped,
        bank_ids={s.scenario_id for s in whole.scenarios},
        bank_domains={s.activity_domain for s in whole.scenarios},
    )
    return CheckResult(name="proactive", problems=problems, warnings=warnings)


def proactive_rules():
    """The bank's text rules the proactive checks reuse (`benchmark.bank.proactive.TextRules`)."""
    from benchmark.bank.proactive import TextRules

    return TextRules(mentions=mentions, sentences=sentences, absence=ABSENCE, is_generic=is_generic)


def has_proactive(bank: Bank) -> bool:
    """The bank's proactive set is checked: the shipped bank's (required), or a v1 bank directory's
    proactive.json where there is one; not when the bank was narrowed to another subset."""
    from core.proactive_scenario import PROACTIVE_FILE, SUBSET

    if bank.format != "v1" or bank.subset not in (None, SUBSET):
        return False
    return is_shipped(bank) or (Path(bank.source) / PROACTIVE_FILE).exists()


def validate_bank(bank: Bank) -> list[CheckResult]:
    """Every check of the bank; a bank narrowed to the proactive subset (`--subset proactive`) gets the
    proactive check and the lockfile only (its three-turn scenarios were all left out)."""
    shipped = is_shipped(bank)
    checks = [
        check_token_leakage(bank),
        check_object_names(bank, shipped=shipped),
        check_camera_blocks(bank, shipped=shipped),
        check_answer_lists(bank, shipped=shipped),
        check_repair_anchors(bank, shipped=shipped),
        check_structure(bank, shipped=shipped),
        check_near_duplicates(bank),
        check_scene_specs(bank, shipped=shipped),
    ]
    if bank.subset == "proactive":
        checks = []
    if has_proactive(bank):
        checks.append(check_proactive(bank, shipped=shipped))
    if bank.format == "v1":
        checks.append(check_lockfile(Path(bank.source), required=shipped))
    else:
        checks.append(CheckResult(name="lockfile", warnings=[f"{bank.source}: a JSON Lines bank has no lockfile"]))
    return checks
