"""The `Candidate` seam: one async method that answers a conversation.

Messages are one type with a role literal; each adapter converts them to its
provider's format in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Literal, Protocol

REPLY_AUDIO_RATE = 24000  # spoken replies of both realtime APIs: PCM16 mono 24 kHz


@dataclass(frozen=True)
class Image:
    """An image sent as content (vision judges, realtime adapters)."""

    data: bytes
    mime_type: str = "image/jpeg"
    name: str = ""


@dataclass(frozen=True)
class Message:
    role: Literal["user", "assistant"]
    text: str
    images: tuple[Image, ...] = ()


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
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
    session_lost: str | None = None  # a live API's sessions lost and replaced during the turn: their causes


@dataclass(frozen=True)
class GenerationConfig:
    temperature: float = 0.0
    max_tokens: int = 400
    json_mode: bool = False


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
