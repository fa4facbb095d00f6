"""Proactive sessions: when the assistant is given the chance to speak unasked.

A session's `proactive` strategy (named in its hello, like the frame policy)
decides when to probe: ask the assistant, with the scene as it is now and
nobody having spoken, whether something needs saying. It answers a remark,
or the silence marker (`core.watching.SILENCE_MARKER`), which is never
spoken or shown.

- `change`: a probe on a frame the frame policy sends whose picture moved
  (more than `PROBE_CHANGE` of a grey thumbnail's pixels, the measure the
  `change` frame policy uses) since the frame of the last probe; the first
  frame sent counts as a change. A change seen while a reply or probe is in
  flight waits for the next frame sent after it.
- `every:N`: a probe every N seconds of stream time (1 to 60), with the
  newest frame sent; a slot that falls while a reply or probe is in flight
  is skipped.
- `native`: no probe; what a realtime API sends on its own would be the
  remarks. Neither adapter turns on the APIs' own turn detection, so
  nothing arrives unprompted and a native trial records no remark: the
  number is what the issue's users report (the models do not speak up from
  video). A chat model cannot speak unasked, so `native` needs a realtime
  backend.

No probe starts while the user is speaking or a reply is being generated.
`SilenceFilter` holds a probe's text and audio back while they may still be
the marker, so a silent probe sends nothing to the client.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.numbers import strict_number
from core.watching import could_be_silent, is_silent

KINDS = ("change", "every", "native")
PROBE_CHANGE = 0.02  # share of thumbnail pixels moved since the last probed frame that counts as a change
MAX_EVERY_S = 60.0
EXAMPLES = "change, every:5, native"


@dataclass(frozen=True, kw_only=True)
class Strategy:
    kind: str
    every_s: float = 0.0

    @property
    def name(self) -> str:
        return f"every:{self.every_s:g}" if self.kind == "every" else self.kind

    @property
    def probes(self) -> bool:
        return self.kind != "native"


def parse_strategy(text: str) -> Strategy:
    """`change`, `every:N` or `native`; a `ValueError` with one line otherwise."""
    kind, colon, rest = text.strip().partition(":")
    if kind in ("change", "native") and not colon:
        return Strategy(kind=kind)
    if kind == "every":
        every = strict_number(rest)  # ASCII digits and one optional point: not `1_0`, `1e1` or other scripts' digits
        if every is not None and 1 <= every <= MAX_EVERY_S:
            return Strategy(kind="every", every_s=every)
        raise ValueError(
            f"proactive strategy {text[:40]!r}: every:N takes a number of seconds from 1 to "
            f"{MAX_EVERY_S:g}, written in digits 0-9 with at most one point"
        )
    raise ValueError(f"unknown proactive strategy {text[:40]!r}; one of {EXAMPLES}")


def parse_strategies(text: str) -> tuple[Strategy, ...]:
    """A comma-separated list (`--proactive change,every:5`), each once."""
    strategies = tuple(parse_strategy(part) for part in text.split(",") if part.strip())
    if not strategies:
        raise ValueError(f"--proactive names no strategy; one or more of {EXAMPLES}")
    names = [s.name for s in strategies]
    if len(set(names)) != len(names):
        raise ValueError(f"--proactive names a strategy twice: {text[:80]}")
    return strategies


class ProbeSchedule:
    """When the next probe is due, from the frames the policy sends and the stream clock."""

    def __init__(self, strategy: Strategy):
        self.strategy = strategy
        self.changed = False  # `change`: a frame sent since the last probe moved
        self._probed = None  # thumbnail of the last probed frame
        self._next_ms: float | None = None  # `every`: the next slot

    def sent(self, thumbnail) -> None:
        """A frame the policy sent (its grey thumbnail, `perception.frame_policy.thumbnail`)."""
        from perception.frame_policy import picture_change

        if self.strategy.kind == "change" and (
            self._probed is None or picture_change(self._probed, thumbnail) > PROBE_CHANGE
        ):
            self.changed = True

    def due(self, clock_ms: int) -> bool:
        if self.strategy.kind == "change":
            return self.changed
        if self.strategy.kind == "every":
            if self._next_ms is None:
                self._next_ms = clock_ms + self.strategy.every_s * 1000
            return clock_ms >= self._next_ms
        return False

    def asked(self, clock_ms: int, thumbnail) -> None:
        """A probe started at `clock_ms` with this frame."""
        self._probed = thumbnail
        self.skip(clock_ms)

    def skip(self, clock_ms: int) -> None:
        """The probe due at `clock_ms` was not asked (the server's pace, `streaming.probe_pace`): `every`
        moves to its next slot; `change` waits for a frame that moves from the last one probed."""
        self.changed = False
        if self.strategy.kind == "every":
            step = self.strategy.every_s * 1000
            self._next_ms = (self._next_ms or clock_ms) + step
            while self._next_ms <= clock_ms:  # slots missed while busy are skipped
                self._next_ms += step


class SilenceFilter:
    """A probe's reply as it streams: text and audio go out once the text cannot be the
    silence marker any more; a reply that is the marker sends nothing."""

    def __init__(self) -> None:
        self.text = ""
        self.open = False
        self.audio = False
        self._held_text: list[str] = []
        self._held_audio: list[bytes] = []

    def on_text(self, piece: str) -> tuple[list[str], list[bytes]]:
        self.text += piece
        if self.open:
            return [piece], []
        if could_be_silent(self.text):
            self._held_text.append(piece)
            return [], []
        return self._release([piece])

    def on_audio(self, pcm16: bytes) -> list[bytes]:
        self.audio = True
        if self.open:
            return [pcm16]
        self._held_audio.append(pcm16)
        return []

    @property
    def silent(self) -> bool:
        """The whole reply was the marker (or nothing at all)."""
        return is_silent(self.text) and not (not self.text.strip() and self.audio)

    def finish(self) -> tuple[list[str], list[bytes]]:
        """At the reply's end: what was held, unless the reply was the marker."""
        if self.open or self.silent:
            return [], []
        return self._release([])

    def _release(self, pieces: list[str]) -> tuple[list[str], list[bytes]]:
        self.open = True
        text, audio = self._held_text + pieces, self._held_audio
        self._held_text, self._held_audio = [], []
        return text, audio
