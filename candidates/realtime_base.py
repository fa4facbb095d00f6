"""The live-session seam of the streaming multimodal APIs (OpenAI Realtime,
Gemini Live): what one connection to the API can be asked, and what it
gives back. A leaf: it imports only the candidate seam's types.

A `RealtimeSession` is one live connection holding one conversation. Both
adapters implement it:

- `send_audio(pcm16)`: the user's audio, PCM16 mono at `input_rate`
  (24 kHz OpenAI, 16 kHz Gemini); nothing is committed yet;
- `speech_started()`: our voice activity heard the user begin to speak
  (Gemini opens the turn's activity then; OpenAI needs nothing);
- `send_user(text, images)`: a user content part: the camera frame as an
  image, or the camera block / whole turn as text;
- `send_assistant(text)`: an earlier assistant reply, when a conversation is
  told to a new session;
- `respond(audio_turn, on_delta, on_audio)`: end the user's turn explicitly
  (our own endpointing decides when) and read the reply to its end; text
  pieces and (spoken replies) PCM16 24 kHz audio pieces are passed on as
  they arrive;
- `interrupt()`, `truncate(item, played_ms)`: barge-in, and a spoken reply
  the user heard only part of;
- `replays_history`: whether a new session can be told the turns answered
  so far (OpenAI Realtime always; Gemini Live only on the text proxy, since
  its realtime input cannot be mixed with told turns).

`candidates.realtime.LiveConversation` owns sessions for a whole
conversation; nothing else holds one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from core.candidate import Reply


class RealtimeError(RuntimeError):
    """An error the API sent as an event, or a session it closed."""


MODEL_MISSING = "the provider says this model does not exist"  # in every ModelNotFoundError's message


class ModelNotFoundError(RealtimeError):
    """The API says the model named does not exist (or the key may not use it): a
    user error that no retry mends. Its message names the model id."""

    def __init__(self, model_id: str, detail: str):
        super().__init__(f"{model_id}: {MODEL_MISSING} ({detail[:200]}); `wearsim models` lists current ids")
        self.model_id = model_id


@dataclass(frozen=True, kw_only=True)
class UserPart:
    """One user content part as a session is sent it: text, images, or both."""

    text: str | None
    images: tuple[bytes, ...] = ()


@dataclass(frozen=True, kw_only=True)
class AnsweredTurn:
    """A turn as a new session is told it: the user's parts, then the reply."""

    told: tuple[UserPart, ...]
    reply: str


class RealtimeSession(Protocol):
    model_id: str
    input_rate: int

    @property
    def replays_history(self) -> bool:
        """A lost session can be replaced by a new one told the conversation so far."""

    async def send_audio(self, pcm16: bytes) -> None: ...

    async def speech_started(self) -> None: ...

    async def send_user(self, text: str | None, images: tuple[bytes, ...] = ()) -> None: ...

    async def send_assistant(self, text: str) -> None: ...

    async def respond(
        self,
        *,
        audio_turn: bool,
        on_delta: Callable[[str], None] | None = None,
        on_audio: Callable[[bytes], None] | None = None,
    ) -> Reply: ...

    async def interrupt(self) -> None:
        """Ask the API to stop the reply `respond` is reading; it then returns early, `interrupted`."""

    async def truncate(self, item: str, played_ms: int) -> None:
        """The user heard only the first `played_ms` of the spoken reply `item`: the API's
        conversation keeps that much of it, where the API can be told."""

    async def aclose(self) -> None: ...
