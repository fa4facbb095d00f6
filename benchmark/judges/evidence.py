"""The evidence the rules (`benchmark.judges.rules`) read in a reply: the hit counts per answer list
(`gather_evidence` -> `LexicalEvidence`), where the hits sit, whether the reply asks or declines, and
the words it shares with the frame descriptions and its camera block.

The patterns here read words, not meaning: a clarifying question ("which one", "do you mean"), a
decline ("I can't see"), a sentence that only says where to look next, a question that offers two
readings. Hits named only in passing (`benchmark.judges.mentions`) are counted apart, and answer words
the reply shares with its camera block count only when the reply also names that list with a word of
its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from benchmark.judges.mentions import dismissed_spans, hedged_decline, outside, passing_spans
from benchmark.judges.signals import Caseless, code_signals, word_boundary_hits, word_spans
from core.scenario import AnswerKey

_CLARIFY_PATTERN = Caseless(
    r"\b(?:which (?:one|of|do you|are you|item|thing)|do you mean|did you mean|are you (?:asking|referring|talking)"
    r"|could you (?:clarify|tell me|specify|say|point)|can you (?:clarify|specify|tell me which|point)"
    r"|what do you mean|not sure which|or (?:the|that|this|are you|do you)|you mean the)\b",
)
_DECLINE_VERBS = r"(?:see|tell|know|read|make out|determine|find|say|judge)"
# verbs that decline only with "I" before them ("if you can't feel them" is advice, not a decline)
_OWN_DECLINE_VERBS = (
    r"(?:see|tell|know|read|make out|determine|find|say|judge|examine|check|measure|confirm|"
    r"verify|identify|feel|hear|catch|be sure)"
)
# every decline pattern holds one of these (a cheap test before the pattern itself)
_DECLINE_KEYS = ("n't", "not", "never", "unable", "out of", "no way", "no idea", "no longer", "too ")
DECLINE_PATTERN = Caseless(
    r"\b(?:i (?:can't|cannot|can not|don't|do not|couldn't|could not|didn't|did not|never) "
    r"(?:really |actually |quite |clearly |properly )?"
    + _OWN_DECLINE_VERBS
    + r"|(?:can't|cannot|unable to|not able to) (?:really |clearly |properly )?"
    + _DECLINE_VERBS
    + r"|(?:can't|cannot|unable to|not able to) make (?:it|that|this|them|those) out|i (?:can't|cannot) answer"
    r"|(?:isn't|is not|aren't|are not|wasn't|was not|weren't|no longer|not) "
    r"(?:visible|in (?:view|frame|the frame|sight))"
    r"|out of (?:view|frame|sight)|no way (?:for me )?to (?:know|tell)"
    r"|i (?:don't|do not) have (?:enough|any|that|access)|i'm not able|i am not able|i am unable|i'm unable"
    r"|i (?:have|had) no (?:idea|way)|i never (?:saw|got a look|caught)"
    r"|i (?:didn't|did not|never) (?:get|catch|got|caught) a (?:clear |good |proper |readable )?(?:look|glimpse|view)"
    r"|too (?:small|tiny|blurry|far|dark) (?:for me )?to (?:read|see|make out)"
    r"|(?:isn't|is not|wasn't|was not) (?:shown|captured|recorded|legible|readable))",
    keys=_DECLINE_KEYS,
)
# where a decline's object ends: "I can't see the ear from here, so ..." -> "the ear from here"
_CLAUSE_END = Caseless(r"[,;:.?!\u2014]| - |\b(?:so|but|and|because|though|although|which)\b")
# a sentence that only says where to look next ("ask a vet", "the manual should list it")
_REFERRAL = Caseless(
    r"^(?:\W*(?:if [^,]*, )?(?:please |you (?:could|can|might|may|should|'ll need to|will need to) |try to "
    r"|i'd |i would )?"
    r"(?:ask|check|consult|contact|call|look (?:at|in|on)|see|read|refer to|visit)\b)"
    r"|\b(?:should|will|would|can|could|may|might) (?:list|show|tell you|have it|say)\b",
)
# a question that offers two readings: "Do you mean X or Y?", "Are you asking about A or B?"
_EITHER_OR = Caseless(
    r"\b(?:do you mean|did you mean|are you (?:asking|talking|referring)|which)\b.*\bor\b",
)
# a reply that opens by offering readings without asking yet: "It depends which one you mean: X or Y. Which is it?"
_DEPENDS_WHICH = Caseless(r"\b(?:depends (?:on )?which|depends on what you mean)\b", keys=("depends",))
# a first question that only asks which thing is meant ("Which one are you asking about?")
_WHICH_QUESTION = Caseless(
    r"^\W*(?:\w+\W+){0,3}?which (?:one|of (?:these|those|them|the two)|thing|item)\b",
)
_STOPWORDS = frozenset(
    """
about above after again against also along around away back been before behind being below beside between
both came come could does doing done down each even every from front have here into just keep kind left like
look looks made make many more most much must near next only other over part right same seen some such than
that their them then there these they thing this those through under until upon very were what when where
which while will with would your yours it's that's there's you're it'll don't isn't hand hands
hold holds held sits lies rests stands shows sets takes gives moves turns still well good fine need want
going think sure okay yeah time ready wait once what's looking fingers finger
""".split()
)
_SENTENCE_PIECE = re.compile(r"[^.?!]+[.?!]*")
_CAMERA_PREFIX = "[Camera: "
SCORED_LISTS = ("current_answers", "prior_answers", "clarify_indicators", "abstain_indicators")


def camera_block(user_message: str | None) -> str | None:
    """The camera text of a user turn built as `[Camera: {block}]\\n{speech}`
    (or a context message `[Camera: {block}]`); None when it has none."""
    if not user_message or not user_message.startswith(_CAMERA_PREFIX):
        return None
    head, sep, _ = user_message.rpartition("]\n")
    if sep:
        return head[len(_CAMERA_PREFIX) :]
    return user_message[len(_CAMERA_PREFIX) : -1] if user_message.endswith("]") else None


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


_CONTENT_WORD = re.compile(r"[a-z][a-z']+")
_BLOCK_WORD = re.compile(r"[a-z0-9][a-z0-9'-]*")


@lru_cache(maxsize=16384)
def _content_stem(word: str) -> str:
    """The stem of a content word (4 letters or more, not a stopword), "" for any other word: once a word."""
    return _stem(word) if len(word) >= 4 and word not in _STOPWORDS else ""


def content_stems(text: str | None) -> set[str]:
    """The content words of a text (4 letters or more, not a stopword), lightly stemmed."""
    words = set(_CONTENT_WORD.findall((text or "").lower()))  # each distinct word stemmed once
    return {stem for stem in map(_content_stem, words) if stem}


@lru_cache(maxsize=256)
def _camera_runs(camera: str) -> frozenset[tuple[str, ...]]:
    """The runs of three words of a camera block: read once a block."""
    block = _BLOCK_WORD.findall(camera.lower())
    return frozenset(zip(block, block[1:], block[2:]))


def _uncopied_words(response: str, camera: str | None) -> str:
    """The reply without the runs of three or more words it shares with the camera block."""
    words = _BLOCK_WORD.findall(response.lower())
    if not camera:
        return " ".join(words)
    runs = _camera_runs(camera)
    copied: set[int] = set()
    for i, run in enumerate(zip(words, words[1:], words[2:])):
        if run in runs:
            copied.update((i, i + 1, i + 2))
    return " ".join([w for i, w in enumerate(words) if i not in copied] if copied else words)


@lru_cache(maxsize=256)
def _frame_words(earlier: str | None, now: str | None) -> tuple[frozenset, frozenset]:
    """(words only the current frame's description holds, words only the earlier one's): read once a scenario."""
    before, current = content_stems(earlier), content_stems(now)
    return frozenset(current - before), frozenset(before - current)


@lru_cache(maxsize=64)  # the rules and the offline judge's features both read it
def frame_evidence(response: str, frames: tuple[str | None, str | None], camera: str | None = None) -> tuple[int, int]:
    """(current, prior): the reply's content words found only in the current (Turn 2) frame's
    description, and only in the earlier one's (Turn 1, and the context frame). Words the reply
    copied from its camera block in runs of three or more are left out."""
    only_now, only_earlier = _frame_words(*frames)
    words = content_stems(_uncopied_words(response, camera))
    return len(words & only_now), len(words & only_earlier)


def frame_words_with_copies(response: str, frames: tuple[str | None, str | None]) -> tuple[int, int]:
    """`frame_evidence` with the words copied from the camera block counted too."""
    only_now, only_earlier = _frame_words(*frames)
    words = content_stems(response)
    return len(words & only_now), len(words & only_earlier)


def copied_tokens(camera: str | None, answers: AnswerKey) -> dict[str, set[str]]:
    """Per answer list, the tokens the camera block itself contains (word
    boundary or fuzzy, as in the reply): a reply naming only these may have
    copied them."""
    if not camera:
        return {name: set() for name in SCORED_LISTS}
    signals = code_signals(camera, answers)
    return {
        name: set(signals["word_boundary"][name]) | {hit["token"] for hit in signals["fuzzy"][name]}
        for name in SCORED_LISTS
    }


@dataclass(frozen=True, kw_only=True)
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
    answer_current: int = 0  # current hits outside passing mentions (all of them when every hit is in passing)
    answer_prior: int = 0
    passing: int = 0  # hits set aside as passing mentions
    only_questions: bool = False
    dismissed_only: str | None = None  # the one list named, and only in clauses that set it aside


@lru_cache(maxsize=64)
def _sentences(response: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in _SENTENCE_PIECE.findall(response) if s.strip(" .?!"))


def _only_questions(response: str) -> bool:
    sentences = _sentences(response)
    return bool(sentences) and all(s.endswith("?") for s in sentences)


def opens_with_either_or_question(response: str) -> bool:
    """The first sentence asks which of two readings the user means ("Do you mean X or Y?"), or
    offers two readings before a question ("It depends which one you mean: X or Y. Which is it?")."""
    sentences = _sentences(response)
    if not sentences:
        return False
    if sentences[0].endswith("?"):
        return bool(_EITHER_OR.search(sentences[0]))
    return bool(_DEPENDS_WHICH.search(sentences[0])) and any(s.endswith("?") for s in sentences[1:])


def opens_with_which_question(response: str, signals: dict) -> bool:
    """The first sentence only asks which thing is meant and names no answer word of its own."""
    sentences = _sentences(response)
    if not sentences or not sentences[0].endswith("?") or not _WHICH_QUESTION.search(sentences[0]):
        return False
    return not any(
        word_boundary_hits(sentences[0], signals["word_boundary"][name])
        for name in ("current_answers", "prior_answers")
    )


def _answer_spans(response: str, signals: dict) -> list[tuple[int, int]]:
    """Where the current and prior hits sit in the response (start, end)."""
    spans = []
    for name in ("current_answers", "prior_answers"):
        for token in signals["word_boundary"][name]:
            spans += word_spans(response, token)
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
    declines = list(DECLINE_PATTERN.finditer(response))
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


def _token_spans(response: str, signals: dict, name: str) -> dict[str, list[tuple[int, int]]]:
    """Where each hit token of a list occurs in the response."""
    lowered = response.lower()
    spans = {}
    for token in signals["word_boundary"][name]:
        spans[token] = word_spans(response, token, lowered)
    for hit in signals["fuzzy"][name]:
        where = lowered.find(hit["matched"])
        spans.setdefault(hit["token"], []).extend([(where, where + len(hit["matched"]))] if where >= 0 else [])
    return spans


def _first(spans: dict[str, list[tuple[int, int]]], tokens: list[str], regions: list[tuple[int, int]]) -> int | None:
    """Where the first of `tokens` occurs outside the passing mentions (anywhere, when all are in passing)."""
    places = [s for t in tokens for s in spans.get(t, [])]
    own = [a for a, b in places if outside((a, b), regions)] or [a for a, _ in places]
    return min(own, default=None)


def _declines(response: str, signals: dict) -> bool:
    """A decline pattern or an abstain indicator that the reply does not go on to answer past."""
    lowered = response.lower()
    ends = [m.end() for m in DECLINE_PATTERN.finditer(response)] if any(key in lowered for key in _DECLINE_KEYS) else []
    ends += [b for spans in _token_spans(response, signals, "abstain_indicators").values() for _, b in spans]
    return bool(ends) and not hedged_decline(response, max(ends))


def gather_evidence(response: str, signals: dict, copied: dict[str, set[str]] | None = None) -> LexicalEvidence:
    """Hit counts per list; hits on `copied` tokens count only when the list
    also has a hit of its own. `answer_current`/`answer_prior` leave out tokens
    named only in passing (`benchmark.judges.mentions`)."""
    dropped = 0

    def hits(name: str) -> list[str]:
        nonlocal dropped
        tokens = list(signals["word_boundary"][name]) + [hit["token"] for hit in signals["fuzzy"][name]]
        echo = (copied or {}).get(name, set())
        if tokens and all(token in echo for token in tokens):
            dropped += len(tokens)
            return []
        return tokens

    found = {name: hits(name) for name in SCORED_LISTS}
    spans = {name: _token_spans(response, signals, name) for name in ("current_answers", "prior_answers")}
    regions = passing_spans(
        response, {name: [s for t in found[name] for s in spans[name].get(t, [])] for name in spans}
    )
    own = {name: [t for t in found[name] if any(outside(s, regions) for s in spans[name].get(t, []))] for name in spans}
    dismissed_only = None
    if not own["current_answers"] and not own["prior_answers"]:  # every hit in passing
        dismissed = dismissed_spans(response)
        named = [name for name in spans if found[name]]
        if len(named) == 1 and all(not outside(s, dismissed) for t in found[named[0]] for s in spans[named[0]][t]):
            dismissed_only = named[0]  # "Let me know if you meant the X instead": X is set aside, nothing else named
        own = {name: found[name] for name in spans}
    questions = [s for s in _sentences(response) if "?" in s]
    clarify_hits = len(found["clarify_indicators"])
    clarifying = any(_CLARIFY_PATTERN.search(q) for q in questions) or bool(questions and clarify_hits)
    declines = _declines(response, signals)
    return LexicalEvidence(
        current=len(found["current_answers"]),
        prior=len(found["prior_answers"]),
        clarify=clarify_hits,
        abstain=len(found["abstain_indicators"]) if declines else 0,
        clarifying_question=clarifying,
        declines=declines,
        first_current=_first(spans["current_answers"], own["current_answers"], regions),
        first_prior=_first(spans["prior_answers"], own["prior_answers"], regions),
        copied=dropped,
        answer_current=len(own["current_answers"]),
        answer_prior=len(own["prior_answers"]),
        passing=sum(len(found[name]) - len(own[name]) for name in spans),
        only_questions=_only_questions(response),
        dismissed_only=dismissed_only,
    )
