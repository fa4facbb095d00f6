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
_DECLINE_VERBS = r"(?:see|tell|know|read|make out|determine|find|say|judge)"
# verbs that decline only with "I" before them ("if you can't feel them" is advice, not a decline)
_OWN_DECLINE_VERBS = (r"(?:see|tell|know|read|make out|determine|find|say|judge|examine|check|measure|confirm|"
                      r"verify|identify|feel|hear|catch|be sure)")
_DECLINE_PATTERN = re.compile(
    r"\b(?:i (?:can't|cannot|can not|don't|do not|couldn't|could not|didn't|did not|never) "
    r"(?:really |actually |quite |clearly |properly )?" + _OWN_DECLINE_VERBS +
    r"|(?:can't|cannot|unable to|not able to) (?:really |clearly |properly )?" + _DECLINE_VERBS +
    r"|(?:isn't|is not|aren't|are not|wasn't|was not|weren't|no longer|not) (?:visible|in (?:view|frame|the frame|sight))"
    r"|out of (?:view|frame|sight)|no way (?:for me )?to (?:know|tell)"
    r"|i (?:don't|do not) have (?:enough|any|that|access)|i'm not able|i am not able|i am unable|i'm unable"
    r"|i (?:have|had) no (?:idea|way)|i never (?:saw|got a look|caught)|i didn't (?:get|catch) a (?:look|glimpse)"
    r"|too (?:small|tiny|blurry|far|dark) (?:for me )?to (?:read|see|make out)"
    r"|(?:isn't|is not|wasn't|was not) (?:shown|captured|recorded|legible|readable))",
    re.IGNORECASE,
)
# where a decline's object ends: "I can't see the ear from here, so ..." -> "the ear from here"
_CLAUSE_END = re.compile(r"[,;:.?!\u2014]| - |\b(?:so|but|and|because|though|although|which)\b", re.IGNORECASE)
# a sentence that only says where to look next ("ask a vet", "the manual should list it")
_REFERRAL = re.compile(
    r"^(?:\W*(?:if [^,]*, )?(?:please |you (?:could|can|might|may|should|'ll need to|will need to) |try to "
    r"|i'd |i would )?"
    r"(?:ask|check|consult|contact|call|look (?:at|in|on)|see|read|refer to|visit)\b)"
    r"|\b(?:should|will|would|can|could|may|might) (?:list|show|tell you|have it|say)\b",
    re.IGNORECASE,
)
# a question that offers two readings: "Do you mean X or Y?", "Are you asking about A or B?"
_EITHER_OR = re.compile(r"\b(?:do you mean|did you mean|are you (?:asking|talking|referring)|which)\b.*\bor\b",
                        re.IGNORECASE)
_STOPWORDS = frozenset("""
about above after again against also along around away back been before behind being below beside between
both came come could does doing done down each even every from front have here into just keep kind left like
look looks made make many more most much must near next only other over part right same seen some such than
that their them then there these they thing this those through under until upon very were what when where
which while will with would your yours it's that's there's you're it'll don't isn't hand hands
hold holds held sits lies rests stands shows sets takes gives moves turns still well good fine need want
going think sure okay yeah time ready wait once what's looking fingers finger
""".split())
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


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def content_stems(text: str | None) -> set[str]:
    """The content words of a text (4 letters or more, not a stopword), lightly stemmed."""
    return {_stem(w) for w in re.findall(r"[a-z][a-z']+", (text or "").lower()) if len(w) >= 4 and w not in _STOPWORDS}


def _uncopied_words(response: str, camera: str | None) -> str:
    """The reply without the runs of three or more words it shares with the camera block."""
    words = re.findall(r"[a-z0-9][a-z0-9'-]*", response.lower())
    if not camera:
        return " ".join(words)
    block = re.findall(r"[a-z0-9][a-z0-9'-]*", camera.lower())
    runs = {tuple(block[i:i + 3]) for i in range(len(block) - 2)}
    copied = set()
    for i in range(len(words) - 2):
        if tuple(words[i:i + 3]) in runs:
            copied.update((i, i + 1, i + 2))
    return " ".join(w for i, w in enumerate(words) if i not in copied)


def frame_evidence(response: str, frames: tuple[str | None, str | None], camera: str | None = None) -> tuple[int, int]:
    """(current, prior): the reply's content words found only in the current (Turn 2) frame's
    description, and only in the earlier one's (Turn 1, and the context frame). Words the reply
    copied from its camera block in runs of three or more are left out."""
    earlier, now = content_stems(frames[0]), content_stems(frames[1])
    words = content_stems(_uncopied_words(response, camera))
    return len(words & (now - earlier)), len(words & (earlier - now))


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


def _sentences(response: str) -> list[str]:
    return [s.strip() for s in re.findall(r"[^.?!]+[.?!]*", response) if s.strip(" .?!")]


def _only_questions(response: str) -> bool:
    sentences = _sentences(response)
    return bool(sentences) and all(s.endswith("?") for s in sentences)


def _opens_with_either_or_question(response: str) -> bool:
    """The first sentence asks which of two readings the user means ("Do you mean X or Y?")."""
    sentences = _sentences(response)
    return bool(sentences) and sentences[0].endswith("?") and bool(_EITHER_OR.search(sentences[0]))


def _answer_spans(response: str, signals: dict) -> list[tuple[int, int]]:
    """Where the current and prior hits sit in the response (start, end)."""
    spans = []
    for name in ("current_answers", "prior_answers"):
        for token in signals["word_boundary"][name]:
            spans += [m.span() for m in re.finditer(r"\b" + re.escape(token) + r"\b", response, re.IGNORECASE)]
        lowered = response.lower()
        for hit in signals["fuzzy"][name]:
            where = lowered.find(hit["matched"])
            if where >= 0:
                spans.append((where, where + len(hit["matched"])))
    return spans


def declines_with_pointers_only(response: str, signals: dict) -> bool:
    """The response declines, and every current or prior word in it is either the object of a
    decline ("I can't examine the ear") or in a sentence that only says where to look next
    ("please ask a vet", "the manual should list it"): a decline, not an answer."""
    declines = list(_DECLINE_PATTERN.finditer(response))
    if not declines:
        return False
    covered: list[tuple[int, int]] = []
    for match in declines:
        end = _CLAUSE_END.search(response, match.end())
        covered.append((match.start(), end.start() if end else len(response)))
    position = 0
    for sentence in re.findall(r"[^.?!]+[.?!]*", response):
        if _REFERRAL.search(sentence.strip()):
            covered.append((position, position + len(sentence)))
        position += len(sentence)
    spans = _answer_spans(response, signals)
    return all(any(a <= start and stop <= b for a, b in covered) for start, stop in spans)


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
                  camera: str | None = None,
                  frames: tuple[str | None, str | None] | None = None) -> tuple[str | None, str]:
    """(label or None, the rule that decided it). `camera` is the camera block
    of the judged turn as sent: answer words the reply shares with it are not
    evidence on their own. `frames` is (the earlier frames' description, the
    current frame's description) of the scenario, read only when the reply
    names no answer word (rule 7)."""
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
    if _opens_with_either_or_question(response):
        return "clarify", "rule 2: opens by asking which of two things the user means" + note
    if (ev.declines or ev.abstain) and ev.current == 0:
        return "abstain", "rule 3: declines and names nothing from the current frame" + note
    if (ev.current or ev.prior) and declines_with_pointers_only(response, signals):
        return "abstain", ("rule 3: declines; its answer words only name what it cannot see or where to look "
                           "next" + note)
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
    if frames is not None:
        current, prior = frame_evidence(response, frames, camera)
        if current != prior:
            label = "current" if current > prior else "prior"
            return label, (f"rule 7: no answer words; {current} words of the current frame's description vs "
                           f"{prior} of the earlier one's" + note)
    return None, "no signal" + note


def scenario_frames(scenario) -> tuple[str | None, str | None]:
    """(earlier, current) frame descriptions of a scenario: the context frame with Turn 1's, and Turn 2's."""
    earlier = " ".join(t for t in (scenario.context_image, scenario.turn_1_image) if t)
    return earlier or None, scenario.turn_2_image


class LexicalJudge:
    """`Judge` that labels from the code signals alone."""

    name = LEXICAL_JUDGE_NAME
    family = "lexical"

    async def label(self, case: JudgeCase) -> Verdict:
        return self.label_now(case)

    def label_now(self, case: JudgeCase) -> Verdict:
        label, rule = lexical_label(case.response, case.scenario.answers, camera=camera_block(case.user_message),
                                    frames=scenario_frames(case.scenario))
        if label is None:
            return Verdict(None, rule, self.name, unscored_reason=rule)
        return Verdict(label, rule, self.name)
