"""Frames: a buffer of timestamped JPEGs capped by count and bytes (per
session and, through a shared `FrameBudget`, across sessions), frame
selection for a turn, and the context-frame rule. Selection decodes JPEGs:
callers on an event loop run it in a worker thread.

- Turn frame: the last frame at or before the end of speech (default), or
  the sharpest frame inside the utterance (variance of the Laplacian).
- Context frame: among frames seen before Turn 1 speech began, the latest one
  whose colour histogram differs from the Turn 1 frame by more than a
  threshold (Bhattacharyya distance) becomes a context camera block.

Decoding is bounded: a frame's width and height are read from its header
(`image_size`: the JPEG SOF marker or the PNG IHDR chunk, no decoding) and a
frame over `MAX_FRAME_PIXELS` is refused before any pixel is allocated (a
600-byte JPEG can claim 16384x16384, 805 MB decoded); and at most
`MAX_CONCURRENT_DECODES` frames are decoded at once in the process, whoever
asks.
"""

from __future__ import annotations

import struct
import threading
import weakref
from collections import deque
from dataclasses import dataclass

import cv2
import numpy as np

CONTEXT_DISTANCE_THRESHOLD = 0.35
# a synthetic frame (media_effects.synthetic) carries its authored camera text in a JPEG comment after this
SYNTHETIC_COMMENT = b"wearsim-synthetic-frame: "


MAX_FRAME_PIXELS = 4096 * 2160  # DCI 4K: 26.5 MB decoded as BGR
MAX_CONCURRENT_DECODES = 2  # frame decodes running at once in the process (each at most MAX_FRAME_PIXELS)
_DECODES = threading.BoundedSemaphore(MAX_CONCURRENT_DECODES)
# JPEG start-of-frame markers (baseline, progressive, lossless, arithmetic): C0-CF but DHT, JPG and DAC
_SOF_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True, kw_only=True)
class Frame:
    t_ms: int
    jpeg: bytes


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a JPEG's first start-of-frame marker or a PNG's IHDR chunk, without
    decoding; None when the header holds none (the data is then not a decodable JPEG or PNG)."""
    if data.startswith(_PNG_SIGNATURE):
        if len(data) >= 24 and data[12:16] == b"IHDR":
            return struct.unpack(">II", data[16:24])
        return None
    if not data.startswith(b"\xff\xd8"):
        return None
    i = 2
    while i < len(data) - 1:
        if data[i] != 0xFF:  # stray bytes between segments: the decoder skips them, so do we
            i += 1
            continue
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0x01, 0xD8) or 0xD0 <= marker <= 0xD7:  # markers without a length
            i += 2
            continue
        if marker in (0xD9, 0xDA):  # end of image, or scan data before any frame header
            return None
        if i + 4 > len(data):
            return None
        length = struct.unpack(">H", data[i + 2 : i + 4])[0]
        if marker in _SOF_MARKERS:
            if i + 9 > len(data):
                return None
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            return width, height
        i += 2 + length
    return None


def pixel_refusal(data: bytes, max_pixels: int = MAX_FRAME_PIXELS) -> str | None:
    """Why this image may not be decoded (its header claims more than `max_pixels`), or None."""
    size = image_size(data)
    if size is not None and size[0] * size[1] > max_pixels:
        return (
            f"frame of {size[0]}x{size[1]} pixels is over the limit of {max_pixels:,} pixels "
            "(4096x2160); send a smaller frame"
        )
    return None


def decode_jpeg(jpeg: bytes) -> np.ndarray:
    """A JPEG or PNG decoded to BGR, its size read from its header first and refused over
    `MAX_FRAME_PIXELS`; at most `MAX_CONCURRENT_DECODES` decodes run at once."""
    refusal = pixel_refusal(jpeg)
    if refusal:
        raise ValueError(refusal)
    if image_size(jpeg) is None:
        raise ValueError("frame is not a decodable JPEG or PNG image")
    with _DECODES:
        image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise ValueError("frame is not a decodable JPEG or PNG image")
    return image


def encode_jpeg(image: np.ndarray, quality: int = 85) -> bytes:
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("could not encode the frame as JPEG")
    return data.tobytes()


def jpeg_comments(jpeg: bytes) -> list[bytes]:
    """The COM segments of a JPEG, read from its header segments."""
    comments, i = [], 2
    while i + 4 <= len(jpeg) and jpeg[i] == 0xFF:
        marker, length = jpeg[i + 1], int.from_bytes(jpeg[i + 2 : i + 4], "big")
        if marker == 0xDA:  # start of scan: no more header segments
            break
        if marker == 0xFE:
            comments.append(jpeg[i + 4 : i + 2 + length])
        i += 2 + length
    return comments


def synthetic_text(jpeg: bytes) -> str | None:
    """The authored camera text a synthetic frame carries in its comment, or None."""
    for comment in jpeg_comments(jpeg):
        if comment.startswith(SYNTHETIC_COMMENT):
            return comment[len(SYNTHETIC_COMMENT) :].decode("utf-8", "replace")
    return None


def with_comment(jpeg: bytes, comment: bytes) -> bytes:
    """The JPEG with a COM segment holding `comment`, right after the start-of-image marker."""
    if not jpeg.startswith(b"\xff\xd8"):
        raise ValueError("not a JPEG")
    if len(comment) > 65533:
        raise ValueError("a JPEG comment holds at most 65,533 bytes")
    return jpeg[:2] + b"\xff\xfe" + (len(comment) + 2).to_bytes(2, "big") + comment + jpeg[2:]


class FrameBudget:
    """A byte cap shared by every session's `FrameBuffer`.

    When a new frame would take the total over the cap, frames are dropped,
    oldest first, from whichever buffer holds the most bytes, so one session
    sending large frames fast evicts its own frames before anyone else's."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.buffers: weakref.WeakSet[FrameBuffer] = weakref.WeakSet()

    @property
    def used(self) -> int:
        return sum(b.bytes for b in self.buffers)

    def make_room(self, size: int) -> None:
        used = self.used
        while used + size > self.max_bytes:
            fullest = max(self.buffers, key=lambda b: b.bytes, default=None)
            if fullest is None or not fullest.frames:
                return
            used -= fullest.drop_oldest()


class FrameBuffer:
    """Timestamped JPEGs of one session, capped by count and by bytes (per
    session, and across sessions through a shared `FrameBudget`). The oldest
    frames go first."""

    def __init__(self, max_frames: int = 600, *, max_bytes: int = 16_000_000, budget: FrameBudget | None = None):
        self.frames: deque[Frame] = deque()
        self.max_frames = max_frames
        self.max_bytes = max_bytes
        self.bytes = 0
        self.dropped = 0
        self.budget = budget
        if budget is not None:
            budget.buffers.add(self)

    def add(self, t_ms: int, jpeg: bytes) -> None:
        size = len(jpeg)
        if size > self.max_bytes:
            raise ValueError(f"a frame of {size} bytes is over this buffer's cap of {self.max_bytes}")
        while self.frames and (len(self.frames) >= self.max_frames or self.bytes + size > self.max_bytes):
            self.drop_oldest()
        if self.budget is not None:
            self.budget.make_room(size)
        self.frames.append(Frame(t_ms=t_ms, jpeg=jpeg))
        self.bytes += size

    def drop_oldest(self) -> int:
        frame = self.frames.popleft()
        self.bytes -= len(frame.jpeg)
        self.dropped += 1
        return len(frame.jpeg)

    def clear(self) -> None:
        self.frames.clear()
        self.bytes = 0

    def close(self) -> None:
        """Its frames released now, and out of the shared budget's count (not when it is collected)."""
        self.clear()
        if self.budget is not None:
            self.budget.buffers.discard(self)

    def between(self, start_ms: int, end_ms: int) -> list[Frame]:
        return [f for f in self.frames if start_ms <= f.t_ms <= end_ms]

    def before(self, t_ms: int) -> list[Frame]:
        return [f for f in self.frames if f.t_ms < t_ms]


def sharpness(jpeg: bytes) -> float:
    gray = cv2.cvtColor(decode_jpeg(jpeg), cv2.COLOR_BGR2GRAY)
    return float(cv2.Laplacian(gray, cv2.CV_64F).var())


def select_frame(frames: list[Frame], start_ms: int, end_ms: int, mode: str = "end") -> Frame | None:
    """The turn's frame: `end` (last at or before end of speech) or `sharpest` inside the utterance."""
    if mode not in ("end", "sharpest"):
        raise ValueError(f"frame selection mode must be 'end' or 'sharpest', got {mode!r}")
    if mode == "sharpest":
        inside = [f for f in frames if start_ms <= f.t_ms <= end_ms]
        if inside:
            return max(inside, key=lambda f: sharpness(f.jpeg))
    earlier = [f for f in frames if f.t_ms <= end_ms]
    return max(earlier, key=lambda f: f.t_ms) if earlier else None


def histogram_distance(a: bytes, b: bytes) -> float:
    """Bhattacharyya distance of HSV colour histograms: 0 same, 1 disjoint."""
    hists = []
    for jpeg in (a, b):
        hsv = cv2.cvtColor(decode_jpeg(jpeg), cv2.COLOR_BGR2HSV)
        hist = cv2.calcHist([hsv], [0, 1], None, [30, 32], [0, 180, 0, 256])
        hists.append(cv2.normalize(hist, hist).flatten())
    return float(cv2.compareHist(hists[0], hists[1], cv2.HISTCMP_BHATTACHARYYA))


def pick_context_frame(
    frames_before: list[Frame], turn_frame: bytes, threshold: float = CONTEXT_DISTANCE_THRESHOLD
) -> bytes | None:
    """The latest pre-speech frame that looks different from the Turn 1 frame, if any."""
    for frame in sorted(frames_before, key=lambda f: f.t_ms, reverse=True):
        if histogram_distance(frame.jpeg, turn_frame) > threshold:
            return frame.jpeg
    return None
