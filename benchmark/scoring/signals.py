"""Read a code-signal label out of a recorded `turn_2_code_signals` object.

The code signals are deterministic substring checks against the four answer
lists; they travel with the trial but are not the score. For the
disagreement table we reduce them to one label: an explicit label if the
record carries one, otherwise the single class whose answer list had
word-boundary hits; when several lists were hit, the list a contrastive
phrase points toward ("the screwdriver now, not the hammer from before").
No hits, or several with no contrast, give no label (the trial is left out
of the comparison). The shape read is the one `benchmark.judges.signals.
code_signals` writes: `{"word_boundary": {list: [tokens]}, "fuzzy": ...,
"contrastive": {"toward": list, "against": list, ...} | null}`.
"""

from __future__ import annotations

from typing import Any

LIST_TO_LABEL = {
    "current_answers": "current",
    "prior_answers": "prior",
    "clarify_indicators": "clarify",
    "abstain_indicators": "abstain",
    "current": "current",
    "prior": "prior",
    "clarify": "clarify",
    "abstain": "abstain",
}
EXPLICIT_KEYS = ("label", "code_label", "signal_label", "contrastive_label")


def _hit_count(value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, (list, tuple)):
        return len(value)
    if isinstance(value, dict):  # e.g. {"word_boundary": [...], "fuzzy": [...]}
        for key, inner in value.items():
            if "word" in key:
                return _hit_count(inner)
        return 0
    return 0


def _hits_by_label(signals: dict) -> dict[str, int]:
    hits: dict[str, int] = {}
    for key, value in signals.items():
        if key in LIST_TO_LABEL:
            hits[LIST_TO_LABEL[key]] = hits.get(LIST_TO_LABEL[key], 0) + _hit_count(value)
    if hits:
        return hits
    # nested the other way round: {"word_boundary": {"current_answers": [...]}, ...}
    for key, value in signals.items():
        if "word" in key and isinstance(value, dict):
            return _hits_by_label(value)
    return {}


def code_signal_label(signals: dict | None) -> str | None:
    """The class the code signals point at, or None when they point nowhere or at several."""
    if not signals:
        return None
    for key in EXPLICIT_KEYS:
        value = signals.get(key)
        if isinstance(value, str) and value in ("current", "prior", "clarify", "abstain"):
            return value
    hit = [label for label, count in _hits_by_label(signals).items() if count > 0]
    if len(hit) == 1:
        return hit[0]
    contrast = signals.get("contrastive")
    if len(hit) > 1 and isinstance(contrast, dict):
        return LIST_TO_LABEL.get(contrast.get("toward") or "")
    return None
