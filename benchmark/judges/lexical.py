"""The lexical judge: a deterministic label from the code signals.

It needs no model and no credentials, so it is the fallback when no judge
family is available. It is not the publication judge: it reads words, not
meaning. The rules, in the order they are applied (docs/judging.md repeats
them with the agreement figure on the hand-labelled set):

1. An empty response is unscored ("empty response").
2. clarify: the response asks the user a clarifying question (a sentence
   ending in "?" that holds a clarifying pattern such as "which one" or "do
   you mean", or a clarify indicator) and does not commit to exactly one of
   the current and prior lists (it names both, or neither).
3. abstain: the response declines (a decline pattern such as "I can't see"
   or an abstain indicator) and names nothing from the current list.
4. A contrastive phrase decides between current and prior: the list on its
   present side wins; without a present side, the list it rejects loses.
5. Otherwise the list with more hits (word-boundary plus fuzzy) wins; a tie
   with hits on both goes to the list mentioned first in the response.
6. No current or prior hits: a clarify indicator gives clarify.
7. Nothing at all: unscored with reason "no signal" (never a guessed label).

Copied camera words: a reply can repeat the camera description it was given
(small models echo their input). An answer-list token that also appears in
that turn's camera block (`[Camera: ...]` of the judged user message) is not
evidence on its own: a list's copied hits count only when the reply also
names that list with a word of its own. A contrastive phrase whose present
side holds only copied words commits to nothing; its rejected side still
loses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from benchmark.judges.base import JudgeCase, Verdict
from benchmark.judges.signals import code_signals
from benchmark.scenario import AnswerKey

LEXICAL_JUDGE_NAME = "lexical"

_CLARIFY_PATTERN = re.compile(
    r"\b(?:which (?:one|of|do you|are you|item|thing)|do you mean|did you mean|are you (?:asking|referring|talking)"
    r"|could you (?:clarify|tell me|specify|say|point)|can you (?:clarify|specify|tell me which|point)"
    r"|what do you mean|not sure which|or (?:the|that|this|are you|do you)|you mean the)\b",
    re.IGNORECASE,
)
_DECLINE_PATTERN = re.compile(
    r"\b(?:i (?:can't|cannot|can not|don't|do not|couldn't) (?:see|tell|know|read|make out|determine|find|say|judge)"
    r"|(?:can't|cannot|unable to|not able to) (?:see|tell|determine|read|make out|know)"
    r"|(?:isn't|is not|aren't|are not|wasn't|was not|weren't|no longer|not) (?:visible|in (?:view|frame|the frame|sight))"
    r"|out of (?:view|frame|sight)|no way (?:for me )?to (?:know|tell)"
    r"|i (?:don't|do not) have (?:enough|any|that|access)|i'm not able|i am not able|i am unable|i'm unable"
    r"|(?:isn't|is not|wasn't|was not) (?:shown|captured|recorded))",
    re.IGNORECASE,
)
_QUESTION = re.compile(r"[^.?!]*\?")
_CAMERA_PREFIX = "[Camera: "
SCORED_LISTS = ("current_answers", "prior_answers", "clarify_indicators", "abstain_indicators")


def camera_block(user_message: str | None) -> str | None:
    """The camera text of a user turn built as `[Camera: {block}]\\n{speech}`
    (or a context message `[Camera: {block}]`); None when it has none."""
    if not user_message or not user_message.startswith(_CAMERA_PREFIX):
        return None
    head, sep, _ = user_message.rpartition("]\n")
    if sep:
        return head[len(_CAMERA_PREFIX):]
    return user_message[len(_CAMERA_PREFIX):-1] if user_message.endswith("]") else None


def copied_tokens(camera: str | None, answers: AnswerKey) -> dict[str, set[str]]:
    """Per answer list, the tokens the camera block itself contains (word
    boundary or fuzzy, as in the reply): a reply naming only these may have
    copied them."""
    if not camera:
        return {name: set() for name in SCORED_LISTS}
    signals = code_signals(camera, answers)
    return {name: set(signals["word_boundary"][name]) | {hit["token"] for hit in signals["fuzzy"][name]}
            for name in SCORED_LISTS}


@dataclass(frozen=True)
class LexicalEvidence:
    current: int
    prior: int
    clarify: int
    abstain: int
    clarifying_question: bool
    declines: bool
    first_current: int | None
    first_prior: int | None
    copied: int = 0  # hits not counted: only words copied from the camera block


def _first_position(response: str, signals: dict, name: str) -> int | None:
    lowered = response.lower()
    positions = []
    for token in signals["word_boundary"][name]:
        match = re.search(r"\b" + re.escape(token) + r"\b", response, re.IGNORECASE)
        if match:
            positions.append(match.start())
    for hit in signals["fuzzy"][name]:
        where = lowered.find(hit["matched"])
        if where >= 0:
            positions.append(where)
    return min(positions) if positions else None


def _only_questions(response: str) -> bool:
    sentences = [s.strip() for s in re.findall(r"[^.?!]+[.?!]*", response) if s.strip(" .?!")]
    return bool(sentences) and all(s.endswith("?") for s in sentences)


def gather_evidence(response: str, signals: dict, copied: dict[str, set[str]] | None = None) -> LexicalEvidence:
    """Hit counts per list; hits on `copied` tokens count only when the list
    also has a hit of its own."""
    dropped = 0

    def hits(name: str) -> int:
        nonlocal dropped
        tokens = list(signals["word_boundary"][name]) + [hit["token"] for hit in signals["fuzzy"][name]]
        echo = (copied or {}).get(name, set())
        if tokens and all(token in echo for token in tokens):
            dropped += len(tokens)
            return 0
        return len(tokens)

    counts = {name: hits(name) for name in SCORED_LISTS}
    questions = _QUESTION.findall(response)
    clarify_hits = counts["clarify_indicators"]
    clarifying = any(_CLARIFY_PATTERN.search(q) for q in questions) or bool(questions and clarify_hits)
    return LexicalEvidence(
        current=counts["current_answers"],
        prior=counts["prior_answers"],
        clarify=clarify_hits,
        abstain=counts["abstain_indicators"],
        clarifying_question=clarifying,
        declines=bool(_DECLINE_PATTERN.search(response)),
        first_current=_first_position(response, signals, "current_answers"),
        first_prior=_first_position(response, signals, "prior_answers"),
        copied=dropped,
    )


def lexical_label(response: str, answers: AnswerKey, signals: dict | None = None, *,
                  camera: str | None = None) -> tuple[str | None, str]:
    """(label or None, the rule that decided it). `camera` is the camera block
    of the judged turn as sent: answer words the reply shares with it are not
    evidence on their own."""
    if not response or not response.strip():
        return None, "empty response"
    signals = signals if signals is not None else code_signals(response, answers)
    ev = gather_evidence(response, signals, copied_tokens(camera, answers))
    note = (f" ({ev.copied} answer word{'s' if ev.copied != 1 else ''} copied from the camera block not counted)"
            if ev.copied else "")
    commits_to_one = (ev.current > 0) != (ev.prior > 0)
    only_questions = _only_questions(response)
    if ev.clarifying_question and (only_questions or not commits_to_one):
        return "clarify", "rule 2: asks a clarifying question without committing to one frame" + note
    if (ev.declines or ev.abstain) and ev.current == 0:
        return "abstain", "rule 3: declines and names nothing from the current frame" + note
    contrast = signals.get("contrastive")
    if contrast:
        own = {"current_answers": ev.current, "prior_answers": ev.prior}
        toward = contrast["toward"] if own.get(contrast["toward"], 0) else None  # not on copied words alone
        if toward:
            label = toward.split("_")[0]
            return label, f"rule 4: contrastive phrase ({contrast['pattern']}) commits to {label}" + note
        if contrast["against"] in ("current_answers", "prior_answers"):
            label = "current" if contrast["against"] == "prior_answers" else "prior"
            return label, f"rule 4: contrastive phrase ({contrast['pattern']}) rejects the other frame" + note
    if ev.current or ev.prior:
        if ev.current != ev.prior:
            label = "current" if ev.current > ev.prior else "prior"
            return label, f"rule 5: {ev.current} current vs {ev.prior} prior hits" + note
        first = "current" if (ev.first_current or 0) <= (ev.first_prior or 0) else "prior"
        return first, f"rule 5: tie at {ev.current} hits, {first} mentioned first" + note
    if ev.clarify:
        return "clarify", "rule 6: clarify indicators and no frame named" + note
    return None, "no signal" + note


class LexicalJudge:
    """`Judge` that labels from the code signals alone."""

    name = LEXICAL_JUDGE_NAME
    family = "lexical"

    async def label(self, case: JudgeCase) -> Verdict:
        return self.label_now(case)

    def label_now(self, case: JudgeCase) -> Verdict:
        label, rule = lexical_label(case.response, case.scenario.answers, camera=camera_block(case.user_message))
        if label is None:
            return Verdict(None, rule, self.name, unscored_reason=rule)
        return Verdict(label, rule, self.name)
