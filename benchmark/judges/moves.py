"""What a reply does, read from its shape: the offline judge's second group of features.

The rules (`benchmark.judges.rules`) count answer words; these read the move the reply makes,
which is what the rubric labels (docs/judging.md):

- it asks what the user's "this" is, what they hold or which one they mean (`clarify` when it
  answers nothing), or asks for other things it would need (goal, weather, the email's text);
- it says it has no memory of the conversation, or that the picture does not hold the answer
  (`abstain` when it answers nothing);
- its lead, the first two sentences of its answer (after a "RELEVANT CONTEXT: ..." header,
  which some models write first), names which scene: answer words, frame words, the past tense.

`reply_moves(text, answers, frames, camera)` returns the numbers by name; `MOVE_NAMES` fixes
their order in the feature vector.
"""

from __future__ import annotations

import re
from functools import lru_cache

from benchmark.judges.evidence import DECLINE_PATTERN, frame_evidence
from benchmark.judges.signals import occurs_as_word
from core.scenario import AnswerKey

MOVE_NAMES = (
    "asks_referent",
    "asks_without_answer",
    "question_share",
    "no_memory",
    "no_answer_in_view",
    "header_then_declines",
    "lead_current",
    "lead_prior",
    "lead_frame_current",
    "lead_frame_earlier",
    "lead_past",
    "lead_declines",
)

# asks what the user's "this" is, what they hold or do, or which one they mean
_ASKS_REFERENT = re.compile(
    r"\bwhat (?:is|are|was|were) [\"'\u201c\u2018*]*(?:this|it|that|these|those|the (?:object|item|tool|thing))\b"
    r"(?! (?:is|are|was|were|does|do|for|about)\b)"
    r"|\bwhat (?:are|were) you (?!trying|hoping|planning|aiming|going|asking|doing|looking for)[a-z]+ing\b"
    r"|\b(?:which|what) (?:one|object|item|tool|thing|device|equipment|exercise|activity|drink|plant|room)"
    r"(?: (?:is|are|was|were|do|did|you)\b|\?)"
    r"|\b(?:are|were) you referring to\b|\bwhat (?:you(?:'re| are)|you were) referring to\b"
    r"|\bwhat [\"'\u201c*]*(?:this|it|that)[\"'\u201d*]* (?:is|refers to|means)\b"
    r"|\bdescribe (?:the|what|it|your|which) (?:object|item|tool|thing|you)?"
)
_NO_MEMORY = re.compile(
    r"\b(?:don't|do not|can't|cannot) (?:have )?(?:any )?"
    r"(?:memory|access to (?:your |our |the )?(?:previous|past|earlier))"
    r"|\bno (?:memory|record) of\b|\bfresh start\b|\b(?:can't|cannot|don't|do not) (?:recall|remember)\b"
    r"|\bi (?:can't|cannot|don't|do not) see (?:you|what you)\b"
)
# every _NO_MEMORY match holds one of these (a cheap test before the pattern itself)
_NO_MEMORY_KEYS = ("memory", "access to", "record of", "fresh start", "recall", "remember", "see you", "see what you")
# the picture (or what the assistant was told) does not hold the answer
_NO_ANSWER_IN_VIEW = re.compile(
    r"\b(?:image|picture|photo|frame|description|camera|view|screen|context)s? (?:does not|doesn't|do not|don't)"
    r" (?:provide|show|contain|include|give|tell|say|indicate|have)"
    r"|\bnot (?:enough|sufficient) (?:information|detail|context)|\b(?:is|was) not (?:mentioned|described|shown|given)"
    r"|\b(?:can't|cannot|unable to|not possible to|impossible to|difficult to|hard to)"
    r" (?:determine|tell|say|know|answer|judge|confirm|assess)\b"
    r"|\bwithout (?:more|additional|further) (?:information|context|details)\b"
)
_PAST = re.compile(r"\b(?:was|were|had|earlier|previous(?:ly)?|before|prior|originally|at first|ago|first image)\b")
_HEADER = re.compile(r"\bcontext\W{0,3}\s*[:\-\u2014]", re.IGNORECASE)
# "RELEVANT CONTEXT: current - ...", "Context: earlier frame", "Visual context: prior"
_DECLARED = re.compile(r"\bcontext\W{0,3}\s*[:\-\u2014]\s*\W{0,2}(current|present|now|prior|previous|earlier|past)\b")
_EXAMPLES = re.compile(r"\((?:e\.g\.|eg|for example|like|such as)[^)]*\)", re.IGNORECASE)
_SENTENCE = re.compile(r"[^.?!\n]+[.?!]*")


def declared_context(text: str) -> str | None:
    """ "current" or "prior" when the reply opens by naming the context it reads ("RELEVANT CONTEXT:
    prior - ..."), else None."""
    found = _DECLARED.search(text[:200].lower())
    if found is None:
        return None
    return "current" if found.group(1) in ("current", "present", "now") else "prior"


def declines_after_header(text: str) -> bool:
    """The answer after a declared context declines, or says the picture does not hold it."""
    answer = _answer_part(text)
    return bool(DECLINE_PATTERN.search(answer) or _no_answer_in_view(answer))


@lru_cache(maxsize=8)  # the rules and the reply's moves both read it
def asks_referent(text: str) -> bool:
    """The reply asks what the user's "this" is, what they hold or do, or which one they mean."""
    return _ASKS_REFERENT.search(text.lower()) is not None


@lru_cache(maxsize=8)  # the rules and the reply's moves both read it
def _no_answer_in_view(text: str) -> bool:
    """The text says the picture (or what the assistant was told) does not hold the answer."""
    return _NO_ANSWER_IN_VIEW.search(text.lower()) is not None


def says_view_lacks_answer(text: str) -> bool:
    """The reply opens by declining, or says the picture (or what it was told) does not hold the answer."""
    if _no_answer_in_view(text):
        return True
    lead = _SENTENCE.search(_answer_part(text))
    return lead is not None and DECLINE_PATTERN.search(lead.group(0)) is not None


def names_outside_examples(text: str, answers: AnswerKey) -> bool:
    """The reply names an answer word outside its parenthesised examples ("(e.g., a pen, a pencil)")."""
    plain = _EXAMPLES.sub(" ", text)
    return bool(_hits(plain, answers.current_answers) or _hits(plain, answers.prior_answers))


def _hits(text: str, tokens) -> int:
    """How many tokens occur in `text` as whole words, case-insensitive (`\\b` token `\\b` in the lower-cased text)."""
    lowered = text.lower()
    return sum(1 for token in tokens if token and occurs_as_word(lowered, token.lower()))


def _answer_part(text: str) -> str:
    """The reply after a "RELEVANT CONTEXT: ..." header and its "ANSWER:" label, when it has them."""
    if not _HEADER.search(text[:200]):
        return text
    _, found, after = text.partition("ANSWER:")
    if found:
        return after
    lines = text.splitlines()
    return "\n".join(lines[1:]) if len(lines) > 1 else text


def reply_moves(
    text: str,
    answers: AnswerKey,
    *,
    frames: tuple[str | None, str | None] | None,
    camera: str | None,
    names_a_scene: bool,
) -> dict[str, float]:
    """The moves of one reply by name (`MOVE_NAMES`). `names_a_scene`: the reply names an answer or
    frame word of its own (the rules' evidence), so its questions may come after an answer."""
    lowered = text.lower()
    sentences = [s.strip() for s in _SENTENCE.findall(text) if s.strip(" .?!*")]
    questions = sum(1 for s in sentences if s.rstrip("*").endswith("?"))
    asks = asks_referent(text)
    answer = _answer_part(text)
    answer_sentences = (
        sentences if answer is text else [s.strip() for s in _SENTENCE.findall(answer) if s.strip(" .?!*")]
    )
    lead = " ".join(answer_sentences[:2])
    lead_lower = lead.lower()
    now, earlier = frame_evidence(lead, frames, camera) if frames is not None else (0, 0)
    header = answer is not text
    return {
        "asks_referent": float(asks),
        "asks_without_answer": float((asks or questions > 0) and not names_a_scene),
        "question_share": questions / max(len(sentences), 1),
        "no_memory": float(any(key in lowered for key in _NO_MEMORY_KEYS) and bool(_NO_MEMORY.search(lowered))),
        "no_answer_in_view": float(_no_answer_in_view(text)),
        "header_then_declines": float(header and declines_after_header(text)),
        "lead_current": min(_hits(lead, answers.current_answers), 2) / 2,
        "lead_prior": min(_hits(lead, answers.prior_answers), 2) / 2,
        "lead_frame_current": min(now, 3) / 3,
        "lead_frame_earlier": min(earlier, 3) / 3,
        "lead_past": min(len(_PAST.findall(lead_lower)), 2) / 2,
        "lead_declines": float(bool(DECLINE_PATTERN.search(lead) or _NO_ANSWER_IN_VIEW.search(lead_lower))),
    }
