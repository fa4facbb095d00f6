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
