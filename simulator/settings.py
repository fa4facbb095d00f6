"""`GlassesSettings`: everything the simulated glasses do in one session, and the session's hello.

`wearsim simulate` and `wearsim bench --via stream` (its proactive trials too) build one of these
and play their turns through the same loop (`benchmark/conversations/stream.py`), so the two
share every default below. Each default is stated once, here (the reply cap in `core.candidate`,
the ground floor both the server and the glasses read it from).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from core.candidate import DEFAULT_MAX_TOKENS

# the silence after speech that ends a user's turn; the glasses always ask for it in their hello
# (a client that does not, such as the live page, gets the server's shorter `SessionConfig.silence_ms`)
SILENCE_MS = 1500
# the pause between one turn's reply and the next turn's first frame, on the stream clock
TURN_GAP_MS = 200
END_OF_TURN = "silence"  # "silence", "model" or "text" (streaming.wire.SessionConfig)
DESCRIBER = "opencv"


@dataclass(frozen=True, kw_only=True)
class GlassesSettings:
    """The server the glasses talk to, what each session's hello asks of it, and what they play."""

    # the server and the hello
    url: str | None = None  # ws://HOST:PORT (None: not known yet; the caller starts one and fills it in)
    backend: str  # the model id the server answers with
    token: str | None = field(default=None, repr=False)
    describer: str = DESCRIBER
    silence_ms: int = SILENCE_MS
    end_of_turn: str = END_OF_TURN
    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = 0.0
    frame_policy: str | None = None  # None: the server's default
    frame_size: int = 0  # longer side of a sent frame (0: as captured)
    frame_quality: int = 0  # JPEG quality of a sent frame (0: as captured)
    output: str = "text"  # "audio": spoken replies (a realtime backend), kept in the reply
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

    def hello_options(self) -> dict:
        """What every session's hello asks of the server (`streaming.wire.SessionConfig` fields); the
        caller adds the backend, the system prompt and what the scenario declares."""
        return {
            "describer": self.describer,
            "silence_ms": self.silence_ms,
            "end_of_turn": self.end_of_turn,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "output": self.output,
            "frame_policy": self.frame_policy,
            "frame_size": self.frame_size,
            "frame_quality": self.frame_quality,
        }

    def record(self) -> dict:
        """What a record keeps of these settings (`simulate`'s session log and the bench manifest's
        `glasses`): what changes what the server hears and answers. Never the server's address or
        token; per-cell settings (a scenario's scenes, a sweep's gap, policy or profile) are the
        cell's, so a run's settings leave them unset."""
        return {
            "silence_ms": self.silence_ms,
            "gap_ms": self.gap_ms,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "end_of_turn": self.end_of_turn,
            "describer": self.describer,
            "frame_policy": self.frame_policy,
            "frame_size": self.frame_size,
            "frame_quality": self.frame_quality,
            "output": self.output,
            "speed": self.speed,
            "jitter_ms": self.jitter_ms,
            "drop_frames": self.drop_frames,
            "synthetic_frames": self.synthetic_frames,
            "live_frames": self.live_frames is not None,
            "staleness_ms": self.staleness_ms,
            "impairment": getattr(self.impairment, "name", None),
        }
