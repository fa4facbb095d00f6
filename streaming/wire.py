"""Wire protocol v1: the only codec between the glasses and the server.

Binary messages carry media: one kind byte, an unsigned 64-bit big-endian
timestamp in milliseconds, then the payload (PCM16 mono 16 kHz audio, or one
JPEG frame). Text messages are JSON objects with a `type`: the client's
are plain dicts, the server's are typed events (one dataclass per type,
`encode_event` / `decode_event`). See
docs/protocol.md for the full list, the limits and the close codes.
"""

from __future__ import annotations

import dataclasses
import json
import struct
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar, Union

from benchmark.records import RecordError, TurnInput

PROTOCOL_VERSION = 1
KIND_AUDIO = 0x01
KIND_FRAME = 0x02
HEADER = struct.Struct(">BQ")

# limits (docs/protocol.md)
MAX_MESSAGE_BYTES = 1_000_000
MAX_FRAME_BYTES = 500_000
MAX_FRAMES_PER_S = 60
MAX_AUDIO_BYTES_PER_S = 32_000 * 20  # 20x real time, room for --fast replays
MAX_VIOLATIONS = 3

# close codes
CLOSE_NORMAL = 1000
CLOSE_UNAUTHENTICATED = 4001
CLOSE_BAD_HELLO = 4002
CLOSE_LIMITS = 4008
CLOSE_BACKEND_ERROR = 1011  # the assistant backend failed mid-turn (an `error` event says why)

CLIENT_TYPES = ("hello", "turn.end", "session.end")


class WireError(ValueError):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Media:
    kind: int  # KIND_AUDIO or KIND_FRAME
    t_ms: int
    payload: bytes


@dataclass(frozen=True)
class SessionConfig:
    backend: str = "local"  # a Candidate model id, as in `wearsim bench --model`
    system_prompt: str = ""
    describer: str = "opencv"
    silence_ms: int = 600
    partials: bool = False
    frame_selection: str = "end"
    camera: bool = True  # false: no camera blocks at all (the camera ablation)
    # declared fallbacks: authored camera text per turn ("1", "2") and for the context
    fallback_camera: dict = field(default_factory=dict)
    fallback_context: str | None = None
    max_tokens: int = 300
    temperature: float = 0.0

    @classmethod
    def from_dict(cls, data: dict) -> "SessionConfig":
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise WireError("bad_hello", f"unknown session config field(s): {', '.join(unknown)}")
        try:
            config = cls(**data)
        except TypeError as exc:
            raise WireError("bad_hello", f"bad session config: {exc}") from None
        if not isinstance(config.silence_ms, int) or not 100 <= config.silence_ms <= 10_000:
            raise WireError("bad_hello", "silence_ms must be an integer from 100 to 10000")
        if config.frame_selection not in ("end", "sharpest"):
            raise WireError("bad_hello", "frame_selection must be 'end' or 'sharpest'")
        return config

    def to_dict(self) -> dict:
        return asdict(self)


def encode_media(kind: int, t_ms: int, payload: bytes) -> bytes:
    if kind not in (KIND_AUDIO, KIND_FRAME):
        raise WireError("bad_media", f"unknown media kind {kind}")
    return HEADER.pack(kind, t_ms) + payload


def decode_media(data: bytes) -> Media:
    if len(data) > MAX_MESSAGE_BYTES:
        raise WireError("too_large", f"message of {len(data)} bytes is over {MAX_MESSAGE_BYTES}")
    if len(data) <= HEADER.size:
        raise WireError("bad_media", "binary message shorter than its 9-byte header")
    kind, t_ms = HEADER.unpack_from(data)
    payload = data[HEADER.size:]
    if kind == KIND_AUDIO:
        if len(payload) % 2:
            raise WireError("bad_media", "audio payload must be whole PCM16 samples")
    elif kind == KIND_FRAME:
        if len(payload) > MAX_FRAME_BYTES:
            raise WireError("frame_too_large", f"frame of {len(payload)} bytes is over {MAX_FRAME_BYTES}")
        if not payload.startswith(b"\xff\xd8"):
            raise WireError("bad_media", "frame payload is not a JPEG")
    else:
        raise WireError("bad_media", f"unknown media kind {kind}")
    return Media(kind, t_ms, payload)


def encode_message(message_type: str, **values: Any) -> str:
    """A client message (hello, turn.end, session.end); server events use `encode_event`."""
    if message_type not in CLIENT_TYPES:
        raise WireError("bad_message", f"unknown client message type {message_type!r}")
    return json.dumps({"type": message_type, **values}, ensure_ascii=False)


def _json_object(text: str) -> dict:
    if len(text.encode("utf-8")) > MAX_MESSAGE_BYTES:
        raise WireError("too_large", f"message is over {MAX_MESSAGE_BYTES} bytes")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise WireError("bad_json", f"message is not JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise WireError("bad_message", "a text message must be a JSON object with a string 'type'")
    return data


def decode_message(text: str, *, allowed: tuple[str, ...] = CLIENT_TYPES) -> dict:
    data = _json_object(text)
    if data["type"] not in allowed:
        raise WireError("bad_message", f"unexpected message type {data['type']!r}")
    return data


# ---------------------------------------------------------------- server events
# One frozen dataclass per event type; `type` is its name on the wire.

@dataclass(frozen=True)
class Ready:
    type: ClassVar[str] = "ready"
    protocol: int
    backend: str


@dataclass(frozen=True)
class SpeechStarted:
    type: ClassVar[str] = "speech.started"
    t_ms: int


@dataclass(frozen=True)
class TranscriptPartial:
    type: ClassVar[str] = "transcript.partial"
    text: str
    t_ms: int


@dataclass(frozen=True)
class TranscriptFinal:
    type: ClassVar[str] = "transcript.final"
    turn: int
    text: str
    start_ms: int
    end_ms: int


@dataclass(frozen=True)
class CameraBlock:
    type: ClassVar[str] = "camera.block"
    turn: int
    text: str | None
    source: str | None  # "perceived", "authored" or None
    context: str | None = None
    context_source: str | None = None


@dataclass(frozen=True)
class TurnInputEvent:
    """The turn's input as the assistant got it; on the wire it also carries the
    two message strings built from it, so a client needs no builder of its own."""

    type: ClassVar[str] = "turn.input"
    turn: int
    input: TurnInput


@dataclass(frozen=True)
class AssistantDelta:
    type: ClassVar[str] = "assistant.delta"
    turn: int
    text: str


@dataclass(frozen=True)
class AssistantDone:
    type: ClassVar[str] = "assistant.done"
    turn: int
    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    heard: str | None = None  # a realtime API's own transcript of the user's speech


@dataclass(frozen=True)
class Metrics:
    type: ClassVar[str] = "metrics"
    turn: int
    latency_s: dict  # seconds from the end of speech: see docs/protocol.md


@dataclass(frozen=True)
class Error:
    type: ClassVar[str] = "error"
    code: str
    message: str


ServerEvent = Union[Ready, SpeechStarted, TranscriptPartial, TranscriptFinal, CameraBlock, TurnInputEvent,
                    AssistantDelta, AssistantDone, Metrics, Error]
EVENT_TYPES: dict[str, type] = {cls.type: cls for cls in ServerEvent.__args__}
SERVER_TYPES = tuple(EVENT_TYPES)


def encode_event(event: ServerEvent) -> str:
    if type(event) not in EVENT_TYPES.values():
        raise WireError("bad_message", f"not a server event: {event!r}")
    data: dict[str, Any] = {"type": event.type}
    for f in fields(event):
        data[f.name] = getattr(event, f.name)
    if isinstance(event, TurnInputEvent):
        data["input"] = event.input.to_json()
        data["user_message"] = event.input.user_message
        data["context_message"] = event.input.context_message
    elif isinstance(event, AssistantDone):
        data["usage"] = {"input_tokens": data.pop("input_tokens"), "output_tokens": data.pop("output_tokens")}
    return json.dumps(data, ensure_ascii=False)


def decode_event(text: str) -> ServerEvent:
    """One server event; an unknown type, a missing field or an unknown field is a `WireError`."""
    data = _json_object(text)
    kind = data.pop("type")
    cls = EVENT_TYPES.get(kind)
    if cls is None:
        raise WireError("bad_message", f"unknown server event type {kind!r}")
    if cls is TurnInputEvent:
        data.pop("user_message", None), data.pop("context_message", None)
        try:
            data["input"] = TurnInput.from_json(data.get("input"), "turn.input event")
        except RecordError as exc:
            raise WireError("bad_message", str(exc)) from None
    elif cls is AssistantDone:
        usage = data.pop("usage", None) or {}
        data.update(input_tokens=usage.get("input_tokens", 0), output_tokens=usage.get("output_tokens", 0))
    names = {f.name for f in fields(cls)}
    required = {f.name for f in fields(cls) if f.default is dataclasses.MISSING}
    unknown, missing = sorted(set(data) - names), sorted(required - set(data))
    if unknown or missing:
        raise WireError("bad_message", f"{cls.type} event: unknown field(s) {unknown}, missing field(s) {missing}")
    return cls(**data)


def hello(token: str | None, config: SessionConfig) -> str:
    return encode_message("hello", protocol=PROTOCOL_VERSION, token=token, config=config.to_dict())


def parse_hello(text: str) -> tuple[str | None, SessionConfig]:
    data = decode_message(text, allowed=("hello",))
    if data.get("protocol") != PROTOCOL_VERSION:
        raise WireError("bad_hello", f"protocol version {data.get('protocol')!r} is not supported "
                                     f"(this server speaks {PROTOCOL_VERSION})")
    config = data.get("config") or {}
    if not isinstance(config, dict):
        raise WireError("bad_hello", "'config' must be an object")
    return data.get("token"), SessionConfig.from_dict(config)
