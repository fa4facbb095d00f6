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


# The drawn frames each offline describer reads back: a synthetic frame's text (`authored` from its JPEG
# comment, `ocr` from its pixels). None reads a pictograph: `opencv` names colours and shapes, not
# things; `authored` finds no comment in it and falls back to `opencv`; `ocr` reads only a screen's own
# text. A vision model as the describer (`openai:MODEL`) looks at either.
DRAWN_FRAME_READERS = {"synthetic": ("authored", "ocr"), "pictograph": ()}


def cannot_read(spec: str | None, source: str) -> bool:
    """`spec` is an offline describer that makes nothing of frames drawn as `source` (`synthetic`,
    `pictograph`); False for recorded frames and for a vision model."""
    return spec in LOCAL_NAMES and source in DRAWN_FRAME_READERS and spec not in DRAWN_FRAME_READERS[source]
