"""Quality helpers: word error rate of a transcript, and the validator's
object-name check run on perceived camera blocks."""

from __future__ import annotations

import re

from benchmark.nouns import object_nouns_in


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


def object_names_in_camera_block(text: str | None) -> list[str]:
    """Object nouns a perceived camera block should not contain (authoring rule)."""
    return object_nouns_in(text)
