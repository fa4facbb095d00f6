"""The bank validator's authoring checks (docs/scenario_authoring_rules.md): camera blocks of 2-4
sentences that narrate no absence and name no listed object, rich scenario-specific answer lists, repair
anchors naming both objects; and the text rules they share (`mentions`, `sentences`, `is_generic`),
which the scene spec and proactive checks reuse. A finding is an error on the shipped bank and a
warning on any other bank. Each check returns its (problems, warnings); `benchmark.bank.validate` wraps them
as a `CheckResult`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from core.nouns import as_object_noun, object_nouns_in
from core.scenario import Bank

IMAGE_FIELDS = ("context_image", "turn_1_image", "turn_2_image")

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


@dataclass(kw_only=True)
class Findings:
    """One authoring check's problems and warnings: a finding is a problem on the shipped bank, a warning
    elsewhere (`flag`); a few findings are problems on any bank."""

    shipped: bool
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def flag(self, message: str) -> None:
        (self.problems if self.shipped else self.warnings).append(message)


def object_name_findings(bank: Bank, *, shipped: bool = False) -> tuple[list[str], list[str]]:
    """Check 2: no camera block names an object that is one of the scenario's own
    current/prior answer tokens: that fails on any bank. On the shipped bank these
    fail too (elsewhere they are warnings): a listed noun inside an answer phrase
    ("knife" of "paring knife"), any other answer token ("ceiling", "step count"),
    and any other listed object noun."""
    found = Findings(shipped=shipped)
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
                    found.problems.append(f"{where} names an object: {noun!r} (an answer token)")
                elif noun in inside:
                    found.flag(f"{where} names an object: {noun!r} (part of an answer token)")
                elif shipped:
                    found.problems.append(
                        f"{where} names an object: {noun!r} "
                        "(not an answer token; the shipped bank names no listed object)"
                    )
                else:
                    found.warnings.append(f"{where} names an object: {noun!r} (not an answer token)")
            reported: set[str] = set()
            for token in tokens:
                if as_object_noun(token) in named or any(noun in named for noun in object_nouns_in(token)):
                    continue  # reported above as the object noun it is or holds
                if mentions(text, token) and not (_token_forms(token) & reported):
                    reported |= _token_forms(token)
                    found.flag(f"{where} contains answer token {token!r}")
    return found.problems, found.warnings


def camera_block_findings(bank: Bank, *, shipped: bool = False) -> tuple[list[str], list[str]]:
    """Camera blocks are 2-4 sentences, and describe what is there: none narrates an
    absence ("nothing from the garden is visible"); on an absent_referent item the
    absence must be inferred from what the camera does show."""
    found = Findings(shipped=shipped)
    low, high = CAMERA_SENTENCES
    for s in bank.scenarios:
        for name in IMAGE_FIELDS:
            text = getattr(s, name)
            if not text:
                continue
            n = len(sentences(text))
            if not low <= n <= high:
                found.flag(
                    f"{s.scenario_id}: field '{name}' has {n} sentence{'s' if n != 1 else ''}; "
                    f"a camera block has {low} to {high}",
                )
            match = ABSENCE.search(text)
            if match:
                found.flag(
                    f"{s.scenario_id}: field '{name}' narrates an absence ({match.group(0)!r}); "
                    "describe what the camera shows",
                )
    return found.problems, found.warnings


def is_generic(token: str) -> bool:
    """A stoplisted answer token: a generic word or a bare number."""
    token = token.strip().lower()
    return token in GENERIC_TOKENS or bool(BARE_NUMBER.match(token))


def answer_list_findings(bank: Bank, *, shipped: bool = False) -> tuple[list[str], list[str]]:
    """Answer lists a judge can use: current and prior lists of at least
    `MIN_ANSWERS` lower-case entries with `MIN_PHRASES` multi-word phrases, no
    stoplisted generic token or bare number, no entry in both lists; clarify and
    abstain lists of at least `MIN_INDICATORS` entries written for the scenario
    (at least `MIN_OWN_INDICATORS` entries no other scenario of the bank uses in
    that list). On another bank a clarify or abstain item's empty non-target
    lists are allowed (docs/schema.md)."""
    found = Findings(shipped=shipped)
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
                found.flag(
                    f"{sid}: answer list '{name}' has {len(entries)} entries; at least "
                    f"{MIN_ANSWERS} (object name, technique and state words)",
                )
            phrases = sum(len(e.split()) > 1 for e in entries)
            if phrases < MIN_PHRASES:
                found.flag(
                    f"{sid}: answer list '{name}' has {phrases} multi-word phrase"
                    f"{'s' if phrases != 1 else ''}; at least {MIN_PHRASES}",
                )
            for entry in entries:
                if is_generic(entry):
                    found.flag(
                        f"{sid}: answer list '{name}' holds the generic token {entry!r} "
                        "(it fires on unrelated replies)",
                    )
                if entry != entry.strip().lower():
                    found.flag(f"{sid}: answer list '{name}': {entry!r} must be lower-case and trimmed")
            for entry, n in Counter(e.strip().lower() for e in entries).items():
                if n > 1:
                    found.flag(f"{sid}: answer list '{name}' repeats {entry!r}")
        both = {e.strip().lower() for e in answers.current_answers} & {e.strip().lower() for e in answers.prior_answers}
        for entry in sorted(both):
            found.flag(f"{sid}: {entry!r} is in both current_answers and prior_answers")
        for name in ("clarify_indicators", "abstain_indicators"):
            entries = {e.strip().lower() for e in getattr(answers, name)}
            if not entries and not shipped and s.target_context != name.split("_")[0]:
                continue
            if len(entries) < MIN_INDICATORS:
                found.flag(
                    f"{sid}: answer list '{name}' has {len(entries)} entries; at least {MIN_INDICATORS}",
                )
            own = sum(users[(name, e)] == {sid} for e in entries)
            if len(bank.scenarios) > 1 and own < MIN_OWN_INDICATORS:
                found.flag(
                    f"{sid}: answer list '{name}' has {own} entr{'y' if own == 1 else 'ies'} "
                    f"of its own; at least {MIN_OWN_INDICATORS} written for this scenario "
                    "(not one list copied across the bank)",
                )
    return found.problems, found.warnings


def repair_anchor_findings(bank: Bank, *, shipped: bool = False) -> tuple[list[str], list[str]]:
    """The named repair anchor names the intended object and the wrong one: it holds
    a token of `current_answers` and one of `prior_answers`, the Turn 2 scene's and
    the earlier scene's (on a clarify item the wrong object may be a second current
    candidate; the anchor still names the earlier scene's object it is not)."""
    found = Findings(shipped=shipped)
    for s in bank.scenarios:
        anchor = s.turn_3_repair_anchor
        for name in ("current_answers", "prior_answers"):
            tokens = getattr(s.answers, name)
            if not tokens:
                if shipped:
                    found.flag(
                        f"{s.scenario_id}: answer list '{name}' is empty: the named repair anchor cannot be checked",
                    )
                continue
            if not any(mentions(anchor, token) for token in tokens):
                found.flag(
                    f"{s.scenario_id}: field 'turn_3_repair_anchor' names nothing from "
                    f"'{name}'; it must name the intended and the wrong object",
                )
    return found.problems, found.warnings
