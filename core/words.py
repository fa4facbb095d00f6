"""Word-level measures on plain text, shared by perception's quality checks
and the reports (the ground floor: it imports nothing of ours), so a word
error rate is computed one way everywhere."""

from __future__ import annotations

import re


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", (text or "").lower().replace("'", ""))


def word_error_rate(reference: str, hypothesis: str) -> float:
    """(substitutions + deletions + insertions) / reference words."""
    ref, hyp = _words(reference), _words(hypothesis)
    previous = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, start=1):
        current = [i]
        for j, h in enumerate(hyp, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (r != h)))
        previous = current
    return previous[-1] / max(len(ref), 1)


def word_recall(reference: str, hypothesis: str) -> float | None:
    """The share of the reference's distinct words that appear in the hypothesis; None for an
    empty reference."""
    ref = set(_words(reference))
    return len(ref & set(_words(hypothesis))) / len(ref) if ref else None


COPY_RUN = 3  # words in a row shared with a source that count as copied from it


def _tokens(text: str | None) -> list[str]:
    return re.findall(r"[a-z0-9][a-z0-9'-]*", (text or "").lower())


def uncopied_words(text: str, sources: tuple[str | None, ...]) -> list[str]:
    """`text`'s words without the runs of `COPY_RUN` or more words it shares with any of `sources`
    (what the user said, the camera text it was given): the words that are its own. The lexical
    judge sets camera words aside by the same test."""
    words = _tokens(text)
    runs: set[tuple[str, ...]] = set()
    for source in sources:
        block = _tokens(source)
        runs.update(tuple(block[i : i + COPY_RUN]) for i in range(len(block) - COPY_RUN + 1))
    copied: set[int] = set()
    for i in range(len(words) - COPY_RUN + 1):
        if tuple(words[i : i + COPY_RUN]) in runs:
            copied.update(range(i, i + COPY_RUN))
    return [w for i, w in enumerate(words) if i not in copied]
