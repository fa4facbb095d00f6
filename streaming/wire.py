"""Wire protocol v1: the only codec between the glasses and the server.

Binary messages carry media: one kind byte, an unsigned 64-bit big-endian
timestamp in milliseconds, then the payload (PCM16 mono 16 kHz audio, or one
JPEG frame). Text messages are JSON objects with a `type`. See
docs/protocol.md for the full list, the limits and the close codes.
"""

from __future__ import annotations

import json
import struct
from dataclasses import asdict, dataclass, field
from typing import Any

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

CLIENT_TYPES = ("hello", "turn.end", "session.end")
SERVER_TYPES = ("ready", "speech.started", "transcript.partial", "transcript.final", "camera.block", "turn.input",
                "assistant.delta", "assistant.done", "metrics", "error")


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


def encode_message(message_type: str, **fields: Any) -> str:
    if message_type not in CLIENT_TYPES + SERVER_TYPES:
        raise WireError("bad_message", f"unknown message type {message_type!r}")
    return json.dumps({"type": message_type, **fields}, ensure_ascii=False)


def decode_message(text: str, *, allowed: tuple[str, ...] = CLIENT_TYPES) -> dict:
    if len(text.encode("utf-8")) > MAX_MESSAGE_BYTES:
        raise WireError("too_large", f"message is over {MAX_MESSAGE_BYTES} bytes")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise WireError("bad_json", f"message is not JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise WireError("bad_message", "a text message must be a JSON object with a string 'type'")
    if data["type"] not in allowed:
        raise WireError("bad_message", f"unexpected message type {data['type']!r}")
    return data


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
