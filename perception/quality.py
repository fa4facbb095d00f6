"""Quality helpers: word error rate of a transcript (defined in
`core.words`, so the reports measure it the same way), and the
validator's object-name check run on perceived camera blocks."""

from __future__ import annotations

from core.nouns import object_nouns_in
from core.words import word_error_rate

__all__ = ["object_names_in_camera_block", "word_error_rate"]


def object_names_in_camera_block(text: str | None) -> list[str]:
    """Object nouns a perceived camera block should not contain (authoring rule)."""
    return object_nouns_in(text)
