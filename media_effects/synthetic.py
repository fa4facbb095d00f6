"""Synthetic frames: a turn's authored camera text drawn on a plain frame.

For scenarios without recorded frames, `--synthetic-frames` gives every turn
a frame so frame timing can be tested on the whole bank. The text is also
stored in the JPEG's comment segment, marked as synthetic; the `authored`
describer reads it back, so the local cascade then sees exactly the text
proxy and only the timing of frames can change its answer. The `ocr`
describer reads the drawn text from the pixels instead, so an impaired frame
(blur, darkness, occlusion) changes what it reads. A vision model reading
the drawn text measures plumbing and timing, not perception.

The text is drawn to be read by OCR: Pillow's built-in scalable font
(Aileron) at 26 px where it fits (smaller for long texts, down to 16 px),
dark on light grey, lines broken at spaces only (a hyphenated word is never
split), with word spaces 1.3 times the font's own, so the ink gap between
two words is clearly wider than the gap between two letters.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from media_effects.frames import SYNTHETIC_COMMENT, encode_jpeg, with_comment

SIZE = (480, 640)  # height, width
MARGIN = 20  # pixels left, right and below the text
HEADER = "SYNTHETIC FRAME"
HEADER_COLOUR = (160, 0, 0)  # RGB
HEADER_SIZE = 22
TEXT_COLOUR = (20, 20, 20)
TEXT_TOP = 60  # the first text line's top, below the header
FONT_SIZES = (26, 24, 22, 20, 18, 16)  # the largest that fits the frame is used
LINE_HEIGHT = 1.4  # line pitch in font sizes
WORD_SPACING = 1.3  # a word space in the font's own spaces


def _wrap(draw: ImageDraw.ImageDraw, words: list[str], font, width: float, space: float) -> list[list[str]]:
    """Words greedily into lines no wider than `width` (a word wider than a line gets a line of its own)."""
    lines: list[list[str]] = []
    used = 0.0
    for word in words:
        size = draw.textlength(word, font=font)
        if lines and used + space + size <= width:
            lines[-1].append(word)
            used += space + size
        else:
            lines.append([word])
            used = size
    return lines


def _layout(draw: ImageDraw.ImageDraw, text: str):
    """(font, space width, line pitch, lines): the largest font size whose lines fit the frame, else
    the smallest size with the lines that fit."""
    words = text.split()
    width = SIZE[1] - 2 * MARGIN
    for size in FONT_SIZES:
        font = ImageFont.load_default(size=size)
        space = draw.textlength(" ", font=font) * WORD_SPACING
        pitch = round(size * LINE_HEIGHT)
        lines = _wrap(draw, words, font, width, space)
        fits = (SIZE[0] - MARGIN - TEXT_TOP) // pitch
        if len(lines) <= fits or size == FONT_SIZES[-1]:
            return font, space, pitch, lines[:fits]
    raise AssertionError("unreachable")


def synthetic_frame(text: str, *, background: tuple[int, int, int] = (236, 236, 236)) -> bytes:
    """A plain frame with `text` drawn on it, the text also in its comment segment. `background` is
    BGR, as OpenCV orders colours."""
    image = Image.new("RGB", (SIZE[1], SIZE[0]), tuple(background[::-1]))
    draw = ImageDraw.Draw(image)
    draw.text((MARGIN, 14), HEADER, font=ImageFont.load_default(size=HEADER_SIZE), fill=HEADER_COLOUR)
    font, space, pitch, lines = _layout(draw, text)
    for row, words in enumerate(lines):
        x, y = float(MARGIN), TEXT_TOP + row * pitch
        for word in words:
            draw.text((x, y), word, font=font, fill=TEXT_COLOUR)
            x += draw.textlength(word, font=font) + space
    bgr = np.ascontiguousarray(np.asarray(image)[:, :, ::-1])
    return with_comment(encode_jpeg(bgr), SYNTHETIC_COMMENT + text.encode("utf-8"))
