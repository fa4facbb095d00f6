"""Frame policies: which of the camera's frames reach the assistant.

The glasses' camera offers frames (the simulator plays five a second); a real
client sends far fewer. A policy, named in a session's hello, decides per
frame in stream order:

- `end`: no frame is sent as it arrives; at the end of speech the newest
  frame is picked. It looks at the moment the question ended, which a
  client streaming ahead of time cannot do: an upper bound, not a client.
- `fps:N`: N frames a second on a fixed schedule of the stream clock (N may
  be fractional: `fps:0.5` is a frame every two seconds); the first frame
  goes at the first slot, a whole multiple of the interval, so how stale a
  turn's newest frame is depends on where the scene change falls between
  slots, as it does for a real client.
- `speech:N/M`: N frames a second while voice activity detection hears the
  user, M otherwise (`speech:1/0.3`; M may be 0).
- `change:T` or `change:T/R`: a frame when more than the share T of the
  picture changed since the last frame sent (the pixels of a 64x48 grey
  thumbnail whose value moved by more than a tenth of the scale), at most R
  a second (default 2). Sensor noise moves no pixel that far; one line of
  text rewritten on a plain frame moves about 1%.

`FrameGate` applies one policy to one session's frames; `parse_frame_policy`
reads the text form and raises `ValueError` with a one-line message. The
size and JPEG quality frames are sent at are separate (`resize_frame`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from core.numbers import strict_number
from media_effects.frames import SYNTHETIC_COMMENT, decode_jpeg, encode_jpeg, synthetic_text, with_comment

KINDS = ("end", "fps", "speech", "change")
MAX_RATE = 10.0  # frames a second: no policy sends faster
CHANGE_MAX_RATE = 2.0  # `change:T` without a rate
THUMBNAIL = (64, 48)  # width, height of the thumbnails `change` compares
PIXEL_CHANGE = 0.1  # a thumbnail pixel changed when its grey value moved by more than this (0 to 1)
EXAMPLES = "end, fps:1, fps:0.5, speech:1/0.3, change:0.01, change:0.01/2"


@dataclass(frozen=True, kw_only=True)
class FramePolicy:
    kind: str  # one of KINDS
    rate: float = 0.0  # fps: the rate; speech: the rate while the user speaks; change: the maximum rate
    idle_rate: float = 0.0  # speech: the rate otherwise
    threshold: float = 0.0  # change: the difference that counts as a new picture

    @property
    def name(self) -> str:
        """The policy's text form, as `parse_frame_policy` reads it."""
        if self.kind == "fps":
            return f"fps:{_number(self.rate)}"
        if self.kind == "speech":
            return f"speech:{_number(self.rate)}/{_number(self.idle_rate)}"
        if self.kind == "change":
            return f"change:{_number(self.threshold)}/{_number(self.rate)}"
        return self.kind


def _number(value: float) -> str:
    return f"{value:g}"


def _rate(text: str, policy: str, *, zero: bool = False) -> float:
    value = strict_number(text)  # ASCII digits and one optional point: not `1_0`, `1e1` or other scripts' digits
    low = 0.0 if zero else 0.0 + 1e-9
    if value is None or not low <= value <= MAX_RATE:
        lowest = "0" if zero else "above 0"
        raise ValueError(
            f"frame policy {policy!r}: the rate {text!r} must be a number of frames a second "
            f"from {lowest} to {MAX_RATE:g}"
        )
    return value


def parse_frame_policy(text: str) -> FramePolicy:
    """`end`, `fps:N`, `speech:N/M`, `change:T` or `change:T/R`; anything else is a `ValueError`."""
    if not isinstance(text, str):
        raise ValueError(f"a frame policy must be text like {EXAMPLES}")
    policy = text.strip()
    kind, _, value = policy.partition(":")
    if kind == "end" and not value:
        return FramePolicy(kind="end")
    if kind == "fps" and value:
        return FramePolicy(kind="fps", rate=_rate(value, policy))
    if kind == "speech" and value.count("/") == 1:
        speaking, idle = value.split("/")
        return FramePolicy(kind="speech", rate=_rate(speaking, policy), idle_rate=_rate(idle, policy, zero=True))
    if kind == "change" and value and value.count("/") <= 1:
        threshold, _, rate = value.partition("/")
        limit = strict_number(threshold)
        if limit is None or not 0 < limit <= 1:
            raise ValueError(
                f"frame policy {policy!r}: the threshold {threshold!r} must be a number "
                "above 0 and at most 1 (the share of the picture that changed)"
            )
        return FramePolicy(kind="change", rate=_rate(rate, policy) if rate else CHANGE_MAX_RATE, threshold=limit)
    raise ValueError(f"unknown frame policy {policy[:60]!r}: use one of {EXAMPLES}")


def parse_frame_policies(text: str) -> tuple[FramePolicy, ...]:
    """A comma-separated list of policies (a sweep), each once, in the order given."""
    policies: list[FramePolicy] = []
    for part in text.split(","):
        if part.strip():
            policy = parse_frame_policy(part)
            if policy.name in {p.name for p in policies}:
                raise ValueError(f"frame policy {policy.name!r} is listed twice")
            policies.append(policy)
    if not policies:
        raise ValueError(f"give at least one frame policy, like {EXAMPLES}")
    return tuple(policies)


def thumbnail(jpeg: bytes) -> np.ndarray:
    """The frame as a small grey image, values 0 to 1 (what `change` compares)."""
    grey = cv2.cvtColor(decode_jpeg(jpeg), cv2.COLOR_BGR2GRAY)
    return cv2.resize(grey, THUMBNAIL, interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0


def picture_change(a: np.ndarray, b: np.ndarray) -> float:
    """The share of two thumbnails' pixels whose grey value differs by more than `PIXEL_CHANGE`."""
    return float((np.abs(a - b) > PIXEL_CHANGE).mean())


class FrameGate:
    """One session's policy at work: `offer` each frame in stream order, and it says
    whether the frame is sent. `end` sends none as they come (the session picks one at
    the end of speech)."""

    def __init__(self, policy: FramePolicy):
        self.policy = policy
        self.slot_ms: float | None = None  # the schedule's time of the last frame sent
        self.first_ms: int | None = None  # stream time of the first frame offered
        self.last_ms: int | None = None  # stream time of the last frame sent
        self.last_thumbnail: np.ndarray | None = None

    @property
    def decodes(self) -> bool:
        """Whether `offer` decodes the frame (callers on an event loop run it in a thread)."""
        return self.policy.kind == "change"

    def offer(self, t_ms: int, jpeg: bytes, speaking: bool = False) -> bool:
        kind = self.policy.kind
        if kind == "end":
            return False
        if kind == "change":
            return self._offer_change(t_ms, jpeg)
        rate = self.policy.rate if (kind == "fps" or speaking) else self.policy.idle_rate
        if rate <= 0:
            return False
        interval = 1000.0 / rate
        if self.first_ms is None:
            self.first_ms = t_ms
        due = math.ceil(self.first_ms / interval) * interval if self.slot_ms is None else self.slot_ms + interval
        if t_ms < due:
            return False
        # keep to the schedule, unless frames were missing for a whole interval
        self.slot_ms = due if t_ms - due < interval else float(t_ms)
        self.last_ms = t_ms
        return True

    def _offer_change(self, t_ms: int, jpeg: bytes) -> bool:
        if self.last_ms is not None and t_ms - self.last_ms < 1000.0 / self.policy.rate:
            return False
        picture = thumbnail(jpeg)
        if self.last_thumbnail is not None and picture_change(picture, self.last_thumbnail) <= self.policy.threshold:
            return False
        self.last_ms, self.last_thumbnail = t_ms, picture
        return True


def resize_frame(jpeg: bytes, max_side: int = 0, quality: int = 0) -> bytes:
    """The frame as it is sent: its longer side at most `max_side` pixels (0: as captured) and
    encoded at JPEG `quality` (0: as captured). A synthetic frame keeps its comment."""
    if not max_side and not quality:
        return jpeg
    image = decode_jpeg(jpeg)
    height, width = image.shape[:2]
    if max_side and max(height, width) > max_side:
        scale = max_side / max(height, width)
        image = cv2.resize(
            image, (max(1, round(width * scale)), max(1, round(height * scale))), interpolation=cv2.INTER_AREA
        )
    data = encode_jpeg(image, quality or 90)
    text = synthetic_text(jpeg)
    if text is not None:
        data = with_comment(data, SYNTHETIC_COMMENT + text.encode("utf-8"))
    return data
