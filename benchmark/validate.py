"""The bank validator: structural checks 1, 2, 3 and 6, the authoring checks
(camera blocks, answer lists, repair anchors), and the lockfile. Check 6's
search is `benchmark.validate_duplicates`, the lockfile's hashes
`benchmark.lockfile`, the shipped bank's counts `benchmark.bank_counts`. The
semantic checks 4 and 5 need a model and live in `benchmark.validate_semantic`.

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

from benchmark.bank_counts import shipped_count_problems
from benchmark.lockfile import lock_drift
from benchmark.validate_duplicates import near_duplicates
from core.nouns import as_object_noun, object_nouns_in
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
IMAGE_FIELDS = ("context_image", "turn_1_image", "turn_2_image")
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

# authoring rules (docs/scenario_authoring_rules.md): errors on the shipped
# bank, warnings on any other bank
CAMERA_SENTENCES = (2, 4)  # sentences per camera block
MIN_ANSWERS = 8  # entries per current and prior list
MIN_PHRASES = 3  # of which multi-word phrases
MIN_INDICATORS = 4  # entries per clarify and abstain list
MIN_OWN_INDICATORS = 2  # of which no other scenario uses in the same list
# answer tokens that fire on replies about anything: the validator rejects them
# as list entries (inside a phrase they are fine: "wait a day", "bake at 180 c")
GENERIC_TOKENS = frozenset(
    """
    fine ok okay good bad great better best worse wrong right correct yes no maybe
    wait ready set done normal safe enough more less too much little lot
    it this that these those one thing things stuff something part
    now then later before after again first next last still
    time minutes minute seconds hours hour day days amount level size number reading value setting
    water hot cold warm cool high low big small large long short new old full empty
    red blue green yellow white black brown orange pink purple grey gray
    check use try keep make put add go stop start look see
""".split()
)
BARE_NUMBER = re.compile(r"^[\d.,:/%+-]+$")
# a camera block describes what is there; it does not narrate what is not
ABSENCE = re.compile(
    r"\b(?:nothing (?:from|of)|no longer|out of (?:frame|view|sight|shot)"
    r"|not (?:visible|in view|in (?:the )?frame|shown)"
    r"|no (?:part|sign|trace) of|(?:is|are) (?:gone|missing|absent)|behind the (?:viewer|camera)|cannot be seen"
    r"|can't be seen|nowhere (?:to be seen|in sight))\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")

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


def _token_forms(token: str) -> set[str]:
    """The token and its regular plural or singular (so "herbs" finds "herb" too)."""
    token = token.strip().lower()
    forms = {token, token + "s", token + "es"}
    if token.endswith("ies"):
        forms.add(token[:-3] + "y")
    elif token.endswith("es"):
        forms.update({token[:-2], token[:-1]})
    elif token.endswith("s") and not token.endswith("ss"):
        forms.add(token[:-1])
    if token.endswith("y") and token[-2:-1] not in ("a", "e", "i", "o", "u"):
        forms.add(token[:-1] + "ies")
    return {f for f in forms if f}


def mentions(text: str | None, token: str) -> bool:
    """`token` (or its plural or singular) occurs in `text` as whole words, case-insensitive;
    works for tokens that begin or end with a non-word character ("5/8", "ft-lb")."""
    if not text or not token.strip():
        return False
    return _mention_pattern(token).search(text) is not None


@lru_cache(maxsize=1 << 16)
def _mention_pattern(token: str) -> re.Pattern:
    """One pattern for the token's forms (compiled once per token: a bank repeats its tokens)."""
    bodies = sorted(
        (r"\s+".join(re.escape(word) for word in form.split()) for form in _token_forms(token)), key=len, reverse=True
    )
    return re.compile(rf"(?<!\w)(?:{'|'.join(bodies)})(?!\w)", re.IGNORECASE)


def sentences(text: str) -> list[str]:
    """The sentences of a camera block (split after ., ! or ? followed by a space)."""
    return [part for part in _SENTENCE_END.split(text.strip()) if part.strip()]


def _flag(result: CheckResult, shipped: bool, message: str) -> None:
    """An authoring-rule finding: a problem on the shipped bank, a warning elsewhere."""
    (result.problems if shipped else result.warnings).append(message)


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
    """Check 2: no camera block names an object that is one of the scenario's own
    current/prior answer tokens: that fails on any bank. On the shipped bank these
    fail too (elsewhere they are warnings): a listed noun inside an answer phrase
    ("knife" of "paring knife"), any other answer token ("ceiling", "step count"),
    and any other listed object noun."""
    result = CheckResult(name="object_names")
    for s in bank.scenarios:
        tokens = list(dict.fromkeys(t.strip().lower() for t in s.answers.current_answers + s.answers.prior_answers))
        whole = {as_object_noun(t) for t in tokens} - {None}
        inside = {noun for t in tokens for noun in object_nouns_in(t)} - whole
        for name in IMAGE_FIELDS:
            text = getattr(s, name)
            if not text:
                continue
            named = object_nouns_in(text)
            where = f"{s.scenario_id}: field '{name}'"
            for noun in named:
                if noun in whole:
                    result.problems.append(f"{where} names an object: {noun!r} (an answer token)")
                elif noun in inside:
                    _flag(result, shipped, f"{where} names an object: {noun!r} (part of an answer token)")
                elif shipped:
                    result.problems.append(
                        f"{where} names an object: {noun!r} "
                        "(not an answer token; the shipped bank names no listed object)"
                    )
                else:
                    result.warnings.append(f"{where} names an object: {noun!r} (not an answer token)")
            reported: set[str] = set()
            for token in tokens:
                if as_object_noun(token) in named or any(noun in named for noun in object_nouns_in(token)):
                    continue  # reported above as the object noun it is or holds
                if mentions(text, token) and not (_token_forms(token) & reported):
                    reported |= _token_forms(token)
                    _flag(result, shipped, f"{where} contains answer token {token!r}")
    return result


def check_camera_blocks(bank: Bank, *, shipped: bool = False) -> CheckResult:
    """Camera blocks are 2-4 sentences, and describe what is there: none narrates an
    absence ("nothing from the garden is visible"); on an absent_referent item the
    absence must be inferred from what the camera does show."""
    result = CheckResult(name="camera_blocks")
    low, high = CAMERA_SENTENCES
    for s in bank.scenarios:
        for name in IMAGE_FIELDS:
            text = getattr(s, name)
            if not text:
                continue
            n = len(sentences(text))
            if not low <= n <= high:
                _flag(
                    result,
                    shipped,
                    f"{s.scenario_id}: field '{name}' has {n} sentence{'s' if n != 1 else ''}; "
                    f"a camera block has {low} to {high}",
                )
            match = ABSENCE.search(text)
            if match:
                _flag(
                    result,
                    shipped,
                    f"{s.scenario_id}: field '{name}' narrates an absence ({match.group(0)!r}); "
                    "describe what the camera shows",
                )
    return result


def is_generic(token: str) -> bool:
    """A stoplisted answer token: a generic word or a bare number."""
    token = token.strip().lower()
    return token in GENERIC_TOKENS or bool(BARE_NUMBER.match(token))


def check_answer_lists(bank: Bank, *, shipped: bool = False) -> CheckResult:
    """Answer lists a judge can use: current and prior lists of at least
    `MIN_ANSWERS` lower-case entries with `MIN_PHRASES` multi-word phrases, no
    stoplisted generic token or bare number, no entry in both lists; clarify and
    abstain lists of at least `MIN_INDICATORS` entries written for the scenario
    (at least `MIN_OWN_INDICATORS` entries no other scenario of the bank uses in
    that list). On another bank a clarify or abstain item's empty non-target
    lists are allowed (docs/schema.md)."""
    result = CheckResult(name="answer_lists")
    users: dict[tuple[str, str], set[str]] = {}
    for s in bank.scenarios:
        for name in ("clarify_indicators", "abstain_indicators"):
            for entry in {e.strip().lower() for e in getattr(s.answers, name)}:
                users.setdefault((name, entry), set()).add(s.scenario_id)
    for s in bank.scenarios:
        sid, answers = s.scenario_id, s.answers
        for name in ("current_answers", "prior_answers"):
            entries = getattr(answers, name)
            if not entries and not shipped and s.target_context in ("clarify", "abstain"):
                continue
            if len(entries) < MIN_ANSWERS:
                _flag(
                    result,
                    shipped,
                    f"{sid}: answer list '{name}' has {len(entries)} entries; at least "
                    f"{MIN_ANSWERS} (object name, technique and state words)",
                )
            phrases = sum(len(e.split()) > 1 for e in entries)
            if phrases < MIN_PHRASES:
                _flag(
                    result,
                    shipped,
                    f"{sid}: answer list '{name}' has {phrases} multi-word phrase"
                    f"{'s' if phrases != 1 else ''}; at least {MIN_PHRASES}",
                )
            for entry in entries:
                if is_generic(entry):
                    _flag(
                        result,
                        shipped,
                        f"{sid}: answer list '{name}' holds the generic token {entry!r} "
                        "(it fires on unrelated replies)",
                    )
                if entry != entry.strip().lower():
                    _flag(result, shipped, f"{sid}: answer list '{name}': {entry!r} must be lower-case and trimmed")
            for entry, n in Counter(e.strip().lower() for e in entries).items():
                if n > 1:
                    _flag(result, shipped, f"{sid}: answer list '{name}' repeats {entry!r}")
        both = {e.strip().lower() for e in answers.current_answers} & {e.strip().lower() for e in answers.prior_answers}
        for entry in sorted(both):
            _flag(result, shipped, f"{sid}: {entry!r} is in both current_answers and prior_answers")
        for name in ("clarify_indicators", "abstain_indicators"):
            entries = {e.strip().lower() for e in getattr(answers, name)}
            if not entries and not shipped and s.target_context != name.split("_")[0]:
                continue
            if len(entries) < MIN_INDICATORS:
                _flag(
                    result,
                    shipped,
                    f"{sid}: answer list '{name}' has {len(entries)} entries; at least {MIN_INDICATORS}",
                )
            own = sum(users[(name, e)] == {sid} for e in entries)
            if len(bank.scenarios) > 1 and own < MIN_OWN_INDICATORS:
                _flag(
                    result,
                    shipped,
                    f"{sid}: answer list '{name}' has {own} entr{'y' if own == 1 else 'ies'} "
                    f"of its own; at least {MIN_OWN_INDICATORS} written for this scenario "
                    "(not one list copied across the bank)",
                )
    return result


def check_repair_anchors(bank: Bank, *, shipped: bool = False) -> CheckResult:
    """The named repair anchor names the intended object and the wrong one: it holds
    a token of `current_answers` and one of `prior_answers`, the Turn 2 scene's and
    the earlier scene's (on a clarify item the wrong object may be a second current
    candidate; the anchor still names the earlier scene's object it is not)."""
    result = CheckResult(name="repair_anchors")
    for s in bank.scenarios:
        anchor = s.turn_3_repair_anchor
        for name in ("current_answers", "prior_answers"):
            tokens = getattr(s.answers, name)
            if not tokens:
                if shipped:
                    _flag(
                        result,
                        shipped,
                        f"{s.scenario_id}: answer list '{name}' is empty: the named repair anchor cannot be checked",
                    )
                continue
            if not any(mentions(anchor, token) for token in tokens):
                _flag(
                    result,
                    shipped,
                    f"{s.scenario_id}: field 'turn_3_repair_anchor' names nothing from "
                    f"'{name}'; it must name the intended and the wrong object",
                )
    return result


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
    """Check 6 (`benchmark.validate_duplicates`)."""
    return CheckResult(name="near_duplicates", problems=near_duplicates(bank, MAX_TEXT_CHARS))


def check_lockfile(directory: Path, *, required: bool = False) -> CheckResult:
    """The bank's files against MANIFEST.lock.json (`benchmark.lockfile`); drift fails unless the version
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
    """The scene specs (`benchmark.validate_scenes`): answer-key objects in view, nothing carried over unsaid."""
    from benchmark.validate_scenes import scene_spec_findings

    problems, warnings = scene_spec_findings(bank, mentions, shipped=shipped)
    return CheckResult(name="scene_specs", problems=problems, warnings=warnings)


def check_proactive(bank: Bank, *, shipped: bool = False) -> CheckResult:
    """The proactive subset's authoring checks (`benchmark.validate_proactive`) on the bank directory's
    proactive.json, its ids and domains held against the three-turn bank's (all of it, even when `bank` was
    narrowed to a subset)."""
    from benchmark.validate_proactive import proactive_findings

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
    """The bank's text rules the proactive checks reuse (`benchmark.validate_proactive.TextRules`)."""
    from benchmark.validate_proactive import TextRules

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
