"""Synthetic frames: a turn's authored camera text drawn on a plain frame.

For scenarios without recorded frames, `--synthetic-frames` gives every turn
a frame so frame timing can be tested on the whole bank. The text is also
stored in the JPEG's comment segment, marked as synthetic; the `authored`
describer reads it back, so the local cascade then sees exactly the text
proxy and only the timing of frames can change its answer. A vision model
reading the drawn text measures plumbing and timing, not perception.
"""

from __future__ import annotations

import textwrap

import cv2
import numpy as np

from perception.frames import SYNTHETIC_COMMENT, encode_jpeg, with_comment  # noqa: F401 (with_comment: used here and by callers)

SIZE = (480, 640)  # height, width


def synthetic_frame(text: str, *, background: tuple[int, int, int] = (236, 236, 236)) -> bytes:
    """A plain frame with `text` drawn on it, the text also in its comment segment."""
    image = np.full((*SIZE, 3), background, np.uint8)
    cv2.putText(image, "SYNTHETIC FRAME", (20, 36), cv2.FONT_HERSHEY_SIMPLEX, 0.7, (0, 0, 160), 2)
    for row, line in enumerate(textwrap.wrap(text, 46)[:16]):
        cv2.putText(image, line, (20, 80 + 24 * row), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (20, 20, 20), 1)
    return with_comment(encode_jpeg(image), SYNTHETIC_COMMENT + text.encode("utf-8"))
