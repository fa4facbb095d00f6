"""The server's events: one frozen dataclass per type, `type` its name on
the wire. `streaming.wire` encodes and decodes them (`encode_event`,
`decode_event`) and is where every other package takes them from; the
fields and their JSON are listed in docs/protocol.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, get_args

from core.candidate import TranscriptionUsage, Usage
from core.records import FrameFacts, TurnEnd, TurnInput, TurnMetrics


@dataclass(frozen=True, kw_only=True)
class Ready:
    type: ClassVar[str] = "ready"
    protocol: int
    backend: str


@dataclass(frozen=True, kw_only=True)
class SpeechStarted:
    type: ClassVar[str] = "speech.started"
    t_ms: int


@dataclass(frozen=True, kw_only=True)
class TranscriptPartial:
    type: ClassVar[str] = "transcript.partial"
    text: str
    t_ms: int


@dataclass(frozen=True, kw_only=True)
class TranscriptFinal:
    type: ClassVar[str] = "transcript.final"
    turn: int
    text: str
    start_ms: int
    end_ms: int


@dataclass(frozen=True, kw_only=True)
class CameraBlock:
    type: ClassVar[str] = "camera.block"
    turn: int
    text: str | None
    source: str | None  # "perceived", "authored", "media" or None
    context: str | None = None
    context_source: str | None = None


@dataclass(frozen=True, kw_only=True)
class TurnInputEvent:
    """The turn's input as the assistant got it; on the wire it also carries the
    two message strings built from it, so a client needs no builder of its own."""

    type: ClassVar[str] = "turn.input"
    turn: int
    input: TurnInput


@dataclass(frozen=True, kw_only=True)
class AssistantDelta:
    type: ClassVar[str] = "assistant.delta"
    turn: int
    text: str


@dataclass(frozen=True, kw_only=True)
class AssistantAudio:
    """A piece of a spoken reply, as it arrives: base64 PCM16 mono little-endian at `rate`."""

    type: ClassVar[str] = "assistant.audio"
    turn: int
    audio: str
    rate: int


@dataclass(frozen=True, kw_only=True)
class AssistantDone:
    type: ClassVar[str] = "assistant.done"
    turn: int
    text: str
    usage: Usage = Usage()  # the reply's tokens by modality, as the backend's API counted them
    heard: str | None = None  # a realtime API's own transcript of the user's speech
    interrupted: bool = False  # cut short by the user's speech (`barge_in`); sent only when true
    session_lost: str | None = None  # a realtime API's session mended meanwhile, and why; sent only when set
    incomplete: str | None = None  # the realtime API cut the reply short, and why; sent only when set
    transcription: TranscriptionUsage | None = None  # the speech transcribed, billed apart; sent only when set


@dataclass(frozen=True, kw_only=True)
class Metrics:
    """A turn's facts once its reply is done, each on the wire as its record type's JSON form
    (docs/protocol.md): the latencies, the frames offered and sent, which rule ended the turn."""

    type: ClassVar[str] = "metrics"
    turn: int
    latency_s: TurnMetrics  # seconds from the end of speech
    frames: FrameFacts = FrameFacts()  # the frames offered and sent this turn
    turn_end: TurnEnd = TurnEnd()  # which rule ended the turn; empty from a server before the end-of-turn model


@dataclass(frozen=True, kw_only=True)
class RemarkDelta:
    """A piece of a proactive remark's text (never the silence marker)."""

    type: ClassVar[str] = "remark.delta"
    probe: int
    text: str


@dataclass(frozen=True, kw_only=True)
class RemarkAudio:
    """A piece of a spoken proactive remark: base64 PCM16 mono little-endian at `rate`."""

    type: ClassVar[str] = "remark.audio"
    probe: int
    audio: str
    rate: int


@dataclass(frozen=True, kw_only=True)
class ProbeDone:
    """A probe answered: asked at stream time `asked_ms` with the newest frame sent then
    (`frame_ms`); `silent` when the answer was the silence marker (then nothing was sent)."""

    type: ClassVar[str] = "probe.done"
    probe: int
    asked_ms: int
    frame_ms: int | None
    text: str
    silent: bool
    first_s: float | None = None  # seconds from asking to the first text or audio
    done_s: float | None = None
    usage: Usage = Usage()
    incomplete: str | None = None
    session_lost: str | None = None
    camera: str | None = None  # the camera text the probe was given (a chat backend's description); None: pixels


@dataclass(frozen=True, kw_only=True)
class ProbePaced:
    """Sent once per session: a probe its strategy made due at stream time `asked_ms` was skipped, because
    the server starts one session's probes at least `gap_s` of wall time apart (`min_gap_s`, or the
    session's share of `rate` probes a second over the server's `sessions` proactive sessions) and never
    queues them; later ones are skipped too, and counted in `watch.done`."""

    type: ClassVar[str] = "probe.paced"
    asked_ms: int
    gap_s: float
    min_gap_s: float
    rate: float
    sessions: int


@dataclass(frozen=True, kw_only=True)
class WatchDone:
    """The answer to `watch.end`: every frame and probe before it is handled."""

    type: ClassVar[str] = "watch.done"
    probes: int
    frames: dict = field(default_factory=dict)  # {"sent_ms": [...]}: every frame the policy sent
    skipped: int = 0  # probes due that the server's pace skipped (`probe.paced`)


@dataclass(frozen=True, kw_only=True)
class Error:
    type: ClassVar[str] = "error"
    code: str
    message: str


ServerEvent = (
    Ready
    | SpeechStarted
    | TranscriptPartial
    | TranscriptFinal
    | CameraBlock
    | TurnInputEvent
    | AssistantDelta
    | AssistantAudio
    | AssistantDone
    | Metrics
    | RemarkDelta
    | RemarkAudio
    | ProbeDone
    | ProbePaced
    | WatchDone
    | Error
)
EVENT_TYPES: dict[str, Any] = {cls.type: cls for cls in get_args(ServerEvent)}  # the type -> its class
SERVER_TYPES = tuple(EVENT_TYPES)
