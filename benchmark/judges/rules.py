"""The rules' reading of a reply: a deterministic label from the code signals.

These hand-written rules were the lexical judge until issue 46; they are now the first thing the
offline judge (`benchmark.judges.lexical`, a small learned model) reads, and the label it falls
back to where real replies gave it nothing to learn from. They read words, not meaning. The
rules, in the order they are applied (docs/offline_judge.md repeats them):

1. An empty response is unscored ("empty response"). A response that opens by
   declaring the context it reads ("RELEVANT CONTEXT: prior - ...") gets that
   label, or abstain when its answer then declines.
2. clarify: the response asks what "this" is, what the user holds or which
   one they mean, and names no answer word outside its examples; or it asks
   the user a clarifying question (a sentence
   ending in "?" that holds a clarifying pattern such as "which one" or "do
   you mean", or a clarify indicator) and does not commit to exactly one of
   the current and prior lists (it names both, or neither); or it opens by
   asking or offering which of two things is meant. Not when it says it
   answers anyway ("Assuming so: ...", "I'll assume X.").
3. abstain: the response declines (a decline pattern such as "I can't see"
   or an abstain indicator, not followed by an answer: "I can't be sure, but
   ..." is a hedge; or it says the picture does not hold the answer) and
   names nothing from the current list.
4. A contrastive phrase decides between current and prior: the list on its
   present side wins; without a present side, the list it rejects loses.
5. Otherwise the list with more hits (word-boundary plus fuzzy) wins; a tie
   with hits on both goes to the list mentioned first in the response. Hits
   named only in passing (`benchmark.judges.mentions`: "setting X aside",
   "unlike X", "or did you mean X?", the part before a "but" that turns to
   the other frame) are left out. Both lists named within one hit of each
   other while the frame descriptions side with the other list: unscored,
   "mixed: names both scenes" (never a guess).
6. No current or prior hits: a clarify indicator gives clarify.
7. No answer words: the words only one frame's description holds decide.
8. Nothing at all: unscored with reason "no signal" (never a guessed label).

Each decision has a strength (`LexicalDecision.strength`); decisions weaker
than `min_strength` (default `MIN_STRENGTH`) are unscored.

Copied camera words: a reply can repeat the camera description it was given
(small models echo their input). An answer-list token that also appears in
that turn's camera block (`[Camera: ...]` of the judged user message) is not
evidence on its own: a list's copied hits count only when the reply also
names that list with a word of its own. A contrastive phrase whose present
side holds only copied words commits to nothing; its rejected side still
loses.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmark.judges.evidence import (
    LexicalEvidence,
    copied_tokens,
    declines_with_pointers_only,
    frame_evidence,
    gather_evidence,
    opens_with_either_or_question,
    opens_with_which_question,
)
from benchmark.judges.mentions import commits_anyway
from benchmark.judges.moves import (
    asks_referent,
    declared_context,
    declines_after_header,
    names_outside_examples,
    says_view_lacks_answer,
)
from benchmark.judges.signals import code_signals
from core.scenario import AnswerKey

NO_SIGNAL = "no signal"  # rule 8: the reply names nothing of any list and no frame's words


@dataclass(frozen=True, kw_only=True)
class LexicalDecision:
    label: str | None  # None: unscored
    rule: str  # the rule that decided, the verdict's rationale
    strength: float = 0.0  # how much evidence separated the label (0 when unscored); see `DECISION_STRENGTH`


# How strongly each kind of decision separates its label from the others. The coverage-agreement
# curve on the development set (docs/offline_judge.md) sweeps a threshold over these; `MIN_STRENGTH` is the
# operating point: weaker decisions are left unscored.
DECISION_STRENGTH = {
    "declared": 3.0,
    "clarify": 3.0,
    "abstain": 3.0,
    "contrast": 3.0,
    "set aside": 1.0,
    "clarify indicators": 1.0,
}
MIN_STRENGTH = 0.0


def _count_strength(winner: int, loser: int) -> float:
    """A count decision: one list alone 2 + its hits (at most 4); otherwise the margin, 0.5 for a tie."""
    if loser == 0:
        return 2.0 + min(winner, 2)
    return float(max(winner - loser, 0.5))


def lexical_label(
    response: str,
    answers: AnswerKey,
    signals: dict | None = None,
    *,
    camera: str | None = None,
    frames: tuple[str | None, str | None] | None = None,
) -> tuple[str | None, str]:
    """(label or None, the rule that decided it). `camera` is the camera block
    of the judged turn as sent: answer words the reply shares with it are not
    evidence on their own. `frames` is (the earlier frames' description, the
    current frame's description) of the scenario, read only when the reply
    names no answer word (rule 7)."""
    decision = lexical_decision(response, answers, signals, camera=camera, frames=frames)
    return decision.label, decision.rule


def lexical_decision(
    response: str,
    answers: AnswerKey,
    signals: dict | None = None,
    *,
    camera: str | None = None,
    frames: tuple[str | None, str | None] | None = None,
    min_strength: float = MIN_STRENGTH,
) -> LexicalDecision:
    """The label, the rule that decided it and how strongly; a decision weaker than
    `min_strength` is unscored (`below the operating point: ...`)."""
    decision = _decide(response, answers, signals, camera, frames)
    if decision.label is not None and decision.strength < min_strength:
        return LexicalDecision(label=None, rule=f"below the operating point: {decision.rule}")
    return decision


def rule_reading(
    response: str, answers: AnswerKey, *, camera: str | None = None, frames: tuple[str | None, str | None] | None = None
) -> tuple[LexicalDecision, LexicalEvidence | None, dict | None]:
    """The rules' decision with the evidence and code signals it read (both None for an empty
    reply): what the offline judge's features (`benchmark.judges.features`) are built from."""
    if not response or not response.strip():
        return LexicalDecision(label=None, rule="empty response"), None, None
    signals = code_signals(response, answers)
    ev = gather_evidence(response, signals, copied_tokens(camera, answers))
    return _decide_from(ev, response, answers, signals, camera, frames), ev, signals


def _decide(response, answers, signals, camera, frames) -> LexicalDecision:
    if not response or not response.strip():
        return LexicalDecision(label=None, rule="empty response")
    signals = signals if signals is not None else code_signals(response, answers)
    ev = gather_evidence(response, signals, copied_tokens(camera, answers))
    return _decide_from(ev, response, answers, signals, camera, frames)


def _decide_from(ev, response, answers, signals, camera, frames) -> LexicalDecision:
    note = (
        f" ({ev.copied} answer word{'s' if ev.copied != 1 else ''} copied from the camera block not counted)"
        if ev.copied
        else ""
    )
    said = f" ({ev.passing} named in passing not counted)" if ev.passing else ""
    current, prior = ev.answer_current, ev.answer_prior
    commits_to_one = (current > 0) != (prior > 0)
    answers_anyway = (current or prior) and commits_anyway(response)
    declared = declared_context(response)
    if declared is not None:
        if declines_after_header(response):
            return LexicalDecision(
                label="abstain",
                rule=f"rule 1: declares the {declared} context, then declines" + note,
                strength=DECISION_STRENGTH["declared"],
            )
        return LexicalDecision(
            label=declared,
            rule=f"rule 1: declares the {declared} context and answers from it" + note,
            strength=DECISION_STRENGTH["declared"],
        )
    if asks_referent(response) and not names_outside_examples(response, answers):
        return LexicalDecision(
            label="clarify",
            rule="rule 2: asks what the user means and answers nothing" + note,
            strength=DECISION_STRENGTH["clarify"],
        )
    if ev.clarifying_question and not answers_anyway and (ev.only_questions or not commits_to_one):
        return LexicalDecision(
            label="clarify",
            rule="rule 2: asks a clarifying question without committing to one frame" + note,
            strength=DECISION_STRENGTH["clarify"],
        )
    if opens_with_either_or_question(response) and not answers_anyway:
        return LexicalDecision(
            label="clarify",
            rule="rule 2: opens by asking which of two things the user means" + note,
            strength=DECISION_STRENGTH["clarify"],
        )
    if opens_with_which_question(response, signals) and not answers_anyway:
        return LexicalDecision(
            label="clarify",
            rule="rule 2: opens by asking which thing the user means" + note,
            strength=DECISION_STRENGTH["clarify"],
        )
    if (ev.declines or ev.abstain or says_view_lacks_answer(response)) and ev.current == 0:
        return LexicalDecision(
            label="abstain",
            rule="rule 3: declines and names nothing from the current frame" + note,
            strength=DECISION_STRENGTH["abstain"],
        )
    if (ev.current or ev.prior) and ev.declines and declines_with_pointers_only(response, signals):
        return LexicalDecision(
            label="abstain",
            rule="rule 3: declines; its answer words only name what it cannot see or where to look next" + note,
            strength=DECISION_STRENGTH["abstain"],
        )
    contrast = signals.get("contrastive")
    if contrast:
        own = {"current_answers": ev.current, "prior_answers": ev.prior}
        toward = contrast["toward"] if own.get(contrast["toward"], 0) else None  # not on copied words alone
        if toward:
            label = toward.split("_")[0]
            return LexicalDecision(
                label=label,
                rule=f"rule 4: contrastive phrase ({contrast['pattern']}) commits to {label}" + note,
                strength=DECISION_STRENGTH["contrast"],
            )
        if contrast["against"] in ("current_answers", "prior_answers"):
            label = "current" if contrast["against"] == "prior_answers" else "prior"
            return LexicalDecision(
                label=label,
                rule=f"rule 4: contrastive phrase ({contrast['pattern']}) rejects the other frame" + note,
                strength=DECISION_STRENGTH["contrast"],
            )
    if ev.dismissed_only:
        label = "current" if ev.dismissed_only == "prior_answers" else "prior"
        return LexicalDecision(
            label=label,
            rule=f"rule 5: names only {ev.dismissed_only.split('_')[0]} words, and sets them aside" + note,
            strength=DECISION_STRENGTH["set aside"],
        )
    if current or prior:
        if current != prior:
            label = "current" if current > prior else "prior"
            rule = f"rule 5: {current} current vs {prior} prior hits" + said + note
        else:
            label = "current" if (ev.first_current or 0) <= (ev.first_prior or 0) else "prior"
            rule = f"rule 5: tie at {current} hits, {label} mentioned first" + said + note
        strength = _count_strength(max(current, prior), min(current, prior))
        if min(current, prior) and abs(current - prior) <= 1 and frames is not None:
            now, earlier = frame_evidence(response, frames, camera)
            if (now > earlier) != (label == "current") and now != earlier:  # the frames side with the other list
                return LexicalDecision(
                    label=None,
                    rule=f"mixed: names both scenes ({current} current vs {prior} prior hits; "
                    f"{now} vs {earlier} words of the frame descriptions)" + said + note,
                )
        return LexicalDecision(label=label, rule=rule, strength=strength)
    if ev.clarify:
        return LexicalDecision(
            label="clarify",
            rule="rule 6: clarify indicators and no frame named" + note,
            strength=DECISION_STRENGTH["clarify indicators"],
        )
    if frames is not None:
        now, earlier = frame_evidence(response, frames, camera)
        if now != earlier:
            label = "current" if now > earlier else "prior"
            return LexicalDecision(
                label=label,
                rule=f"rule 7: no answer words; {now} words of the current frame's description "
                f"vs {earlier} of the earlier one's" + note,
                strength=0.5 * abs(now - earlier),
            )
    return LexicalDecision(label=None, rule=NO_SIGNAL + note)


def scenario_frames(scenario) -> tuple[str | None, str | None]:
    """(earlier, current) frame descriptions of a scenario: the context frame with Turn 1's, and Turn 2's."""
    earlier = " ".join(t for t in (scenario.context_image, scenario.turn_1_image) if t)
    return earlier or None, scenario.turn_2_image
