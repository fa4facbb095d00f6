"""Wire protocol v1: the only codec between the glasses and the server.

Binary messages carry media: one kind byte, an unsigned 64-bit big-endian
timestamp in milliseconds, then the payload (PCM16 mono 16 kHz audio, or one
JPEG frame). Text messages are JSON objects with a `type`: the client's
are read here as dicts (and typed, one dataclass per type, in
`streaming.client_messages` on top of these readers), the server's are typed events (one dataclass per type, in
`streaming.server_events`; every package takes them from here, with
`encode_event` / `decode_event`). See docs/protocol.md for the full list,
the limits and the close codes.
"""

from __future__ import annotations

import dataclasses
import json
import math
import struct
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from candidates.model_ids import OUTPUTS
from candidates.providers import bundled_model_id
from core.candidate import DEFAULT_MAX_TOKENS, USAGE_FIELDS, TranscriptionUsage, Usage, UsageError
from core.records import FrameFacts, RecordError, TurnEnd, TurnInput, TurnMetrics
from perception.describer_spec import DEFAULT_DESCRIBER
from perception.frame_policy import FramePolicy, parse_frame_policy
from perception.speech import SILENCE_MS
from streaming.server_events import (  # noqa: F401 (the events, taken from here)
    EVENT_TYPES,
    SERVER_TYPES,
    AssistantAudio,
    AssistantDelta,
    AssistantDone,
    CameraBlock,
    Error,
    Metrics,
    ProbeDone,
    ProbePaced,
    Ready,
    RemarkAudio,
    RemarkDelta,
    ServerEvent,
    SpeechStarted,
    TranscriptFinal,
    TranscriptPartial,
    TurnInputEvent,
    WatchDone,
)

PROTOCOL_VERSION = 1
KIND_AUDIO = 0x01
KIND_FRAME = 0x02
HEADER = struct.Struct(">BQ")

# limits (docs/protocol.md)
MAX_MESSAGE_BYTES = 1_000_000  # larger messages get `too_large` (a violation)
MAX_WIRE_BYTES = 8_000_000  # the WebSocket layer's own cap: larger messages are closed 1009 with no event
MAX_FRAME_BYTES = 500_000
MAX_FRAMES_PER_S = 60  # measured at arrival; bursts of up to MAX_FRAMES_PER_S more
MAX_AUDIO_BYTES_PER_S = 32_000 * 20  # 20x real time, measured at arrival
AUDIO_BURST_S = 2.0  # the audio rate's allowance for bunched arrivals: 2 s at the limit
MAX_PENDING_AUDIO_BYTES = 8_000_000  # unprocessed audio per session before the server stops reading
MAX_VIOLATIONS = 3
HELLO_TIMEOUT_S = 30.0
MAX_TEXT_CHARS = 20_000  # system_prompt and each fallback camera text
MAX_MODEL_ID_CHARS = 200
MAX_NESTING = 32  # JSON depth of a client message

# close codes
CLOSE_NORMAL = 1000
CLOSE_BACKEND_ERROR = 1011  # the assistant backend failed mid-turn (an `error` event says why)
CLOSE_BUSY = 1013  # `server_busy`: the server holds its maximum of sessions; try again later
CLOSE_UNAUTHENTICATED = 4001
CLOSE_BAD_HELLO = 4002  # also `backend_not_allowed` and `backend_unavailable`
CLOSE_LIMITS = 4008
CLOSE_IDLE = 4010  # `idle_timeout`: nothing from the client, and nothing in flight, for the idle timeout

CLIENT_TYPES = ("hello", "turn.end", "reply.cut", "watch.end", "session.end")


class WireError(ValueError):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, kw_only=True)
class Media:
    kind: int  # KIND_AUDIO or KIND_FRAME
    t_ms: int
    payload: bytes


END_OF_TURN = ("model", "silence", "text")


@dataclass(frozen=True, kw_only=True)
class SessionConfig:
    """A session's hello: what the glasses (or the page) ask of the server, every default stated here once.
    `simulator.settings.GlassesSettings` holds one for every session it opens."""

    backend: str = field(default_factory=bundled_model_id)  # a Candidate model id, as in `wearsim bench --model`
    system_prompt: str = ""
    describer: str = DEFAULT_DESCRIBER
    silence_ms: int = SILENCE_MS  # the fixed silence that ends a turn (the fallback under `end_of_turn` "model")
    # "silence": only the fixed silence (and `turn.end`) ends a turn; "model": after a short silence the
    # end-of-turn model (perception.turn_end) may end it sooner; "text": the early transcript's words may
    # (perception.turn_text). Neither is the default: on the bank's lines spoken with pauses each ended far
    # more turns early than the fixed silence (docs/performance.md, "Answer sooner")
    end_of_turn: str = "silence"
    partials: bool = False
    frame_selection: str = "end"
    camera: bool = True  # false: no camera blocks at all (the camera ablation)
    # declared fallbacks: authored camera text per turn ("1", "2") and for the context
    fallback_camera: dict = field(default_factory=dict)
    fallback_context: str | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = 0.0
    output: str = "text"  # "audio": spoken replies (realtime backends only), sent as `assistant.audio`
    barge_in: bool = False  # speech that starts during a reply interrupts it (a live user, not a script)
    frame_policy: FramePolicy | None = None  # which frames reach the assistant; None: the server's
    frame_size: int = 0  # longer side of a sent frame in pixels; 0: as captured
    frame_quality: int = 0  # JPEG quality of a sent frame, 1-100; 0: as captured
    # a shipped impairment profile whose video impairments the server applies to the frames it gets
    # (the live page's demo of a dim room or a shaky head on a laptop camera); None: none
    camera_conditions: str | None = None
    # a proactive session: when the assistant is asked, unprompted, whether something needs saying
    # (`change`, `every:N`, `native`: streaming.proactive); None: only when the user speaks
    proactive: str | None = None

    @classmethod
    def from_dict(cls, data: dict) -> SessionConfig:
        """A checked config: every field of its type and range, else `WireError` `bad_hello`."""
        if not isinstance(data, dict):
            raise WireError("bad_hello", "'config' must be an object")
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise WireError("bad_hello", f"unknown session config field(s): {', '.join(map(str, unknown))[:200]}")
        values = dict(data)
        if "backend" in values:
            values["backend"] = _text(values["backend"], "backend", MAX_MODEL_ID_CHARS).strip()
            if not values["backend"]:
                raise WireError("bad_hello", "backend must name a model id")
        if "describer" in values:
            values["describer"] = _text(values["describer"], "describer", MAX_MODEL_ID_CHARS).strip()
        if "system_prompt" in values:
            _text(values["system_prompt"], "system_prompt", MAX_TEXT_CHARS)
        for name in ("partials", "camera", "barge_in"):
            if name in values and not isinstance(values[name], bool):
                raise WireError("bad_hello", f"{name} must be true or false")
        if "silence_ms" in values:
            _integer(values["silence_ms"], "silence_ms", 100, 10_000)
        if values.get("end_of_turn", "silence") not in END_OF_TURN:
            raise WireError("bad_hello", f"end_of_turn must be one of {', '.join(END_OF_TURN)}")
        if "max_tokens" in values:
            _integer(values["max_tokens"], "max_tokens", 1, 32_768)
        if "temperature" in values:
            temperature = values["temperature"]
            if (
                isinstance(temperature, bool)
                or not isinstance(temperature, (int, float))
                or not math.isfinite(temperature)
                or not 0 <= temperature <= 2
            ):
                raise WireError("bad_hello", "temperature must be a number from 0 to 2")
        if values.get("output", "text") not in OUTPUTS:
            raise WireError("bad_hello", f"output must be one of {', '.join(OUTPUTS)}")
        if values.get("frame_policy") is not None:
            try:
                values["frame_policy"] = parse_frame_policy(_text(values["frame_policy"], "frame_policy", 100))
            except ValueError as exc:
                raise WireError("bad_hello", str(exc)) from None
        if "frame_size" in values:
            _integer(values["frame_size"], "frame_size", 0, 4096)
        if "frame_quality" in values:
            _integer(values["frame_quality"], "frame_quality", 0, 100)
        if values.get("camera_conditions") is not None:  # the server checks the name (streaming.app)
            _text(values["camera_conditions"], "camera_conditions", 40)
        if values.get("proactive") is not None:
            from streaming.proactive import parse_strategy

            try:
                values["proactive"] = parse_strategy(_text(values["proactive"], "proactive", 40)).name
            except ValueError as exc:
                raise WireError("bad_hello", str(exc)) from None
        if values.get("frame_selection", "end") not in ("end", "sharpest"):
            raise WireError("bad_hello", "frame_selection must be 'end' or 'sharpest'")
        fallback = values.get("fallback_camera", {})
        if not isinstance(fallback, dict) or not all(
            key in ("1", "2") and isinstance(text, str) and len(text) <= MAX_TEXT_CHARS
            for key, text in fallback.items()
        ):
            raise WireError(
                "bad_hello",
                'fallback_camera must be an object like {"1": "text", "2": "text"} '
                f"(strings of at most {MAX_TEXT_CHARS} characters)",
            )
        if values.get("fallback_context") is not None:
            _text(values["fallback_context"], "fallback_context", MAX_TEXT_CHARS)
        return cls(**values)

    def to_dict(self) -> dict:
        """The hello's `config` as it crosses the wire (the frame policy in its text form)."""
        return {**asdict(self), "frame_policy": self.frame_policy.name if self.frame_policy else None}


def _text(value: Any, name: str, limit: int) -> str:
    if not isinstance(value, str):
        raise WireError("bad_hello", f"{name} must be a string")
    if len(value) > limit:
        raise WireError("bad_hello", f"{name} is longer than {limit} characters")
    return value


def _integer(value: Any, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise WireError("bad_hello", f"{name} must be an integer from {low} to {high}")
    return value


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
    payload = data[HEADER.size :]
    if kind == KIND_AUDIO:
        if len(payload) % 2:
            raise WireError("bad_media", "audio payload must be whole PCM16 samples")
    elif kind == KIND_FRAME:
        if len(payload) > MAX_FRAME_BYTES:
            raise WireError("frame_too_large", f"frame of {len(payload)} bytes is over {MAX_FRAME_BYTES}")
        if not payload.startswith(b"\xff\xd8"):
            raise WireError("bad_media", "frame payload is not a JPEG")
        from media_effects.frames import pixel_refusal  # the size from the JPEG header, nothing decoded

        refusal = pixel_refusal(payload)
        if refusal:
            raise WireError("frame_too_large", refusal)
    else:
        raise WireError("bad_media", f"unknown media kind {kind}")
    return Media(kind=kind, t_ms=t_ms, payload=payload)


def encode_message(message_type: str, **values: Any) -> str:
    """A client message (hello, turn.end, reply.cut, session.end); server events use `encode_event`."""
    if message_type not in CLIENT_TYPES:
        raise WireError("bad_message", f"unknown client message type {message_type!r}")
    return json.dumps({"type": message_type, **values}, ensure_ascii=False)


def _depth(value: Any) -> int:
    """Nesting depth of parsed JSON, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _json_object(text: str | bytes) -> dict:  # a binary message is refused here
    if not isinstance(text, str):
        raise WireError("bad_message", "a text message must be a string")
    if len(text) > MAX_MESSAGE_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_MESSAGE_BYTES:
        raise WireError("too_large", f"message is over {MAX_MESSAGE_BYTES} bytes")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise WireError("bad_json", f"message is not JSON: {exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise WireError("bad_json", f"message nests deeper than {MAX_NESTING} levels") from None
    except ValueError:  # e.g. an integer longer than Python converts (4300 digits)
        raise WireError("bad_json", "message holds a number too long to read") from None
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise WireError("bad_message", "a text message must be a JSON object with a string 'type'")
    if _depth(data) > MAX_NESTING:
        raise WireError("bad_json", f"message nests deeper than {MAX_NESTING} levels")
    return data


def decode_message(text: str, *, allowed: tuple[str, ...] = CLIENT_TYPES) -> dict:
    data = _json_object(text)
    if data["type"] not in allowed:
        raise WireError("bad_message", f"unexpected message type {data['type']!r}")
    return data


def read_reply_cut(data: dict) -> tuple[int, int]:
    """A `reply.cut` message's (turn, played_ms): the user heard only the first
    `played_ms` of that turn's spoken reply before the client stopped playing it."""
    turn, played_ms = data.get("turn"), data.get("played_ms")
    if isinstance(turn, bool) or not isinstance(turn, int) or turn < 1:
        raise WireError("bad_message", "reply.cut: 'turn' must be a turn number (an integer from 1)")
    if isinstance(played_ms, bool) or not isinstance(played_ms, int) or played_ms < 0:
        raise WireError("bad_message", "reply.cut: 'played_ms' must be a whole number of milliseconds, 0 or more")
    return turn, played_ms


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
    elif isinstance(event, Metrics):
        for name in TURN_FACTS:
            data[name] = getattr(event, name).to_json()
    elif isinstance(event, ProbeDone):
        data["usage"] = event.usage.to_json() if event.usage.reported else None  # unknown, never 0
    elif isinstance(event, AssistantDone):
        data["usage"] = event.usage.to_json() if event.usage.reported else None  # unknown, never 0
        if event.transcription is not None:
            data["transcription"] = event.transcription.to_json()
        if not event.interrupted:  # a client that never asked for barge-in sees the event it always had
            del data["interrupted"]
        for optional in ("session_lost", "incomplete", "transcription"):
            if data[optional] is None:
                del data[optional]
    return json.dumps(data, ensure_ascii=False)


def decode_event(text: str | bytes) -> ServerEvent:
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
    if cls is Metrics:
        for name, facts in TURN_FACTS.items():
            if name in data:
                if not isinstance(data[name], dict):
                    raise WireError("bad_message", f"metrics event: field '{name}' must be an object")
                try:
                    data[name] = facts.from_json(data[name], f"metrics event: {name}")
                except RecordError as exc:
                    raise WireError("bad_message", str(exc)) from None
    if cls in (AssistantDone, ProbeDone):
        usage = data.pop("usage", None) or {}
        if not isinstance(usage, dict):
            raise WireError("bad_message", f"{kind} event: 'usage' must be an object")
        unknown = sorted(str(k)[:40] for k in set(usage) - set(USAGE_FIELDS))
        if unknown:
            raise WireError("bad_message", f"{kind} event: unknown usage field(s) {unknown[:5]}")
        try:
            data["usage"] = Usage.from_json(usage)
        except UsageError as exc:
            raise WireError("bad_message", f"{kind} event: usage {exc}") from None
    if cls is AssistantDone:
        try:
            if data.get("transcription") is not None:
                data["transcription"] = TranscriptionUsage.from_json(data["transcription"])
        except UsageError as exc:
            raise WireError("bad_message", f"assistant.done event: transcription {exc}") from None
    names = {f.name for f in fields(cls)}
    required = {f.name for f in fields(cls) if f.default is dataclasses.MISSING}
    unknown, missing = sorted(set(data) - names), sorted(required - set(data))
    if unknown or missing:
        raise WireError("bad_message", f"{cls.type} event: unknown field(s) {unknown}, missing field(s) {missing}")
    for f in fields(cls):
        if f.name in data and not _of_type(data[f.name], str(f.type)):  # annotations are strings here
            raise WireError("bad_message", f"{cls.type} event: field '{f.name}' must be {f.type}")
    return cls(**data)


# a `metrics` event's turn facts: on the wire, each its record type's JSON form
TURN_FACTS: dict[str, Any] = {"latency_s": TurnMetrics, "frames": FrameFacts, "turn_end": TurnEnd}
_FIELD_TYPES = {
    "int": (int,),
    "float": (int, float),
    "str": (str,),
    "dict": (dict,),
    "bool": (bool,),
    "TurnInput": (TurnInput,),
    "Usage": (Usage,),
    "TranscriptionUsage": (TranscriptionUsage,),
    "TurnMetrics": (TurnMetrics,),
    "FrameFacts": (FrameFacts,),
    "TurnEnd": (TurnEnd,),
    "None": (type(None),),
}


def _of_type(value: Any, annotation: str) -> bool:
    """Whether a decoded value fits an event field's annotation (`int`, `str | None`, ...)."""
    allowed = tuple(t for part in annotation.split("|") for t in _FIELD_TYPES[part.strip()])
    return isinstance(value, allowed) and not (isinstance(value, bool) and bool not in allowed)


def hello(token: str | None, config: SessionConfig) -> str:
    return encode_message("hello", protocol=PROTOCOL_VERSION, token=token, config=config.to_dict())


def read_hello(text: str) -> tuple[str | None, dict]:
    """The hello's token and its config object, not yet checked (the server
    checks the token before it looks at the config)."""
    data = decode_message(text, allowed=("hello",))
    protocol = data.get("protocol")
    if type(protocol) is not int or protocol != PROTOCOL_VERSION:  # true is not 1
        shown = repr(protocol) if isinstance(protocol, (int, float, bool, type(None))) else type(protocol).__name__
        raise WireError(
            "bad_hello", f"protocol version {shown[:40]} is not supported (this server speaks {PROTOCOL_VERSION})"
        )
    token = data.get("token")
    if token is not None and not isinstance(token, str):
        raise WireError("bad_hello", "token must be a string or null")
    config = data.get("config")
    if config is None:
        config = {}
    if not isinstance(config, dict):
        raise WireError("bad_hello", "'config' must be an object")
    return token, config


def parse_hello(text: str) -> tuple[str | None, SessionConfig]:
    token, config = read_hello(text)
    return token, SessionConfig.from_dict(config)
