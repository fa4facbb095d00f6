"""Streaming multimodal APIs (OpenAI Realtime, Gemini Live): one seam for both.

A `RealtimeSession` is one live connection to the API, holding one
conversation. Both adapters implement it:

- `send_audio(pcm16)`: the user's audio, PCM16 mono at `input_rate`
  (24 kHz OpenAI, 16 kHz Gemini); nothing is committed yet;
- `send_user(text, images)`: a user content part: the camera frame as an
  image, or the camera block / whole turn as text;
- `send_assistant(text)`: an earlier assistant reply, when a conversation is
  replayed into a new session;
- `respond(audio_turn, on_delta, on_audio)`: end the user's turn explicitly
  (our own endpointing decides when) and read the reply to its end; text
  pieces and (spoken replies) PCM16 24 kHz audio pieces are passed on as
  they arrive.

`RealtimeCandidate` wraps sessions as a `Candidate` for the text proxy
(`--via direct`): one session per trial, Turn 3 in the same session. The
streaming server's realtime backend (`streaming/backends.py`) drives a
session with the glasses' media.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from benchmark.candidates.base import GenerationConfig, Message, Reply, Usage
from benchmark.candidates.retry import with_retries

ATTEMPTS = 3  # tries of a text-proxy turn, each in a fresh session after a transient failure


class RealtimeError(RuntimeError):
    """An error the API sent as an event, or a session it closed."""


@dataclass(frozen=True)
class RealtimeReply:
    text: str  # the reply text, or the transcript of the spoken reply
    audio: bytes = b""  # PCM16 mono at REPLY_AUDIO_RATE when audio output was asked for
    heard: str | None = None  # the API's own transcript of the user's audio
    first_text_s: float | None = None  # seconds from the end of the user's turn
    first_audio_s: float | None = None
    done_s: float = 0.0
    usage: Usage = Usage()
    interrupted: bool = False  # `interrupt()` ended it early: `text` and `audio` are what came before
    item: str | None = None  # the API's id of a spoken reply, for `truncate` (OpenAI Realtime)


class RealtimeSession(Protocol):
    model_id: str
    input_rate: int
    replays_history: bool  # a lost session can be replaced by a new one told the conversation so far

    async def send_audio(self, pcm16: bytes) -> None: ...

    async def send_user(self, text: str | None, images: tuple[bytes, ...] = ()) -> None: ...

    async def send_assistant(self, text: str) -> None: ...

    async def respond(self, *, audio_turn: bool, on_delta: Callable[[str], None] | None = None,
                      on_audio: Callable[[bytes], None] | None = None) -> RealtimeReply: ...

    async def interrupt(self) -> None:
        """Ask the API to stop the reply `respond` is reading; it then returns early, `interrupted`."""

    async def truncate(self, item: str, played_ms: int) -> None:
        """The user heard only the first `played_ms` of the spoken reply `item`: the API's
        conversation keeps that much of it, where the API can be told."""

    async def aclose(self) -> None: ...


async def open_realtime_session(model_id: str, system: str, *, base_url: str | None = None,
                                output: str = "text", streaming_input: bool = False,
                                config: GenerationConfig | None = None) -> RealtimeSession:
    """A connected session. `streaming_input`: the turn comes as audio and frames
    (Gemini then uses realtime input with manual activity; OpenAI needs no switch)."""
    from benchmark.candidates.factory import OUTPUTS, parse_model_id

    provider, model = parse_model_id(model_id)
    if output not in OUTPUTS:
        raise ValueError(f"output must be one of {', '.join(OUTPUTS)}, got {output!r}")
    config = config or GenerationConfig()
    if provider == "openai-realtime":
        from benchmark.candidates.openai_realtime import OpenAIRealtimeSession

        return await OpenAIRealtimeSession.open(model, model_id, system, base_url=base_url, output=output,
                                                config=config)
    if provider == "gemini-live":
        from benchmark.candidates.gemini_live import GeminiLiveSession

        return await GeminiLiveSession.open(model, model_id, system, base_url=base_url, output=output,
                                            streaming_input=streaming_input, config=config)
    raise ValueError(f"{model_id!r} is not a realtime model id (openai-realtime:MODEL or gemini-live:MODEL)")


class RealtimeCandidate:
    """The text proxy on a realtime API: each turn is one user text item, the
    reply is read as text. A conversation keeps its session between turns;
    `end_conversation` closes it."""

    def __init__(self, model_id: str, *, base_url: str | None = None, output: str = "text"):
        from benchmark.candidates.factory import candidate_family

        self.model_id = model_id
        self.family = candidate_family(model_id)
        self.base_url = base_url
        self.output = output
        self._sessions: dict[tuple, RealtimeSession] = {}  # conversation so far -> its open session

    @staticmethod
    def _key(system: str, messages: list[Message]) -> tuple:
        return (system, tuple((m.role, m.text) for m in messages))

    async def respond(self, messages: list[Message], system: str, config: GenerationConfig,
                      on_delta: Callable[[str], None] | None = None) -> Reply:
        """The turn in the conversation's session. A transient failure (a
        dropped connection, a session the API expired, a rate limit) closes
        that session and replays the whole conversation into a new one, with
        backoff, up to `ATTEMPTS` times; the last failure is the cell's error."""
        last_reply = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
        session = self._sessions.pop(self._key(system, messages[:last_reply + 1]), None)

        async def attempt() -> tuple[RealtimeReply, float]:
            nonlocal session
            new = messages[last_reply + 1:]
            if session is None:  # a new conversation, or one replayed into a new session
                session = await open_realtime_session(self.model_id, system, base_url=self.base_url,
                                                      output=self.output, config=config)
                new = messages
            try:
                for message in new:
                    if message.role == "assistant":
                        await session.send_assistant(message.text)
                    else:
                        await session.send_user(message.text, tuple(i.data for i in message.images))
                started = time.monotonic()
                return await session.respond(audio_turn=False, on_delta=on_delta), started
            except BaseException:
                await session.aclose()
                session = None
                raise

        reply, started = await with_retries(attempt, attempts=ATTEMPTS)
        self._sessions[self._key(system, [*messages, Message("assistant", reply.text)])] = session
        return Reply(reply.text, self.model_id, reply.usage, time.monotonic() - started, reply.first_text_s,
                     reply.first_audio_s, audio=reply.audio)

    async def end_conversation(self, system: str, messages: list[Message]) -> None:
        session = self._sessions.pop(self._key(system, messages), None)
        if session is not None:
            await session.aclose()

    async def aclose(self) -> None:
        sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            await session.aclose()
