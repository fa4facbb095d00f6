"""The `Candidate` seam: one async method that answers a conversation.

Messages are one type with a role literal; each adapter converts them to its
provider's format in one place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, cast, runtime_checkable

REPLY_AUDIO_RATE = 24000  # spoken replies of both realtime APIs: PCM16 mono 24 kHz


@dataclass(frozen=True, kw_only=True)
class Image:
    """An image sent as content (vision judges, realtime adapters)."""

    data: bytes
    mime_type: str = "image/jpeg"
    name: str = ""


@dataclass(frozen=True, kw_only=True)
class Message:
    role: Literal["user", "assistant"]
    text: str
    images: tuple[Image, ...] = ()


# a reply's token counts beyond the two totals, split by modality; cached input is a subset of the input
USAGE_DETAILS = (
    "input_text_tokens",
    "input_audio_tokens",
    "input_image_tokens",
    "cached_input_tokens",
    "cached_text_tokens",
    "cached_audio_tokens",
    "cached_image_tokens",
    "output_text_tokens",
    "output_audio_tokens",
)
USAGE_FIELDS = ("input_tokens", "output_tokens", *USAGE_DETAILS)
MAX_TOKENS_COUNTED = 10**12  # a count above this in a record or on the wire is not a count


@dataclass(frozen=True, kw_only=True)
class Usage:
    """The tokens of one reply as the provider counted them.

    `input_tokens` and `output_tokens` are the totals. The rest split them by
    modality, each None where the provider did not say (unknown, never 0):
    `input_*_tokens` count cached tokens too (the cached ones are a subset of
    the input: `cached_*_tokens`), `output_*_tokens` split the output.
    `completed()` fills a part the others determine (one part left unknown of
    a known total is the rest of it)."""

    input_tokens: int = 0
    output_tokens: int = 0
    input_text_tokens: int | None = None
    input_audio_tokens: int | None = None
    input_image_tokens: int | None = None
    cached_input_tokens: int | None = None
    cached_text_tokens: int | None = None
    cached_audio_tokens: int | None = None
    cached_image_tokens: int | None = None
    output_text_tokens: int | None = None
    output_audio_tokens: int | None = None

    @property
    def reported(self) -> bool:
        """The provider reported usage at all (every real reply has some input)."""
        return bool(self.input_tokens or self.output_tokens)

    def __add__(self, other: Usage) -> Usage:
        """Two replies' usage together; a part unknown in either is unknown in the sum."""

        def plus(a, b):
            return None if a is None or b is None else a + b

        return Usage(**{name: plus(getattr(self, name), getattr(other, name)) for name in USAGE_FIELDS})

    def completed(self) -> Usage:
        """This usage with every part the others determine filled in: with one part of
        a known total unknown, it is the rest; no input of a kind means none of it
        cached; no cached input means none of any kind. Unreported usage stays as it is."""
        if not self.reported:
            return self
        values = {name: getattr(self, name) for name in USAGE_FIELDS}
        kinds = ("text", "audio", "image")
        if values["cached_input_tokens"] == 0 or values["input_tokens"] == 0:  # nothing cached
            values.update({f"cached_{k}_tokens": 0 for k in kinds}, cached_input_tokens=0)
        for kind in kinds:
            if values[f"input_{kind}_tokens"] == 0:
                values[f"cached_{kind}_tokens"] = 0
        for total, parts in (
            ("input_tokens", [f"input_{k}_tokens" for k in kinds]),
            ("cached_input_tokens", [f"cached_{k}_tokens" for k in kinds]),
            ("output_tokens", ["output_text_tokens", "output_audio_tokens"]),
        ):
            _fill_rest(values, total, parts)
        return Usage(**values)

    def to_json(self) -> dict:
        return {name: getattr(self, name) for name in USAGE_FIELDS}

    @classmethod
    def from_json(cls, data) -> Usage:
        """Read the JSON form (`to_json`'s keys; details left out are unknown). Raises
        `UsageError` naming each field that is not a whole number of tokens."""
        if not isinstance(data, dict):
            raise UsageError([f"'usage' must be an object, got {type(data).__name__}"])
        values, problems = {}, []
        for name in USAGE_FIELDS:
            value = data.get(name)
            if value is None:
                values[name] = 0 if name in ("input_tokens", "output_tokens") else None
            elif isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS_COUNTED:
                kind = "a whole number of tokens" + ("" if name in ("input_tokens", "output_tokens") else " or null")
                problems.append(f"field '{name}' must be {kind}, got {value!r}"[:200])
            else:
                values[name] = value
        if problems:
            raise UsageError(problems)
        return cls(**cast(dict[str, Any], values))  # checked above: the totals are ints


def _fill_rest(values: dict, total: str, parts: list[str]) -> None:
    unknown = [p for p in parts if values[p] is None]
    if values[total] is None:
        if not unknown:
            values[total] = sum(values[p] for p in parts)
        return
    rest = values[total] - sum(values[p] for p in parts if values[p] is not None)
    if len(unknown) == 1 and rest >= 0:
        values[unknown[0]] = rest
    elif unknown and rest == 0:
        values.update({p: 0 for p in unknown})


class UsageError(ValueError):
    """A usage object with fields that are not token counts; `problems` names each."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


TRANSCRIPTION_FIELDS = (
    "model",
    "input_tokens",
    "output_tokens",
    "input_audio_tokens",
    "input_text_tokens",
    "seconds",
    "reported",
)
MAX_SECONDS_COUNTED = 10**9  # a transcription longer than this in a record or on the wire is not one


@dataclass(frozen=True, kw_only=True)
class TranscriptionUsage:
    """The user's speech as a realtime API transcribed it apart from the reply, and billed it
    apart (OpenAI Realtime's input transcription): tokens for the gpt-4o transcribe models,
    seconds of audio for whisper-1, as the transcription event's `usage` said.

    `model` is the transcription model's id in the price table's form
    (`openai:gpt-4o-mini-transcribe`). `input_audio_tokens` and `input_text_tokens` split
    `input_tokens` (None: the API did not say); the output is text. `reported` is False when
    a transcription was asked for but its usage never came (it failed, or came too late): its
    cost is unknown. `+` adds a turn's transcriptions (one per session that heard the audio)."""

    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    input_audio_tokens: int | None = 0
    input_text_tokens: int | None = 0
    seconds: float = 0.0
    reported: bool = True

    def __add__(self, other: TranscriptionUsage) -> TranscriptionUsage:
        def plus(a, b):
            return None if a is None or b is None else a + b

        return TranscriptionUsage(
            model=self.model if self.model == other.model else f"{self.model}+{other.model}",
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            input_audio_tokens=plus(self.input_audio_tokens, other.input_audio_tokens),
            input_text_tokens=plus(self.input_text_tokens, other.input_text_tokens),
            seconds=round(self.seconds + other.seconds, 6),
            reported=self.reported and other.reported,
        )

    def to_json(self) -> dict:
        return {name: getattr(self, name) for name in TRANSCRIPTION_FIELDS}

    @classmethod
    def from_json(cls, data) -> TranscriptionUsage:
        """Read the JSON form (`to_json`'s keys). Raises `UsageError` naming each field that is wrong."""
        if not isinstance(data, dict):
            raise UsageError([f"'transcription' must be an object, got {type(data).__name__}"])
        problems = [f"unknown field '{str(name)[:40]}'" for name in data if name not in TRANSCRIPTION_FIELDS][:5]
        model = data.get("model")
        if not isinstance(model, str) or not model.strip() or len(model) > 300:
            problems.append("field 'model' must be the transcription model's id")
        values: dict[str, int | None] = {}
        for name in ("input_tokens", "output_tokens", "input_audio_tokens", "input_text_tokens"):
            value = data.get(name, 0)
            if value is None and name in ("input_audio_tokens", "input_text_tokens"):
                values[name] = None
            elif isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS_COUNTED:
                problems.append(f"field '{name}' must be a whole number of tokens, got {value!r}"[:200])
            else:
                values[name] = value
        seconds = data.get("seconds", 0.0)
        if (
            isinstance(seconds, bool)
            or not isinstance(seconds, (int, float))
            or not 0 <= seconds <= MAX_SECONDS_COUNTED
        ):
            problems.append(f"field 'seconds' must be a number of seconds, 0 or more, got {seconds!r}"[:200])
        if not isinstance(data.get("reported", True), bool):
            problems.append("field 'reported' must be true or false")
        if problems:
            raise UsageError(problems)
        return cls(
            model=cast(str, model).strip(),
            **cast(dict[str, Any], values),
            seconds=float(seconds),
            reported=data.get("reported", True),
        )


@dataclass(frozen=True, kw_only=True)
class Reply:
    text: str
    model: str
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    first_token_s: float | None = None
    first_audio_s: float | None = None  # spoken replies (realtime APIs): first audio byte
    heard: str | None = None  # a realtime API's own transcript of the user's speech
    audio: bytes = field(default=b"", repr=False)  # a spoken reply: PCM16 mono at REPLY_AUDIO_RATE
    audio_file: str | None = None  # where the run saved `audio` (a WAV, relative to the run dir)
    first_voice_s: float | None = None  # first audible speech of the saved audio (voice to voice)
    cached: bool = False  # served from the response cache, not asked of the model
    interrupted: bool = False  # cut short by the user's speech (a live session's barge-in)
    session_lost: str | None = None  # a live API's session mended during the turn (replaced, or asked again): why
    incomplete: str | None = None  # a live API cut the reply short, and why (e.g. `max_output_tokens`)
    transcription: TranscriptionUsage | None = None  # the turn's speech transcribed and billed apart (realtime)
    item: str | None = None  # a live API's id of a spoken reply, for `truncate` (OpenAI Realtime)


DEFAULT_MAX_TOKENS = 300  # a reply's length cap per turn: the bench's, the glasses' and the server's default


@dataclass(frozen=True, kw_only=True)
class GenerationConfig:
    temperature: float = 0.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    json_mode: bool = False
    probe: bool = False  # a proactive probe, which nobody waits on: the local model keeps spoken conversations from it


@runtime_checkable
class PromptWarmer(Protocol):
    """A candidate that can evaluate a conversation ahead of the request that will continue it, so that
    request starts answering sooner (the embedded model: a llama.cpp context keeps what it evaluated)."""

    async def prefill(self, messages: list[Message], system: str) -> None: ...


class Candidate(Protocol):
    """A model under test, or a judge model: anything that answers messages."""

    model_id: str  # as the user named it, e.g. "openai:gpt-4o" or "local"
    family: str  # "openai", "gemini", "claude", "local", "replay", ...

    async def respond(
        self,
        messages: list[Message],
        system: str,
        config: GenerationConfig,
        on_delta: Callable[[str], None] | None = None,
    ) -> Reply:
        """Answer the conversation; `on_delta` gets text pieces as they stream."""
        ...
