"""`GlassesSettings`: everything the simulated glasses do in one session: the hello they send, and how
they play.

The hello is a `streaming.wire.SessionConfig`, the one record of what a session asks of the server and
of every default it has (the silence that ends a turn, the describer, the reply cap...); the glasses
hold one and add each scenario's parts to it when a session opens. Everything else here is what only
the glasses do: where their media comes from, how fast and how badly they send it.

`wearsim simulate` and `wearsim bench --via stream` (its proactive trials too) build these with one
builder from one flag group (`benchmark/cli/glasses_args.py`) and play their turns through the same
loop (`benchmark/conversations/stream.py`), so the two share every default and record them alike.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from streaming.wire import SessionConfig

# the pause between one turn's reply and the next turn's first frame, on the stream clock
TURN_GAP_MS = 200


@dataclass(frozen=True, kw_only=True)
class GlassesSettings:
    """The server the glasses talk to, the hello every session sends, and what the glasses play."""

    hello: SessionConfig  # the backend, describer, silence, end of turn, reply cap, frame policy and size...
    # the server
    url: str | None = None  # ws://HOST:PORT (None: not known yet; the caller starts one and fills it in)
    token: str | None = field(default=None, repr=False)
    # what the glasses play, and how
    media_root: Path | None = None  # speech and frames from here (None: media/)
    synthetic_frames: bool = False
    scenes: object = None  # the scenario's `SceneSpec`: pictographs where no recording exists (None: none)
    live_frames: tuple[bytes, ...] | None = field(default=None, repr=False)  # a camera's frames instead of media
    impairment: object = None  # a `media_effects.impairment_profiles.Profile` (its seed set), or None
    staleness_ms: int | None = None  # Turn 2 speech starts this long after its first frame
    gap_ms: int = TURN_GAP_MS
    speed: float | None = None  # pacing (None: as fast as the server takes it)
    jitter_ms: float = 0.0  # a random extra delay per send
    drop_frames: float = 0.0  # the chance each frame is never sent
    keep_frames: bool = True  # the frames sent go out with each turn as thumbnails

    @property
    def backend(self) -> str:
        return self.hello.backend

    def asking(self, **changes) -> GlassesSettings:
        """These glasses with their hello changed (a sweep's frame policy, say)."""
        return dataclasses.replace(self, hello=dataclasses.replace(self.hello, **changes))

    def record(self) -> dict:
        """What a record keeps of these settings (`simulate`'s session log and the bench manifest's
        `glasses`): what changes what the server hears and answers. Never the server's address or
        token; per-cell settings (a scenario's scenes, a sweep's gap, policy or profile) are the
        cell's, so a run's settings leave them unset."""
        hello = self.hello
        return {
            "silence_ms": hello.silence_ms,
            "gap_ms": self.gap_ms,
            "max_tokens": hello.max_tokens,
            "temperature": hello.temperature,
            "end_of_turn": hello.end_of_turn,
            "describer": hello.describer,
            "frame_policy": hello.frame_policy.name if hello.frame_policy else None,
            "frame_size": hello.frame_size,
            "frame_quality": hello.frame_quality,
            "output": hello.output,
            "speed": self.speed,
            "jitter_ms": self.jitter_ms,
            "drop_frames": self.drop_frames,
            "synthetic_frames": self.synthetic_frames,
            "live_frames": self.live_frames is not None,
            "staleness_ms": self.staleness_ms,
            "impairment": getattr(self.impairment, "name", None),
        }
