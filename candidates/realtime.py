"""One owner for a live API session: `LiveConversation`.

A conversation with a streaming multimodal API (OpenAI Realtime, Gemini
Live) may outlive the connection it started on: the API drops it, expires
it, or sends an error that says to try again. `LiveConversation` holds the
conversation across however many sessions (`realtime_base.RealtimeSession`)
that takes:

- it keeps the turns answered so far (`AnsweredTurn`: the user's parts as a
  new session is told them, and the reply) and the current turn's frames
  and audio, where the API can be told them again (`replays_history`);
- `answer(...)` sends the turn's text parts, asks for the reply and reads
  it; a session lost on the way (a send failed, or the reply raised
  `RetryableError`) is replaced by a new one told the answered turns and
  sent this turn's frames and audio again, with backoff, up to `ATTEMPTS`
  sessions per turn; a reply the API failed while keeping the conversation
  (a rate limit, a server error: `RetryableError.same_session`) is asked
  again on the same session after the backoff; the causes of both go out
  with the reply (`session_lost`), and what a failed reply was billed
  (`RetryableError.usage`) is added to the turn's usage;
- `aclose()` closes the session.

Its two users are thin: `RealtimeCandidate.conversation()` (the text proxy,
one per trial, handed to the `DirectConversation` that plays it) and the
streaming server's `RealtimeBackend` (audio and frames as they arrive).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from candidates import providers
from candidates.model_ids import OUTPUTS, candidate_family, parse_model_id
from candidates.realtime_base import AnsweredTurn, RealtimeSession, UserPart
from candidates.retry import RetryableError, backoff_delay
from core.candidate import GenerationConfig, Message, Reply, Usage

log = logging.getLogger(__name__)

ATTEMPTS = 3  # sessions one turn may take: the first, and up to two that replace a lost one
RESEND_FRAMES = 8  # a new session gets at most the turn's last few frames again
RESEND_AUDIO_S = 120  # and at most its last two minutes of audio


async def open_realtime_session(
    model_id: str,
    system: str,
    *,
    base_url: str | None = None,
    output: str = "text",
    streaming_input: bool = False,
    config: GenerationConfig | None = None,
    trace: Callable[[str, dict], None] | None = None,
) -> RealtimeSession:
    """A connected session, of the class its provider's table entry names (`session`).
    `streaming_input`: the turn comes as audio and frames (Gemini then uses realtime
    input with manual activity; OpenAI needs no switch).
    `trace(direction, message)` sees every message sent and received, the setup
    included (`wearsim probe`)."""
    provider, model = parse_model_id(model_id)
    if output not in OUTPUTS:
        raise ValueError(f"output must be one of {', '.join(OUTPUTS)}, got {output!r}")
    config = config or GenerationConfig()
    entry = providers.get(provider)
    if entry.session is None:
        raise ValueError(f"{model_id!r} is not a realtime model id ({providers.form_list(providers.realtime_forms())})")
    session_class: Any = entry.load_session()
    return await session_class.open(
        model,
        model_id,
        system,
        base_url=base_url,
        output=output,
        streaming_input=streaming_input,
        config=config,
        trace=trace,
    )


class LiveConversation:
    """A whole conversation on a realtime API, across the sessions it takes."""

    def __init__(self, open_session: Callable[[], Awaitable[RealtimeSession]], model_id: str):
        self._open = open_session
        self.model_id = model_id
        self.session: RealtimeSession | None = None
        self.answered: list[AnsweredTurn] = []  # kept only where a new session can be told them
        self.lost: str | None = None  # why the session was lost: the next `answer` replaces it
        self._causes: list[str] = []  # this turn's lost sessions
        self._spent: Usage | None = None  # what this turn's failed replies were billed, where the API said
        self._frames: deque[bytes] = deque(maxlen=RESEND_FRAMES)  # this turn's frames as sent
        self._audio: deque[bytes] = deque()  # this turn's audio as sent (at the API's rate)
        self._audio_bytes = 0

    async def start(self) -> None:
        """Open the first session now (the stream path: the API's input rate is needed at once)."""
        self.session = await self._open()

    @property
    def input_rate(self) -> int:
        return self._current().input_rate

    def _current(self) -> RealtimeSession:
        if self.session is None:
            raise RuntimeError(f"{self.model_id}: no live session (not started yet, or closed)")
        return self.session

    @property
    def _replayable(self) -> bool:
        return self.session is None or self.session.replays_history

    async def send_audio(self, pcm16: bytes) -> None:
        if self._replayable:
            self._audio.append(pcm16)
            self._audio_bytes += len(pcm16)
            while self._audio_bytes > RESEND_AUDIO_S * 2 * self.input_rate and len(self._audio) > 1:
                self._audio_bytes -= len(self._audio.popleft())
        await self._send(lambda session: session.send_audio(pcm16))

    async def speech_started(self) -> None:
        await self._send(lambda session: session.speech_started())

    async def send_frame(self, jpeg: bytes) -> None:
        if self._replayable:
            self._frames.append(jpeg)
        await self._send(lambda session: session.send_user(None, (jpeg,)))

    async def interrupt(self) -> None:
        await self._send(lambda session: session.interrupt())

    async def truncate(self, item: str, played_ms: int) -> None:
        await self._send(lambda session: session.truncate(item, played_ms))

    @property
    def last_frame(self) -> bytes | None:
        return self._frames[-1] if self._frames else None

    async def _send(self, send: Callable[[RealtimeSession], Awaitable[None]]) -> None:
        """Send on the session, unless it is lost; a failed send marks it lost, with its cause."""
        if self.lost is not None or self.session is None:
            return
        try:
            await send(self.session)
        except RetryableError as exc:
            self._lose(str(exc))

    def _lose(self, cause: str) -> None:
        self.lost = cause
        self._causes.append(cause)
        log.info("%s: live session lost: %s", self.model_id, cause)

    async def answer(
        self,
        parts: tuple[UserPart, ...],
        *,
        audio_turn: bool,
        told: tuple[UserPart, ...] | None = None,
        on_delta: Callable[[str], None] | None = None,
        on_audio: Callable[[bytes], None] | None = None,
    ) -> Reply:
        """Send `parts`, end the user's turn and read the reply. `told`: how a
        later session is told this turn (default `parts`). A lost session is
        replaced, where the API can be told the conversation, up to `ATTEMPTS`
        sessions; then the last failure is raised."""
        if self.lost is not None and not self._replayable:
            raise RetryableError(f"{self.model_id}: the live session was lost mid-conversation ({self.lost})")
        unsent = parts
        for attempt in range(1, ATTEMPTS + 1):
            try:
                if self.session is None or self.lost is not None:
                    await self._replace()
                    unsent = parts
                for part in unsent:
                    await self._current().send_user(part.text, part.images)
                unsent = ()
                reply = await self._current().respond(audio_turn=audio_turn, on_delta=on_delta, on_audio=on_audio)
                break
            except RetryableError as exc:
                if exc.usage is not None and exc.usage.reported:
                    self._spent = exc.usage if self._spent is None else self._spent + exc.usage
                if exc.same_session:  # the API failed the reply but kept the conversation: ask again on it
                    self._causes.append(f"asked again after: {exc}")
                    log.info("%s: reply failed, asking again: %s", self.model_id, exc)
                else:
                    self._lose(str(exc))
                if attempt == ATTEMPTS or not (exc.same_session or self._replayable):
                    raise
                await asyncio.sleep(backoff_delay(attempt - 1, retry_after=exc.retry_after))
        if self._replayable:
            self.answered.append(AnsweredTurn(told=parts if told is None else told, reply=reply.text))
        self._frames.clear()
        self._audio.clear()
        self._audio_bytes = 0
        causes, self._causes = self._causes, []
        spent, self._spent = self._spent, None
        if spent is not None:  # the failed replies of this turn were billed too: the turn carries their usage
            reply = replace(reply, usage=reply.usage + spent if reply.usage.reported else spent)
        return replace(reply, session_lost="; ".join(causes)) if causes else reply

    async def _replace(self) -> None:
        """A new session, told the answered turns, with this turn's frames and audio sent again."""
        old, self.session = self.session, None
        if old is not None:
            await close_quietly(old)
        self.session = await self._open()
        for turn in self.answered:
            for part in turn.told:
                await self.session.send_user(part.text, part.images)
            await self.session.send_assistant(turn.reply)
        for jpeg in self._frames:
            await self.session.send_user(None, (jpeg,))
        for pcm16 in self._audio:
            await self.session.send_audio(pcm16)
        self.lost = None

    async def aclose(self) -> None:
        session, self.session = self.session, None
        if session is not None:
            await session.aclose()


async def close_quietly(session: RealtimeSession) -> None:
    """Close a session that is being replaced: its connection is usually gone already."""
    try:
        await session.aclose()
    except Exception as exc:  # noqa: BLE001 - the session is dropped either way; the cause is logged
        log.info("%s: closing a lost session: %s: %s", session.model_id, type(exc).__name__, exc)


class RealtimeCandidate:
    """A realtime API as a `Candidate` on the text proxy. `conversation()` is
    one conversation in one live session (a trial: Turn 3 in the same
    session); `respond` on the model itself answers a whole message list in a
    session of its own (for one-off prompts, such as the validator's)."""

    def __init__(self, model_id: str, *, base_url: str | None = None, output: str = "text"):
        self.model_id = model_id
        self.family = candidate_family(model_id)
        self.base_url = base_url
        self.output = output

    def conversation(self) -> RealtimeConversation:
        return RealtimeConversation(self)

    async def respond(
        self,
        messages: list[Message],
        system: str,
        config: GenerationConfig,
        on_delta: Callable[[str], None] | None = None,
    ) -> Reply:
        talk = self.conversation()
        try:
            return await talk.respond(messages, system, config, on_delta)
        finally:
            await talk.aclose()

    async def aclose(self) -> None:
        return None  # the model holds no session: each conversation closes its own


class RealtimeConversation:
    """The candidate of one text-proxy conversation: each call sends the
    messages after the last reply as user parts, in one `LiveConversation`."""

    def __init__(self, model: RealtimeCandidate):
        self.model = model
        self.model_id, self.family = model.model_id, model.family
        self.live: LiveConversation | None = None

    async def respond(
        self,
        messages: list[Message],
        system: str,
        config: GenerationConfig,
        on_delta: Callable[[str], None] | None = None,
    ) -> Reply:
        last_reply = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
        if self.live is None:
            model = self.model
            self.live = LiveConversation(
                lambda: open_realtime_session(
                    model.model_id, system, base_url=model.base_url, output=model.output, config=config
                ),
                model.model_id,
            )
            self.live.answered = answered_turns(messages[: last_reply + 1])  # told to the first session
        parts = tuple(_part(m) for m in messages[last_reply + 1 :])
        started = time.monotonic()
        reply = await self.live.answer(parts, audio_turn=False, on_delta=on_delta)
        # the conversation's own wall time; what the live session heard and bills apart is the stream's to read
        return replace(
            reply,
            model=self.model_id,
            latency_s=time.monotonic() - started,
            heard=None,
            interrupted=False,
            transcription=None,
            item=None,
        )

    async def aclose(self) -> None:
        if self.live is not None:
            await self.live.aclose()


def _part(message: Message) -> UserPart:
    return UserPart(text=message.text, images=tuple(i.data for i in message.images))


def answered_turns(messages: list[Message]) -> list[AnsweredTurn]:
    """A message list that ends with a reply, as the turns a new session is told."""
    turns: list[AnsweredTurn] = []
    parts: list[UserPart] = []
    for message in messages:
        if message.role == "assistant":
            turns.append(AnsweredTurn(told=tuple(parts), reply=message.text))
            parts = []
        else:
            parts.append(_part(message))
    return turns
