"""Check 6 of the bank validator: near-duplicate scenarios, found in about linear time by a prefix filter
over word sequences (20,000 scenarios: benchmarks/validate_scale.py). `benchmark.bank.validate` runs it as the
`near_duplicates` check."""

from __future__ import annotations

import difflib
import math
import re
from collections import Counter

from core.scenario import Bank, Scenario

# a pair is a near duplicate when the text of its speech and camera blocks is this similar (difflib ratio
# over the sequences of lower-cased words) ...
TEXT_SIMILARITY_THRESHOLD = 0.75
# ... or when both speech turns are word-for-word the same template with the same shift type and target
# (structural overlap)
SPEECH_SIMILARITY_THRESHOLD = 0.9

_WORD = re.compile(r"[a-z0-9']+")


def _words(*texts: str | None, limit: int) -> tuple[str, ...]:
    """Lower-cased words, each text cut at `limit` characters (check 3 reports longer ones)."""
    return tuple(_WORD.findall(" ".join((t or "")[:limit] for t in texts).lower()))


class _Text:
    """One scenario's words for check 6, with their counts for a quick upper bound."""

    def __init__(self, s: Scenario, limit: int):
        self.words = _words(s.turn_1_user, s.turn_2_user, s.turn_1_image, s.turn_2_image, limit=limit)
        self.speech = _words(s.turn_1_user, "|", s.turn_2_user, limit=limit)
        self.counts, self.speech_counts = Counter(self.words), Counter(self.speech)


def _similarity(a: tuple[str, ...], b: tuple[str, ...], ca: Counter, cb: Counter, threshold: float) -> float:
    """difflib's ratio of two word sequences, or 0 when the multiset bound
    (2 * shared words / total words, never below the ratio) cannot reach `threshold`."""
    total = len(a) + len(b)
    if not total or 2 * sum((ca & cb).values()) / total < threshold:
        return 0.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


class _PrefixIndex:
    """Finds, among the sequences indexed so far, those whose difflib ratio with a new word sequence may reach
    `threshold`; every one that does is among them (a prefix filter), so a bank is not compared pair by pair.

    A ratio of at least t needs 2 * shared / (len a + len b) >= t, so a sequence of n words shares at least
    ceil(t * n / (2 - t)) of them with any partner. Words are made distinct by their occurrence number
    ("cup", "cup#2") and ordered rarest first (over the whole bank); two sequences that share that many
    words share one among the first n - ceil(t * n / (2 - t)) + 1 of each."""

    def __init__(self, sequences: list[tuple[str, ...]], threshold: float):
        self.threshold = threshold
        self.tokens = [
            [f"{w}#{k}" for w, count in Counter(seq).items() for k in range(1, count + 1)] for seq in sequences
        ]
        frequency = Counter(t for toks in self.tokens for t in set(toks))
        for toks in self.tokens:
            toks.sort(key=lambda t: (frequency[t], t))
        self.index: dict[str, list[int]] = {}

    def _prefix(self, i: int) -> list[str]:
        toks = self.tokens[i]
        needed = math.ceil(self.threshold * len(toks) / (2 - self.threshold) - 1e-9)
        return toks[: max(0, len(toks) - needed + 1)]

    def candidates(self, i: int) -> set[int]:
        return {j for token in self._prefix(i) for j in self.index.get(token, ())}

    def add(self, i: int) -> None:
        for token in self._prefix(i):
            self.index.setdefault(token, []).append(i)


def near_duplicates(bank: Bank, text_limit: int) -> list[str]:
    """Check 6: pairs of scenarios whose text or structure overlaps too much (each text cut at
    `text_limit` characters).

    A contrast item and the bank item it names by `pair_id` are meant to mirror
    each other and are not compared. Texts are compared as word sequences.
    Scenarios are taken in bank order; each is compared with the earlier ones
    that no near duplicate was reported for (the first of each group of near
    copies stands for its group), and only with those a prefix filter cannot
    rule out, so the check grows with the bank about linearly (20,000
    scenarios: benchmarks/validate_scale.py). A near copy is reported once,
    against the first earlier scenario it matches."""
    problems = []
    scenarios = bank.scenarios
    texts = [_Text(s, text_limit) for s in scenarios]
    by_text = _PrefixIndex([t.words for t in texts], TEXT_SIMILARITY_THRESHOLD)
    groups: dict[tuple, list[int]] = {}
    for i, s in enumerate(scenarios):
        groups.setdefault((s.cue_type, s.target_context), []).append(i)
    by_speech = {
        key: (
            _PrefixIndex([texts[i].speech for i in members], SPEECH_SIMILARITY_THRESHOLD),
            {i: n for n, i in enumerate(members)},
            members,
        )
        for key, members in groups.items()
    }
    for i, b in enumerate(scenarios):
        speech_index, position, members = by_speech[(b.cue_type, b.target_context)]
        earlier = by_text.candidates(i) | {members[n] for n in speech_index.candidates(position[i])}
        problem = next(
            (found for j in sorted(earlier) if (found := _near_copy(scenarios[j], b, texts[j], texts[i]))), None
        )
        if problem:
            problems.append(problem)
        else:  # it stands for itself: later scenarios are compared with it
            by_text.add(i)
            speech_index.add(position[i])
    return problems


def _near_copy(a: Scenario, b: Scenario, ta: _Text, tb: _Text) -> str | None:
    """Why b is a near duplicate of the earlier a, or None."""
    if a.pair_id is not None and a.pair_id == b.pair_id and {a.subset, b.subset} == {"bank", "contrast"}:
        return None
    text = _similarity(ta.words, tb.words, ta.counts, tb.counts, TEXT_SIMILARITY_THRESHOLD)
    if text >= TEXT_SIMILARITY_THRESHOLD:
        return f"{a.scenario_id} ~ {b.scenario_id}: text similarity {text:.2f}"
    if (a.cue_type, a.target_context) == (b.cue_type, b.target_context):
        speech = _similarity(ta.speech, tb.speech, ta.speech_counts, tb.speech_counts, SPEECH_SIMILARITY_THRESHOLD)
        if speech >= SPEECH_SIMILARITY_THRESHOLD:
            return f"{a.scenario_id} ~ {b.scenario_id}: same shift type and target with speech similarity {speech:.2f}"
    return None
