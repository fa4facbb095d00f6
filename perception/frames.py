"""Frames: a buffer of timestamped JPEGs capped by count and bytes (per
session and, through a shared `FrameBudget`, across sessions), frame
selection for a turn, and the context-frame rule. Selection decodes JPEGs:
callers on an event loop run it in a worker thread.

- Turn frame: the last frame at or before the end of speech (default), or
  the sharpest frame inside the utterance (variance of the Laplacian).
- Context frame: among frames seen before Turn 1 speech began, the latest one
  whose colour histogram differs from the Turn 1 frame by more than a
  threshold (Bhattacharyya distance) becomes a context camera block.
"""

from __future__ import annotations

import weakref
from collections import deque
from dataclasses import dataclass

import cv2
import numpy as np

CONTEXT_DISTANCE_THRESHOLD = 0.35
# a synthetic frame (simulator.synthetic) carries its authored camera text in a JPEG comment after this
SYNTHETIC_COMMENT = b"wearsim-synthetic-frame: "


@dataclass(frozen=True)
class Frame:
    t_ms: int
    jpeg: bytes


def decode_jpeg(jpeg: bytes) -> np.ndarray:
    image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise ValueError("frame is not a decodable JPEG or PNG image")
    return image


def encode_jpeg(image: np.ndarray, quality: int = 85) -> bytes:
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("could not encode the frame as JPEG")
    return data.tobytes()


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
        self.frames.append(Frame(t_ms, jpeg))
        self.bytes += size

    def drop_oldest(self) -> int:
        frame = self.frames.popleft()
        self.bytes -= len(frame.jpeg)
        self.dropped += 1
        return len(frame.jpeg)

    def clear(self) -> None:
        self.frames.clear()
        self.bytes = 0

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


def pick_context_frame(frames_before: list[Frame], turn_frame: bytes,
                       threshold: float = CONTEXT_DISTANCE_THRESHOLD) -> bytes | None:
    """The latest pre-speech frame that looks different from the Turn 1 frame, if any."""
    for frame in sorted(frames_before, key=lambda f: f.t_ms, reverse=True):
        if histogram_distance(frame.jpeg, turn_frame) > threshold:
            return frame.jpeg
    return None
