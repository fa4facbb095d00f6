"""Where a reply names a frame only in passing, asks only to check, or hedges before answering.

Capable models rarely answer in one flat sentence: they name the earlier
object while answering about the new one ("now that the hammer is down, ..."),
contrast the two, check what was meant and answer anyway ("Do you mean the
roller? If so, ..."), or hedge and then answer ("I can't check it up close,
but ..."). The rules (`benchmark.judges.rules`) read these spans so
that such mentions and hedges are not taken for the reply's referent or for a
decline:

- `passing_spans`: clauses that set a frame aside ("setting X aside", "with X
  put away", "now that X is done with", "X would be a different story",
  "unlike X", "compared with X", "if you meant X instead", "or did you mean X?"),
  the part of a sentence before a "but" that turns to the other frame ("Looks
  like you've got X there, but for your question: ..."), and the questions of a
  reply that also answers.
- `commits_anyway`: the reply asks what was meant but says it will answer
  ("Assuming so:", "I'll assume X.", "If so, ...", "I take it you mean X?").
- `hedged_decline`: a decline followed by an answer ("I can't be sure from
  here, but ...", "I can't check it up close, so take this with a grain of
  salt: ...").
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from functools import lru_cache
from itertools import islice

from benchmark.judges.signals import Caseless

_DISMISS = Caseless(
    r"\b(?:aside|(?:put|set|laid|placed) (?:it |that |this |them )?(?:away|down|aside)|(?:is|are|'s|'re) (?:down|away)"
    r"|out of the way|moved? on from|done with"
    r"|(?:we're|you're|we are|you are) past|switched (?:from|over)"
    r"|(?:a )?different (?:story|case|cases|question|questions|matter|thing|things|job|jobs)"
    r"|(?:doesn't|does not|don't|do not) (?:carry over|apply)|unlike|compared (?:with|to)|(?:isn't|is not|not) like"
    r"|(?:if|in case) you meant|did you mean|were you (?:thinking|asking|talking)"
    r"|earlier (?:it was|you had|you were|there was))",
)
# every _DISMISS match holds one of these (a cheap test before the pattern itself)
_DISMISS_KEYS = (
    "aside",
    "put ",
    "set ",
    "laid ",
    "placed ",
    " down",
    " away",
    "out of the way",
    "move",
    "done with",
    "past",
    "switched",
    "different",
    "carry over",
    "apply",
    "unlike",
    "compared",
    "like",
    "you meant",
    "did you mean",
    "were you",
    "earlier",
)
# "swapped X for Y", "traded X for Y": only X is set aside
_SWAP = Caseless(
    r"\b(?:swapp?(?:ed|ing)|traded|exchanged)\b(?: out)?(?P<old>[^,;:.?!\n\u2014]*?)\b(?:for|with)\b",
    keys=("swap", "traded", "exchanged"),
)
_CLAUSE = re.compile(r"[^,;:.?!\n\u2014]+[,;:.?!\n\u2014]*")
_SENTENCE = re.compile(r"[^.?!\n]+[.?!\n]*")
_WORD = re.compile(r"[A-Za-z0-9']+")
_BUT = Caseless(r",? \bbut\b", keys=(" but",))
_COMMIT = Caseless(
    r"\b(?:i'll assume|i will assume|assuming (?:so|you mean|that|it's|you're)|if so|i take it|i'm guessing you mean"
    r"|i'll go with|going with|presumably you mean|i think you mean|i'll answer for)\b",
    keys=(
        "assum",
        "if so",
        "take it",
        "guessing",
        "go with",
        "going with",
        "presumably",
        "think you mean",
        "answer for",
    ),
)
_HEDGE_TURN = Caseless(
    r"\b(?:but|though|although|however|that said|still|with a grain of salt|my best guess|best guess"
    r"|from what i can see|it looks like|looks like)\b",
)


def question_spans(response: str) -> list[tuple[int, int]]:
    return [m.span() for m in _SENTENCE.finditer(response) if m.group().rstrip().endswith("?")]


def non_question_text(response: str, questions: list[tuple[int, int]] | None = None) -> str:
    """The reply with its questions (`questions`, when the caller has them) blanked out (positions kept)."""
    chars = list(response)
    for start, end in question_spans(response) if questions is None else questions:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


@lru_cache(maxsize=8)  # the rules and the offline judge's features both read it
def commits_anyway(response: str) -> bool:
    """The reply asks what was meant but says it answers a reading anyway."""
    return _COMMIT.search(response) is not None


def dismissed_spans(response: str) -> list[tuple[int, int]]:
    """Clauses that set a frame aside ("setting X aside", "unlike X", "if you meant X instead")."""
    lowered = response.lower()
    if not any(key in lowered for key in _DISMISS_KEYS):
        return []
    starts = [m.start() for m in _DISMISS.finditer(response)]  # one scan; a match never crosses a clause end
    if not starts:
        return []
    # the clauses with a match starting inside them (`starts` is in order: the first start at or after the clause's)
    return [m.span() for m in _CLAUSE.finditer(response) if _first_at(starts, m.start()) < m.end()]


def _first_at(positions: list[int], start: int) -> float:
    """The first of the ordered `positions` at or after `start` (infinity when none is)."""
    index = bisect_left(positions, start)
    return positions[index] if index < len(positions) else math.inf


def passing_spans(response: str, spans_of: dict[str, list[tuple[int, int]]]) -> list[tuple[int, int]]:
    """Spans of the reply where a frame is named in passing. `spans_of` maps each scored answer
    list to where its hits are; a "but" turns a clause into a passing one only when what
    follows it in the sentence names a list the clause does not."""
    passing = dismissed_spans(response) + [m.span("old") for m in _SWAP.finditer(response)]
    all_hits = [(name, s) for name, spans in spans_of.items() for s in spans]
    # the "but" turns, each inside one sentence; the sentences are read when the reply has hits and turns
    turns = [turn.span() for turn in _BUT.finditer(response)] if all_hits else []
    for sentence in _SENTENCE.finditer(response) if turns else ():
        start, end = sentence.span()
        for turn_start, turn_end in [turn for turn in turns if start <= turn[0] and turn[1] <= end]:
            before = {name for name, (a, b) in all_hits if start <= a and b <= turn_start}
            after = {name for name, (a, b) in all_hits if turn_end <= a and b <= end}
            if before and after - before:
                passing.append((start, turn_start))
                break
    questions = question_spans(response)
    if questions:
        rest = non_question_text(response, questions)
        if any(rest[a:b].strip() for _, (a, b) in all_hits):  # the reply answers outside its questions
            passing += questions
    return passing


def outside(span: tuple[int, int], regions: list[tuple[int, int]]) -> bool:
    return not any(a <= span[0] and span[1] <= b for a, b in regions)


def hedged_decline(response: str, decline_end: int) -> bool:
    """A decline that the reply goes on to answer anyway: a turn ("but", "though", "that said",
    "take this with a grain of salt", ...) after it, followed by at least five more words."""
    turn = _HEDGE_TURN.search(response, decline_end)
    if turn is None:
        return False
    return len(list(islice(_WORD.finditer(response, turn.end()), 5))) == 5
