"""What the offline judge reads: one reply turned into a short vector of numbers.

Every feature describes the rubric (which frame the reply answers from, whether it asks back
or declines), not one model's wording. Four groups:

- the rules' reading (`benchmark.judges.rules.rule_reading`): the label the hand-written rules
  would give and how strongly, the answer words of each list outside passing mentions, the words
  named only in passing, a contrastive phrase, the frame descriptions' words;
- asking and declining: a clarifying question, a reply made only of questions, one that opens by
  asking which thing is meant, says it answers anyway, declines, says it cannot see or has no
  camera, or asks what the user holds;
- structure: length, list lines, headings and bold, questions and where they fall, where each
  frame's answer words first occur, a reply that names which context it answers from
  ("RELEVANT CONTEXT: current - ...") or speaks of "the previous image" / "the current frame";
- the camera blocks and the user's words: the reply's words found only in the current frame's
  description or only in the earlier one's, copied runs included (a reply that restates a
  camera block says which scene it is reading), and whether the user's Turn 2 words point back
  in time.

`FEATURE_NAMES` fixes the order; `reply_features` returns the vector and the rules' decision.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from benchmark.judges.evidence import (
    DECLINE_PATTERN,
    declines_with_pointers_only,
    frame_evidence,
    frame_words_with_copies,
    opens_with_either_or_question,
    opens_with_which_question,
)
from benchmark.judges.mentions import commits_anyway
from benchmark.judges.moves import MOVE_NAMES, reply_moves
from benchmark.judges.rules import LexicalDecision, rule_reading
from core.scenario import AnswerKey

FEATURE_NAMES = (
    # the rules' reading
    "rule_current",
    "rule_prior",
    "rule_clarify",
    "rule_abstain",
    "rule_mixed",
    "rule_strength",
    "answer_current",
    "answer_prior",
    "passing",
    "copied_only",
    "contrast",
    "frame_current",
    "frame_earlier",
    # asking and declining
    "clarifying_question",
    "only_questions",
    "opens_asking_which",
    "answers_anyway",
    "declines",
    "declines_pointers_only",
    "opens_declining",
    "short_decline",
    "cannot_see",
    "asks_what_held",
    "asks_for_more",
    # structure
    "length",
    "list_lines",
    "headings",
    "questions",
    "ends_with_question",
    "first_current",
    "first_prior",
    "declares_current",
    "declares_earlier",
    "speaks_of_now",
    "speaks_of_before",
    "past_markers",
    "present_markers",
    # camera blocks and user words
    "restates_current",
    "restates_earlier",
    "user_points_back",
    # what the reply does (benchmark.judges.moves)
    *MOVE_NAMES,
)

_LIST_LINE = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+", re.MULTILINE)
_HEADING = re.compile(r"^\s*#{1,6}\s|\*\*[^*\n]{2,80}\*\*", re.MULTILINE)
_CANNOT_SEE = re.compile(
    r"\b(?:(?:i )?(?:can't|cannot|can not|don't|do not|am unable to|am not able to) (?:currently )?"
    r"(?:see|view|access) (?:the |your |any |what|an? )?(?:image|camera|picture|photo|video|scene|what|it|that)?"
    r"|no (?:image|camera|picture|photo|visual)s?(?: feed| input| information)?"
    r"|(?:without|don't have|do not have|lack) (?:a |any )?(?:image|camera|picture|photo|visual|view)"
    r"|as an ai|i (?:can )?only (?:describe|see what)|i have no (?:memory|way of seeing))\b",
)
_ASKS_WHAT_HELD = re.compile(
    r"\b(?:what (?:are you|is it you're|is that you're|do you have) (?:holding|using|looking at|working (?:on|with))"
    r"|what (?:tool|item|object|thing) (?:is|are|do)|(?:tell|show) me (?:what|which)|describe (?:what|it|the))\b",
)
# every _ASKS_WHAT_HELD match holds one of these (a cheap test before the pattern itself)
_ASKS_WHAT_HELD_KEYS = ("what ", "tell me", "show me", "describe")
# "RELEVANT CONTEXT: current - ...", "Context: earlier frame", "Visual context: prior"
_DECLARED = re.compile(r"\bcontext\W{0,3}\s*[:\-\u2014]\s*\W{0,2}(current|present|now|prior|previous|earlier|past)\b")
_NOW_REF = re.compile(
    r"\b(?:current|this|new|latest|present) (?:image|frame|scene|view|camera|picture|shot|context)\b"
    r"|\b(?:right )?now (?:you(?:'re| are)|i see|shows?)\b|\bthe image now\b"
)
_BEFORE_REF = re.compile(
    r"\b(?:previous|earlier|prior|last|first|original|other) (?:image|frame|scene|view|camera"
    r"|picture|shot|context|description|one)\b|\b(?:from|you had) (?:before|earlier)\b"
    r"|\b(?:a (?:moment|minute|second) ago)\b"
)
# asks the user for more to go on ("To give you the best advice, tell me: ...", "What are you trying to achieve?")
_ASKS_FOR_MORE = re.compile(
    r"\b(?:(?:please |could you |can you |if you can )?(?:tell|let) me (?:more|what|which|about|know)"
    r"|please (?:tell|share|describe|let)"
    r"|i(?:'d)? need (?:a (?:little |bit )?)?more (?:information|context|details|info)"
    r"|(?:need|want) to know (?:more|what|which)"
    r"|to (?:give|help) you (?:the best|a better|better|more)|once i know|knowing (?:this|these|that|more)"
    r"|what (?:are|were) you (?:trying|hoping|planning|aiming) to|what(?:'s| is) (?:your|the) (?:goal|purpose|plan))\b",
)
_PAST_MARKER = re.compile(
    r"\b(?:previous(?:ly)?|earlier|before|prior|originally|at first"
    r"|a (?:moment|minute|second) ago|last time|you had|you were|was there|were there)\b"
)
_PRESENT_MARKER = re.compile(
    r"\b(?:now|currently|at the moment|right now|this time|in front of you|you(?:'re| are) "
    r"(?:holding|using|looking at)|i (?:can )?see)\b"
)
_USER_BACK = re.compile(
    r"\b(?:earlier|before|previous(?:ly)?|a (?:moment|minute|second|few minutes) ago|again|was|were"
    r"|did|had|first|last time|back then|the other one)\b"
)
_SENTENCE = re.compile(r"[^.?!\n]+[.?!]*")
_WORD = re.compile(r"[A-Za-z0-9']+")


@dataclass(frozen=True, kw_only=True)
class Reading:
    """A reply's features (`FEATURE_NAMES` order) and the rules' decision they start from."""

    values: tuple[float, ...]
    decision: LexicalDecision
    asks_model: bool  # the model is asked about this reply (`model_reads`)


def _squash(count: float, scale: float = 1.0) -> float:
    """A count on a gentle scale: log(1 + count) / log(1 + scale), so `scale` maps to 1."""
    return math.log1p(max(count, 0.0)) / math.log1p(scale)


def reply_features(
    response: str,
    answers: AnswerKey,
    *,
    camera: str | None = None,
    frames: tuple[str | None, str | None] | None = None,
    user: str | None = None,
) -> Reading:
    """The features of one reply. `camera` is the judged turn's camera block as sent (None with
    no camera), `frames` the scenario's (earlier, current) frame descriptions, `user` the user's
    words of the judged turn."""
    decision, ev, signals = rule_reading(response, answers, camera=camera, frames=frames)
    text = response or ""
    words = _WORD.findall(text)
    n_chars = max(len(text), 1)
    label = decision.label
    values: dict[str, float] = dict.fromkeys(FEATURE_NAMES, 0.0)
    values.update(
        rule_current=float(label == "current"),
        rule_prior=float(label == "prior"),
        rule_clarify=float(label == "clarify"),
        rule_abstain=float(label == "abstain"),
        rule_mixed=float(decision.rule.startswith("mixed")),
        rule_strength=min(decision.strength, 4.0) / 4.0,
    )
    if ev is not None and signals is not None:  # (the rules read both, or neither: an empty reply)
        contrast = (signals or {}).get("contrastive") or {}
        direction: dict[str | None, float] = {"current_answers": 1.0, "prior_answers": -1.0}
        toward = direction.get(contrast.get("toward"), 0.0) or -direction.get(contrast.get("against"), 0.0)
        values.update(
            answer_current=_squash(ev.answer_current, 3),
            answer_prior=_squash(ev.answer_prior, 3),
            passing=_squash(ev.passing, 2),
            copied_only=float(ev.copied > 0 and not (ev.current or ev.prior)),
            contrast=toward,
            clarifying_question=float(ev.clarifying_question),
            only_questions=float(ev.only_questions),
            opens_asking_which=float(opens_with_either_or_question(text) or opens_with_which_question(text, signals)),
            answers_anyway=float(bool(ev.current or ev.prior) and commits_anyway(text)),
            declines=float(ev.declines or ev.abstain > 0),
            declines_pointers_only=float(ev.declines and declines_with_pointers_only(text, signals)),
            first_current=1.0 - (ev.first_current / n_chars if ev.first_current is not None else 1.0),
            first_prior=1.0 - (ev.first_prior / n_chars if ev.first_prior is not None else 1.0),
        )
    if frames is not None:
        now, earlier = frame_evidence(text, frames, camera)
        values.update(frame_current=_squash(now, 4), frame_earlier=_squash(earlier, 4))
        now_all, earlier_all = frame_words_with_copies(text, frames)  # copied runs included
        values.update(restates_current=_squash(now_all - now, 6), restates_earlier=_squash(earlier_all - earlier, 6))
    lowered = text.lower()  # the patterns above are matched against it (lower-case, no IGNORECASE: faster)
    sentences = [s.strip() for s in _SENTENCE.findall(text) if s.strip(" .?!")]
    questions = [s for s in sentences if s.endswith("?")]
    lines = [line for line in text.splitlines() if line.strip()]
    declared = [m.group(1) for m in _DECLARED.finditer(lowered)] if "context" in lowered else []
    # the sentences after a "CONTEXT: ..." header
    answer = [s for s in sentences if not _DECLARED.search(s.lower())] if declared else sentences
    values.update(
        cannot_see=float(bool(_CANNOT_SEE.search(lowered))),
        asks_for_more=_squash(len(_ASKS_FOR_MORE.findall(lowered)), 2),
        opens_declining=float(bool(answer) and bool(DECLINE_PATTERN.search(answer[0]))),
        short_decline=float(len(answer) <= 3 and any(DECLINE_PATTERN.search(s) for s in answer)),
        past_markers=_squash(len(_PAST_MARKER.findall(lowered)), 4),
        present_markers=_squash(len(_PRESENT_MARKER.findall(lowered)), 4),
        asks_what_held=float(
            any(key in lowered for key in _ASKS_WHAT_HELD_KEYS) and bool(_ASKS_WHAT_HELD.search(lowered))
        ),
        length=_squash(len(words), 300),
        list_lines=len(_LIST_LINE.findall(text)) / max(len(lines), 1),
        headings=_squash(len(_HEADING.findall(text)), 6),
        questions=_squash(len(questions), 4),
        ends_with_question=float(bool(sentences) and sentences[-1].endswith("?")),
        declares_current=float(any(d in ("current", "present", "now") for d in declared)),
        declares_earlier=float(any(d in ("prior", "previous", "earlier", "past") for d in declared)),
        speaks_of_now=_squash(len(_NOW_REF.findall(lowered)), 3),
        speaks_of_before=_squash(len(_BEFORE_REF.findall(lowered)), 3),
        user_points_back=float(bool(user and _USER_BACK.search(user.lower()))),
    )
    names_a_scene = any(values[key] for key in ("answer_current", "answer_prior", "frame_current", "frame_earlier"))
    values.update(reply_moves(text, answers, frames=frames, camera=camera, names_a_scene=names_a_scene))
    vector = tuple(values[name] for name in FEATURE_NAMES)
    return Reading(values=vector, decision=decision, asks_model=model_reads(values))


def model_reads(values: dict[str, float]) -> bool:
    """The model is asked about the reply: it gives something to judge by (the rules decided, or it
    names answer or description words of a frame of its own, says which context it reads, asks, or
    declines; words copied from its camera block do not count), and its words are not mixed (both
    scenes named about equally while the frame descriptions side with the other one: the rules'
    `mixed`, left unscored as before, never a guess)."""
    keys = (
        "rule_current",
        "rule_prior",
        "rule_clarify",
        "rule_abstain",
        "answer_current",
        "answer_prior",
        "frame_current",
        "frame_earlier",
        "declares_current",
        "declares_earlier",
        "questions",
        "declines",
        "cannot_see",
        "asks_referent",
        "asks_for_more",
        "no_memory",
        "no_answer_in_view",
        "restates_current",
        "restates_earlier",
    )
    return not values["rule_mixed"] and any(values[key] for key in keys)
