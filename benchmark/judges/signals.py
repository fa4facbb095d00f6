"""Code signals: deterministic evidence about which answer list a response uses.

Three kinds of evidence, per answer list of the scenario's `AnswerKey`:

- `word_boundary`: the tokens found with
  `re.search(r'\\b' + re.escape(token) + r'\\b', response, re.IGNORECASE)`,
  exactly as the spec describes. "pan" does not match "panel".
- `fuzzy`: tokens not found that way but close to a word (or a run of words of
  the same length as the token) of the response: a regular plural
  ("pans", "boxes", "batteries", "knives"), or, for tokens of at least
  `FUZZY_MIN_LENGTH` characters, a similarity ratio of at least
  `FUZZY_THRESHOLD` (small misspellings such as "hamer" for "hammer"): the
  normalised Indel similarity, 2 * LCS / (len(a) + len(b)), computed by
  `rapidfuzz` (the figure `difflib.SequenceMatcher.ratio` approximates).
- `contrastive`: a phrase that sets one time frame against another
  ("earlier ... now", "before ... but now", "not the ... from before",
  "no longer", "instead of"); it names the list whose tokens sit on the
  rejected (earlier) side and the list whose tokens sit on the current side.

The signals travel with each trial record; they are not the score. The
rules (`benchmark.judges.rules`) and the offline judge (`benchmark.judges.lexical`) turn them into a label.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_right
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import asdict, dataclass
from functools import lru_cache
from itertools import accumulate

from rapidfuzz import fuzz, process

from core.scenario import ANSWER_LISTS, AnswerKey

FUZZY_THRESHOLD = 0.85
FUZZY_MIN_LENGTH = 5


class Caseless:
    """A case-insensitive pattern (`re.IGNORECASE`), matched faster on ASCII text.

    On ASCII text the pattern is matched case-sensitively on the lower-cased text: the same
    matches at the same places (lower-casing ASCII keeps every position), three to four times
    faster (IGNORECASE folds every character it compares). Other text goes to the IGNORECASE
    pattern itself. Spans index the text as given; on ASCII text a match's group text is
    lower-cased, so slice the text by the span where case matters. The pattern's letters must be
    lower-case (escapes such as `\\b` and `\\W`, and `(?P<name>`, aside).

    `keys`, when given: every match holds one of these lower-case strings, so ASCII text that holds
    none of them is not searched (a pattern of rare words is mostly not read at all)."""

    __slots__ = ("ignorecase", "lower", "keys")

    def __init__(self, pattern: str, keys: tuple[str, ...] = ()):
        letters = re.sub(r"\\.|\(\?P[<=]", "", pattern)  # escapes and named groups aside
        if letters != letters.lower() or any(key != key.lower() for key in keys):
            raise ValueError(f"a Caseless pattern and its keys are written in lower case: {pattern!r}")
        self.ignorecase = re.compile(pattern, re.IGNORECASE)
        self.lower = re.compile(pattern)
        self.keys = keys

    def _ascii(self, text: str) -> str | None:
        """The lower-cased text to search, for ASCII text that holds a key (or any, without keys)."""
        folded = lowered(text)
        return folded if not self.keys or any(key in folded for key in self.keys) else None

    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        if text.isascii():
            folded = self._ascii(text)
            return None if folded is None else self.lower.search(folded, pos, endpos)
        return self.ignorecase.search(text, pos, endpos)

    def finditer(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        if text.isascii():
            folded = self._ascii(text)
            return iter(()) if folded is None else self.lower.finditer(folded, pos, endpos)
        return self.ignorecase.finditer(text, pos, endpos)


@lru_cache(maxsize=16)
def lowered(text: str) -> str:
    """`text.lower()`, made once for the few texts in hand (a reply is read by many patterns)."""
    return text.lower()


_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")

# Markers of the earlier time frame and of the present one.
_PAST = Caseless(
    r"\b(?:earlier|before|previously|a (?:moment|minute|second|few minutes) ago|at first|originally|last time)\b",
)
_NOW = Caseless(r"\b(?:now|currently|at the moment|this time)\b")
# "not the X from before", "instead of X", "rather than X", "no longer X": X is rejected.
_REJECT = Caseless(
    r"\b(?:not (?:the|that|your|this)|instead of|rather than|no longer)\b(?P<rejected>(?:[^.?!;:,\u2014-]|-(?=\w))*)",
    keys=("not ", "instead of", "rather than", "no longer"),
)
_NOT_ANYMORE = Caseless(r"(?:\bnot\b|n't\b)(?P<rejected>[^.?!;]*?)\bany ?more\b", keys=("anymore", "any more"))
_SENTENCE = re.compile(r"[^.?!]+[.?!]*")


@dataclass(frozen=True, kw_only=True)
class FuzzyHit:
    token: str
    matched: str  # the words of the response it matched
    ratio: float
    kind: str  # "plural" or "ratio"


@dataclass(frozen=True, kw_only=True)
class Contrast:
    pattern: str  # which contrastive form matched
    phrase: str  # the matched text
    against: str | None  # the answer list named on the earlier / rejected side
    toward: str | None  # the answer list named on the current side


def _boundary(text: str, i: int) -> bool:
    """`\\b` at position i: a word character (what `\\w` matches in a str pattern: a letter, a digit
    or "_") on exactly one side."""
    before = i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")
    after = i < len(text) and (text[i].isalnum() or text[i] == "_")
    return before != after


def occurs_as_word(folded: str, needle: str) -> bool:
    """`needle` occurs in `folded` as a whole word: `re.search(r'\\b' + re.escape(needle) + r'\\b', folded)`."""
    start = folded.find(needle)
    while start != -1:
        if _boundary(folded, start) and _boundary(folded, start + len(needle)):
            return True
        start = folded.find(needle, start + 1)
    return False


def word_spans(response: str, token: str, folded: str | None = None) -> list[tuple[int, int]]:
    """Every (start, end) where `token` occurs in `response` as a whole word, case-insensitive;
    the spans of `re.finditer(r'\b' + re.escape(token) + r'\b', response, re.IGNORECASE)`.
    `folded`: `response.lower()`, when the caller has it."""
    folded, needle = folded if folded is not None else response.lower(), token.lower()
    if len(folded) != len(response) or len(needle) != len(token) or not needle:
        return [m.span() for m in re.finditer(r"\b" + re.escape(token) + r"\b", response, re.IGNORECASE)]
    spans = []
    start = folded.find(needle)
    while start != -1:
        if _boundary(folded, start) and _boundary(folded, start + len(needle)):
            spans.append((start, start + len(needle)))
        start = folded.find(needle, start + 1)
    return spans


def word_boundary_hits(response: str, tokens: tuple[str, ...] | list[str]) -> list[str]:
    """The tokens that occur in `response` as whole words (case-insensitive);
    the same test as `re.search(r'\b' + re.escape(token) + r'\b', response, re.IGNORECASE)`,
    done with `str.find` on lower-cased text (a regex per token cost 0.1 ms to compile
    and there are about a thousand distinct tokens in the bank). Text whose lower case
    changes its length (a few non-ASCII letters) goes to that regex."""
    folded = response.lower()
    exact = len(folded) == len(response)
    found = []
    for token in tokens:
        token = token.strip()
        if not token:
            continue
        needle = token.lower()
        if exact and len(needle) == len(token):
            hit = occurs_as_word(folded, needle)
        else:
            hit = re.search(r"\b" + re.escape(token) + r"\b", response, re.IGNORECASE) is not None
        if hit:
            found.append(token)
    return found


def _plural_forms(word: str) -> set[str]:
    forms = {word + "s", word + "es"}
    if word.endswith("y") and len(word) > 2:
        forms.add(word[:-1] + "ies")
    if word.endswith("fe"):
        forms.add(word[:-2] + "ves")
    elif word.endswith("f"):
        forms.add(word[:-1] + "ves")
    return forms


@lru_cache(maxsize=4096)
def _plurals_of(wanted: str) -> tuple[str, ...]:
    """Every regular plural of a (normalised) token, its last word pluralised."""
    head, sep, last = wanted.rpartition(" ")
    return tuple(sorted(f"{head}{sep}{form}" for form in _plural_forms(last)))


def similarity(a: str, b: str) -> float:
    """The fuzzy ratio of two strings, 0..1 (normalised Indel similarity)."""
    return fuzz.ratio(a, b) / 100.0


class _Grams:
    """The response's words and its runs of n words, made once per response."""

    def __init__(self, response: str):
        if response.isascii():  # (lower-casing ASCII makes no new word characters: one lower-casing will do)
            self.words = [w.strip("'-") for w in _WORD.findall(response.lower())]
        else:
            self.words = [w.lower().strip("'-") for w in _WORD.findall(response)]
        # the words joined by single spaces, and where each word starts and ends in it: a run of n
        # words is one slice of it (the words hold no space)
        self._joined = " ".join(self.words)
        self._ends = list(accumulate(len(word) + 1 for word in self.words))  # (one past each word's end)
        self._starts = [0, *self._ends[:-1]]
        self._by_size: dict[int, tuple[set, list]] = {}

    def of(self, size: int) -> tuple[set, list]:
        """(the distinct runs of `size` words, the same as a list, in no particular order)."""
        if size not in self._by_size:
            joined = self._joined
            grams = (
                set(self.words)
                if size == 1
                else {joined[start : end - 1] for start, end in zip(self._starts, self._ends[size - 1 :])}
            )
            self._by_size[size] = (grams, list(grams))
        return self._by_size[size]


_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nothing|neither|nor|cannot|without"
    r"|(?:ca|do|does|did|is|are|was|were|wo|could|would|should|has|have|had)nt)\b|n't\b"
)


def negation_in(text: str) -> bool:
    """The words hold a negation (not, no, never, can't, ...)."""
    return _NEGATION.search(text) is not None


def fuzzy_hits(
    response: str,
    tokens: tuple[str, ...] | list[str],
    exclude: AbstractSet[str] = frozenset(),
    grams: _Grams | None = None,
) -> list[FuzzyHit]:
    """Near matches of tokens not already found on word boundaries."""
    grams = grams or _Grams(response)
    hits = []
    for token in tokens:
        if token in exclude:
            continue
        wanted, size, plurals, negated = _token_form(token)
        if not wanted:
            continue
        present, choices = grams.of(size)
        if not present:
            continue
        plural = next((form for form in plurals if form in present), None)
        if plural is not None:
            hits.append(
                FuzzyHit(token=token, matched=plural, ratio=round(similarity(wanted, plural), 3), kind="plural")
            )
            continue
        if len(wanted) < FUZZY_MIN_LENGTH:
            continue
        near = [
            (gram, score)
            for gram, score, _ in process.extract(
                wanted, choices, scorer=fuzz.ratio, score_cutoff=FUZZY_THRESHOLD * 100 - 1e-9, limit=None
            )
            if gram != wanted  # (a word-boundary hit, not a near one)
        ]
        if len(near) > 1:
            near.sort(key=lambda match: (-match[1], match[0]))  # the closest first, ties in alphabetical order
        # a near match never crosses a negation: "can see" is not "can't see", "a lid" is not "no lid"
        best = next((match for match in near if negation_in(match[0]) == negated), None) if near else None
        if best is not None:
            hits.append(FuzzyHit(token=token, matched=best[0], ratio=round(best[1] / 100.0, 3), kind="ratio"))
    return hits


@lru_cache(maxsize=4096)
def _token_form(token: str) -> tuple[str, int, tuple[str, ...], bool]:
    """What fuzzy matching reads of a token, once a token: (its words lower-cased and joined by
    single spaces, how many words, its regular plurals, whether it holds a negation)."""
    wanted = " ".join(token.lower().split())
    if not wanted:
        return "", 0, (), False
    return wanted, len(wanted.split(" ")), _plurals_of(wanted), negation_in(wanted)


def _list_named(text: str, answers: AnswerKey, lists: tuple[str, ...]) -> str | None:
    """The answer list with the most word-boundary hits in `text` (first on ties)."""
    counts = {name: len(word_boundary_hits(text, getattr(answers, name))) for name in lists}
    best = max(counts, key=lambda name: counts[name])
    return best if counts[best] > 0 else None


def _sentences(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _SENTENCE.finditer(text)]


def _sentences_holding(pattern: Caseless, response: str, starts: list[int]) -> set[int]:
    """The indexes of the sentences (starting at `starts`) that hold a match of `pattern`."""
    return {bisect_right(starts, match.start()) - 1 for match in pattern.finditer(response)}


def _contrast_candidates(response: str):
    """(pattern, phrase, past_text, present_text) for every contrastive form found."""
    sentences = _sentences(response)
    # the sentences that hold a past marker, or a rejection: one scan of the reply each (a match never
    # crosses a sentence end, and is the same match in its sentence alone)
    starts = [start for start, _ in sentences]
    with_past = _sentences_holding(_PAST, response, starts)
    with_rejection = _sentences_holding(_REJECT, response, starts) | _sentences_holding(_NOT_ANYMORE, response, starts)
    for index, (start, end) in enumerate(sentences):
        sentence = response[start:end]
        # "earlier ... now": a past marker, then a now marker in the same or the next sentence
        past = _PAST.search(sentence) if index in with_past else None
        if past:
            scope_end = sentences[index + 1][1] if index + 1 < len(sentences) else end
            now = _NOW.search(response, start + past.end(), scope_end)
            if now:
                now_sentence_end = next(e for s, e in sentences if s <= now.start() < e)
                present = response[now.start() : now_sentence_end]
                rejected = _REJECT.search(present)
                if rejected:  # "now X, not the Y": the rejected part is not the present side
                    present = present[: rejected.start()]
                if present[len(now.group()) :].strip(" .,;:!?") or not _REJECT.search(response, start, now.start()):
                    yield (
                        "earlier ... now",
                        response[start:now_sentence_end].strip(),
                        response[start : now.start()],
                        present,
                    )
                # else "about X earlier rather than Y now.": nothing after "now"; the rejection reads it
        # "X now, not the Y from before" / "X instead of Y" / "no longer Y"
        for pattern in (_REJECT, _NOT_ANYMORE) if index in with_rejection else ():
            for match in pattern.finditer(sentence):
                rejected_words = match.group("rejected")
                present = sentence[: match.start()]
                if not present.strip(" -\u2014,"):
                    # sentence-initial "Rather than X, Y" / "Not the X - Y": the present side follows
                    present = sentence[match.end() :]
                yield ("not X / instead of X / no longer X", sentence.strip(), rejected_words, present)


def find_contrast(response: str, answers: AnswerKey) -> Contrast | None:
    """The first contrastive phrase whose sides name at least one answer list.

    `against` is the list named on the earlier / rejected side, `toward` the
    list named on the present side; a phrase whose two sides name the same
    list (or no list) is passed over.
    """
    scored = ("current_answers", "prior_answers")
    for name, phrase, past, present in _contrast_candidates(response):
        against = _list_named(past, answers, scored) if past.strip() else None
        toward = _list_named(present, answers, scored) if present.strip() else None
        if toward is not None and toward == against:
            continue
        if against or toward:
            return Contrast(pattern=name, phrase=phrase, against=against, toward=toward)
    return None


def code_signals(response: str, answers: AnswerKey) -> dict:
    """All code signals of one response, as a JSON-ready dict.

    Shape: `{"word_boundary": {list: [tokens]}, "fuzzy": {list: [{token,
    matched, ratio, kind}]}, "contrastive": {pattern, phrase, against, toward}
    or None}`.

    The signals of the last few hundred (text, answer key) pairs are kept: a
    rescore reads each reply twice (the judge, then the record's stored
    signals) and the judge reads each scenario's camera block on every case.
    Each call returns its own copy.
    """
    try:
        word_boundary, fuzzy, contrast = _signals(response or "", answers)
    except TypeError:  # an answer key built with lists is not hashable: computed, not kept
        word_boundary, fuzzy, contrast = _signals.__wrapped__(response or "", answers)
    return {
        "word_boundary": {name: list(tokens) for name, tokens in word_boundary},
        "fuzzy": {name: [dict(hit) for hit in hits] for name, hits in fuzzy},
        "contrastive": dict(contrast) if contrast else None,
    }


@lru_cache(maxsize=512)
def _signals(response: str, answers: AnswerKey) -> tuple:
    word_boundary = {name: word_boundary_hits(response, getattr(answers, name)) for name in ANSWER_LISTS}
    grams = _Grams(response)
    fuzzy = {
        # (`vars`: the hit's fields in order, what `asdict` gives for a flat dataclass, without its deep copy)
        name: [dict(vars(hit)) for hit in fuzzy_hits(response, getattr(answers, name), set(word_boundary[name]), grams)]
        for name in ANSWER_LISTS
    }
    contrast = find_contrast(response, answers)
    return (
        tuple((name, tuple(tokens)) for name, tokens in word_boundary.items()),
        tuple((name, tuple(hits)) for name, hits in fuzzy.items()),
        asdict(contrast) if contrast else None,
    )
