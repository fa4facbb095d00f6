"""The describer names a command line may give, checked without loading a describer.

`perception.describers.make_describer` builds them (and imports OpenCV and
the OCR model); `wearsim bench` checks `--describer` here first, so a name
that is none of them exits 2 before a run dir or a server exists.
"""

from __future__ import annotations

LOCAL_NAMES = ("opencv", "authored", "ocr")  # no key, no network
MODEL_DESCRIBERS = ("openai", "gemini")  # describers that are a vision model: `PROVIDER:MODEL`
CHOICES = "opencv, authored, ocr, openai:MODEL or gemini:MODEL"


def needs_model(spec: str) -> bool:
    """The describer is a vision model, which the caller opens as a candidate (`open_candidate(spec)`)."""
    provider, _, model = spec.partition(":")
    return provider in MODEL_DESCRIBERS and bool(model)


def describer_problem(spec: str) -> str | None:
    """None for a describer name `make_describer` takes, else what is wrong with it (one line)."""
    if spec in LOCAL_NAMES or needs_model(spec):
        return None
    return f"unknown describer {spec!r}: use {CHOICES}"
