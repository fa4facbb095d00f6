"""The offline frame reader: the text in a frame's pixels, read with OCR.

`rapidocr-onnxruntime` (Apache-2.0) ships the PP-OCRv4 detection and
recognition models and the text-direction classifier inside its wheel, so
this runs with no network. The engine is built once per process, on first
use, behind a lock. Reads are serialised (the engine keeps per-call state,
and on two cores a second concurrent read would only halve the speed of the
first); callers on an event loop use `in_reader_thread`, which runs the work
on the process's one OCR thread, so reads queue there and never hold the
loop's default executor threads that speech recognition and frame selection
need.

Only pixels are read. A synthetic frame's JPEG comment (the authored text
the `authored` describer reads back) is never looked at, so blur, darkness
and occlusion change what is read. The simulator's own label on synthetic
frames, the "SYNTHETIC FRAME" header line, is left out (`is_header`).

How a frame is read:
1. PP-OCRv4 finds text boxes; each box is cropped, turned upright when the
   direction classifier says it is upside down, and recognised.
2. The recogniser (a Chinese and English model) often runs English words
   together ("thetopleft"). Spaces are put back from the pixels: the crop is
   binarised, and where the ink leaves an empty stretch of columns wide
   enough between two recognised characters (`WORD_GAP` x-heights, or
   `LETTER_GAP_RATIO` times the line's usual letter gap when that is
   smaller, never under `MIN_WORD_GAP` x-heights), a space goes between them
   (each character's position comes from its CTC column).
3. Each word keeps the mean probability of its characters; a word under
   `MIN_CONFIDENCE` (0.6) is dropped. On the bank's clean synthetic frames
   no word scores under it, so the threshold costs nothing there; it drops
   the fragments the recogniser itself doubts (figures in docs/perception.md).
   It is no misreading filter: most words a dark frame gets wrong score
   above it.
4. Boxes are put in reading order: grouped into lines by vertical overlap,
   lines top to bottom, boxes in a line left to right. Lines that continue
   one another (the same left edge, at most a line height apart) form one
   block and are joined with a space (a line ending in a hyphen joins the
   next without one); blocks are joined with " / ".
"""

from __future__ import annotations

import asyncio
import difflib
import functools
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import cv2
import numpy as np

from media_effects.frames import decode_jpeg, pixel_refusal

MIN_CONFIDENCE = 0.6  # a word whose characters' mean recognition probability is lower is dropped
WORD_GAP = 0.45  # an ink-free stretch this many x-heights wide between two characters is a space,
MIN_WORD_GAP = 0.3  # and so is one at least this many x-heights wide and
LETTER_GAP_RATIO = 2.2  # this many times the line's median gap between letters
MAX_SIDE = 2000  # a larger frame is scaled down to this longest side before reading
MIN_SIDE = 32  # a frame with a shorter side holds nothing readable
TEXT_LABEL = "Text in view: "  # how a camera block gives the text read, after the layout
HEADER = "SYNTHETIC FRAME"  # drawn by media_effects.synthetic: the simulator's label, not the scene
ENGINE = "PP-OCRv4 (rapidocr-onnxruntime 1.4.4)"
INSTALL_HINT = (
    "the ocr describer needs the rapidocr-onnxruntime package (Python < 3.13): "
    "pip install 'rapidocr-onnxruntime==1.4.4'"
)

_engine = None
_engine_lock = threading.Lock()  # building the engine
_read_lock = threading.Lock()  # one read at a time: the engine keeps per-call state
_reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wearsim-ocr")  # starts its thread on first use


@dataclass(frozen=True, kw_only=True)
class Word:
    text: str
    confidence: float


@dataclass(frozen=True, kw_only=True)
class TextLine:
    """One line of text in reading order, with its box in frame pixels and its words."""

    text: str
    confidence: float  # the mean of its words' confidences
    left: float
    top: float
    right: float
    bottom: float
    words: tuple[Word, ...] = ()  # the words kept, with their confidences

    @property
    def height(self) -> float:
        return self.bottom - self.top


@dataclass(frozen=True, kw_only=True)
class FrameText:
    """What a frame says: its lines in reading order (the header of a synthetic frame left out)."""

    lines: tuple[TextLine, ...]

    @property
    def blocks(self) -> list[str]:
        return text_blocks(self.lines)

    @property
    def text(self) -> str:
        """The blocks joined with " / "; empty when nothing was read."""
        return " / ".join(self.blocks)

    @property
    def words(self) -> int:
        return sum(len(line.text.split()) for line in self.lines)


def engine():
    """The process's OCR engine, built on first use (about 0.3 s; the models are in the wheel).

    Its three onnxruntime sessions are built with `SLEEPING_THREADS`: an idle thread of a session's
    pool sleeps instead of spinning for the next piece of work. rapidocr has no setting for this, so
    its session options class is swapped for one that sets it while the engine is built (under the
    build lock). `benchmarks/ocr_reading.py` on the bank's 146 synthetic frames, 2 cores: the same
    text; 1.31 -> 1.12 s of CPU and 0.67 -> 0.61 s a frame (docs/performance.md)."""
    global _engine
    if _engine is None:
        with _engine_lock:
            if _engine is None:
                try:
                    from rapidocr_onnxruntime import RapidOCR
                    from rapidocr_onnxruntime.utils import infer_engine
                except ImportError as exc:  # not installed, or a Python it has no wheel for
                    raise RuntimeError(INSTALL_HINT) from exc
                plain = infer_engine.SessionOptions
                infer_engine.SessionOptions = _sleeping_threads(plain)
                try:
                    _engine = RapidOCR(print_verbose=False)
                finally:
                    infer_engine.SessionOptions = plain
    return _engine


SLEEPING_THREADS = ("session.intra_op.allow_spinning", "0")  # onnxruntime's session config entry


def _sleeping_threads(options_class):
    """`options_class` whose new options carry `SLEEPING_THREADS`."""

    def options():
        made = options_class()
        made.add_session_config_entry(*SLEEPING_THREADS)
        return made

    return options


async def in_reader_thread(function, *args):
    """`function(*args)` on the process's OCR thread: reads wait their turn there, not in the event
    loop's default executor."""
    return await asyncio.get_running_loop().run_in_executor(_reader, functools.partial(function, *args))


def is_header(text: str) -> bool:
    """The synthetic frame's "SYNTHETIC FRAME" label, however the spaces were read."""
    letters = re.sub(r"[^A-Z]", "", text.upper())
    target = HEADER.replace(" ", "")
    return bool(letters) and difflib.SequenceMatcher(None, letters, target).ratio() >= 0.85


def word_gaps(crop: np.ndarray) -> list[float]:
    """The x centres (crop pixels) of the ink-free stretches in a text line crop wide enough to be
    the space between two words (see the module's docstring for the rule)."""
    gray = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY) if crop.ndim == 3 else crop
    gray = cv2.medianBlur(gray, 3)  # sensor noise would otherwise put specks of "ink" in the gaps
    _, binary = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    # the ground is the class that holds most of the crop's border (a tight crop of bold text can be
    # more ink than ground); the other class is ink, dark text on light or light on dark
    border = np.concatenate([binary[0], binary[-1], binary[:, 0], binary[:, -1]])
    ink = binary != (255 if (border == 255).mean() >= 0.5 else 0)
    rows = ink.sum(axis=1)
    if rows.max() == 0:
        return []
    core = np.nonzero(rows >= 0.5 * rows.max())[0]  # the x-height band: most letters have ink in every row
    x_height = core[-1] - core[0] + 1
    # the whole line: the run of inked rows around the x-height band (ascenders, descenders, capitals);
    # rows of a neighbouring line that the crop caught are cut off by the blank rows between lines
    top, bottom = core[0], core[-1]
    faint = rows > max(1, 0.05 * rows.max())
    while top > 0 and faint[top - 1]:
        top -= 1
    while bottom < len(rows) - 1 and faint[bottom + 1]:
        bottom += 1
    columns = np.nonzero(ink[top : bottom + 1].any(axis=0))[0]
    if len(columns) < 2:
        return []
    gaps = np.diff(columns) - 1
    letter_gaps = gaps[gaps > 0]
    typical = float(np.median(letter_gaps)) if len(letter_gaps) else 0.0
    # a word gap: WORD_GAP x-heights, or less when the letters sit much closer than that (capitals,
    # whose "x-height" band is their full height), but never under MIN_WORD_GAP x-heights
    threshold = min(WORD_GAP * x_height, max(MIN_WORD_GAP * x_height, LETTER_GAP_RATIO * typical))
    wide = np.nonzero(gaps >= threshold)[0]
    return [float(columns[i] + columns[i + 1]) / 2 for i in wide]


def _words(
    text: str, columns: list[int], probabilities: list[float], width: float, column_count: float, gaps: list[float]
) -> list[Word]:
    """Words of one recognised crop: its characters split at the spaces it read and at the ink gaps."""
    words: list[Word] = []
    chars: list[str] = []
    probs: list[float] = []

    def close() -> None:
        if chars:
            words.append(Word(text="".join(chars), confidence=float(np.mean(probs))))
            chars.clear()
            probs.clear()

    previous_x = None
    for char, column, probability in zip(text, columns, probabilities):
        x = (column + 0.5) * width / max(column_count, 1e-6)
        if char == " ":
            close()
            previous_x = None
            continue
        if previous_x is not None and any(previous_x < gap < x for gap in gaps):
            close()
        chars.append(char)
        probs.append(probability)
        previous_x = x
    close()
    return words


def _reading_order(boxes: list[tuple[float, float, float, float, list[Word]]]) -> list[TextLine]:
    """(left, top, right, bottom, words) boxes grouped into lines: top to bottom, left to right."""
    lines: list[list] = []
    for box in sorted(boxes, key=lambda b: (b[1] + b[3]) / 2):
        centre = (box[1] + box[3]) / 2
        for line in lines:
            top, bottom = min(b[1] for b in line), max(b[3] for b in line)
            if top <= centre <= bottom:
                line.append(box)
                break
        else:
            lines.append([box])
    result = []
    for line in sorted(lines, key=lambda members: min(b[1] for b in members)):
        line.sort(key=lambda b: b[0])
        words = tuple(w for b in line for w in b[4])
        text = " ".join(w.text for w in words)
        confidence = float(np.mean([w.confidence for w in words]))
        result.append(
            TextLine(
                text=text,
                confidence=confidence,
                left=min(b[0] for b in line),
                top=min(b[1] for b in line),
                right=max(b[2] for b in line),
                bottom=max(b[3] for b in line),
                words=words,
            )
        )
    return result


def text_blocks(lines: tuple[TextLine, ...] | list[TextLine]) -> list[str]:
    """Lines that continue one another (the same left edge, at most a line height below) joined into
    one block with a space, or with nothing after a line that ends in a hyphen."""
    blocks: list[str] = []
    previous = None
    for line in lines:
        continues = (
            previous is not None
            and abs(line.left - previous.left) <= 0.8 * previous.height
            and line.top - previous.bottom <= previous.height
        )
        if continues:
            joiner = "" if blocks[-1].endswith("-") and line.text[:1].isalnum() else " "
            blocks[-1] += joiner + line.text
        else:
            blocks.append(line.text)
        previous = line
    return blocks


def read_text(image: np.ndarray, *, min_confidence: float = MIN_CONFIDENCE, keep_header: bool = False) -> FrameText:
    """The text in a BGR image, in reading order. Words under `min_confidence` are dropped; the
    synthetic frame's header line is dropped unless `keep_header`. CPU work: run it in a thread."""
    height, width = image.shape[:2]
    if min(height, width) < MIN_SIDE:
        return FrameText(lines=())
    scale = 1.0
    if max(height, width) > MAX_SIDE:
        scale = MAX_SIDE / max(height, width)
        image = cv2.resize(image, (round(width * scale), round(height * scale)), interpolation=cv2.INTER_AREA)
    ocr = engine()
    with _read_lock:
        found, _ = ocr.text_det(image)
        if found is None or len(found) == 0:
            return FrameText(lines=())
        found = list(found)
        crops = ocr.get_crop_img_list(image, found)
        crops, _, _ = ocr.text_cls(crops)
        recognised, _ = ocr.text_rec(crops, True)
    boxes = []
    for quad, crop, (text, _, info) in zip(found, crops, recognised):
        if not text.strip():
            continue
        column_count, _, word_columns, _, probabilities = info
        columns = [c for word in word_columns for c in word]
        words = _words(text, columns, probabilities, crop.shape[1], column_count, word_gaps(crop))
        kept = [w for w in words if w.confidence >= min_confidence]
        if not kept:
            continue
        xs, ys = quad[:, 0] / scale, quad[:, 1] / scale
        boxes.append((float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max()), kept))
    lines = _reading_order(boxes)
    if not keep_header:
        lines = [line for line in lines if not is_header(line.text)]
    return FrameText(lines=tuple(lines))


def with_text(layout: str, read: FrameText) -> str:
    """A camera block: the layout sentences, then `Text in view: "..."` when any text was read."""
    return f'{layout} {TEXT_LABEL}"{read.text}"' if read.lines else layout


def text_in_description(description: str) -> str:
    """The text a camera block written by `with_text` quotes; empty when it quotes none."""
    _, label, quoted = description.partition(TEXT_LABEL + '"')
    return quoted[:-1] if label and quoted.endswith('"') else ""


def read_frame(jpeg: bytes, *, min_confidence: float = MIN_CONFIDENCE) -> FrameText:
    """The text in a JPEG's (or PNG's) pixels; a frame over the decode limit is refused with
    `media_effects.frames`' ValueError before anything is decoded."""
    refusal = pixel_refusal(jpeg)
    if refusal:
        raise ValueError(refusal)
    return read_text(decode_jpeg(jpeg), min_confidence=min_confidence)
