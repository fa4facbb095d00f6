"""Reading a judge model's reply: plain JSON, fenced JSON, or JSON inside prose."""

from __future__ import annotations

import json
import re

from core.judge import LABELS

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


class VerdictParseError(ValueError):
    """The reply holds no readable verdict; the message is the reason."""


def _objects_in(text: str):
    """Every JSON object found in `text`: whole text, fenced blocks, then embedded."""
    stripped = text.strip()
    candidates = [stripped] + [block.strip() for block in _FENCE.findall(text)]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            yield value
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            yield value


def parse_verdict(text: str) -> tuple[str, str]:
    """(label, rationale) from a judge reply, or `VerdictParseError` with the reason."""
    if not text or not text.strip():
        raise VerdictParseError("empty reply")
    seen_label = None
    for obj in _objects_in(text):
        if "label" not in obj:
            continue
        raw_label = obj["label"]
        label = raw_label.strip().strip('"').lower() if isinstance(raw_label, str) else raw_label
        if label in LABELS:
            rationale = obj.get("rationale", "")
            return label, rationale if isinstance(rationale, str) else json.dumps(rationale)
        seen_label = raw_label
    if seen_label is not None:
        raise VerdictParseError(f"unknown label {seen_label!r} (expected one of {', '.join(LABELS)})")
    raise VerdictParseError("no JSON object with a 'label' field in the reply")
