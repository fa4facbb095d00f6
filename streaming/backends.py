"""The assistant behind a streaming session: one seam, two kinds.

- `ChatBackend`: a chat `Candidate` behind perception. It needs the camera
  blocks as text (the turn's chosen frame, described), gets the turn's
  messages, and keeps the conversation's message list.
- `RealtimeBackend`: a streaming multimodal API (OpenAI Realtime, Gemini
  Live). It gets the user's audio as it arrives (resampled to the API's
  rate) and the camera's frames as they arrive, at most one per
  `FRAME_INTERVAL_MS` of stream time (as glasses stream video to these
  APIs), and the authored camera text as a text part for a turn without
  frames; the session tells it when the turn ended. Which frame the API had
  last when the user stopped speaking is up to the stream, not to us: its
  age is the turn's `last_frame_age_s`. With `output="audio"` the API
  speaks its reply; the pieces go to `on_audio` as they arrive. A session
  that is lost (the connection dropped, the session expired) is replaced at
  the turn's end by a new one, told the conversation so far (each answered
  turn's words, its last frame and its reply) and sent the turn's audio and
  frames again, up to `SESSIONS_PER_TURN` times, where the API allows it
  (`replays_history`: OpenAI Realtime; Gemini Live resumes its own
  connections by handle instead).

The session only routes: it calls `audio` for every chunk, `frame` for
every frame when the backend `streams_frames`, then `answer` at the end of
each turn, and `interrupt` when the user talks over the reply `answer` is
producing (barge-in): `answer` then returns early with what was produced so
far, marked `interrupted`, and the conversation keeps that part. When the
client stopped playing a spoken reply early, `reply_cut` says how much of it
the user heard.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from benchmark.candidates.base import REPLY_AUDIO_RATE, Candidate, GenerationConfig, Message, Reply
from benchmark.candidates.retry import RetryableError, backoff_delay
from benchmark.records import TurnInput, build_context_message
from perception.audio import SAMPLE_RATE, resample_pcm16


FRAME_INTERVAL_MS = 1000  # a realtime API gets at most one frame per second of stream time
SESSIONS_PER_TURN = 3  # a turn whose realtime session keeps being lost fails after this many
RESEND_FRAMES = 8  # a new session gets at most the turn's last few frames again
RESEND_AUDIO_S = 120  # and at most its last two minutes of audio


class ChatBackend:
    streams_frames = False  # gets the turn's chosen frame described as text instead

    def __init__(self, candidate: Candidate, system: str, config: GenerationConfig):
        self.candidate, self.system, self.config = candidate, system, config
        self.messages: list[Message] = []
        self._reply: asyncio.Task | None = None  # the request `answer` is waiting on

    async def audio(self, pcm16: bytes) -> None:
        return None  # a chat model hears only the transcript

    def last_frame_age_s(self, end_ms: int) -> float | None:
        return None

    async def answer(self, turn_input: TurnInput, on_delta: Callable[[str], None],
                     on_audio: Callable[[bytes], None]) -> Reply:
        self.messages += [Message("user", text) for text in turn_input.messages()]
        pieces: list[str] = []

        def keep(piece: str) -> None:
            pieces.append(piece)
            on_delta(piece)

        self._reply = asyncio.ensure_future(self.candidate.respond(list(self.messages), self.system, self.config,
                                                                   on_delta=keep))
        try:
            reply = await self._reply
        except asyncio.CancelledError:
            if asyncio.current_task().cancelling():  # the session itself is closing, not a barge-in
                raise
            reply = Reply("".join(pieces), self.candidate.model_id, interrupted=True)
        finally:
            self._reply = None
        self.messages.append(Message("assistant", reply.text))
        return reply

    async def interrupt(self) -> None:
        if self._reply is not None:
            self._reply.cancel()  # the request is dropped; the words streamed so far stay the reply

    async def reply_cut(self, turn: int, played_ms: int) -> None:
        return None  # a chat model's replies are text: nothing was spoken

    async def aclose(self) -> None:
        return None  # the candidate is shared by every session; the app closes it


@dataclass(frozen=True)
class AnsweredTurn:
    """A turn as a new realtime session is told it: what was said, its last frame, the reply."""
    words: str  # the authored camera text sent, then the transcript of the speech
    frame: bytes | None
    reply: str


class RealtimeBackend:
    streams_frames = True  # gets every frame as it arrives (and sends one a second)

    def __init__(self, session, model_id: str, reopen=None):
        self.session, self.model_id = session, model_id
        self._reopen = reopen  # async () -> a new session with the same settings
        self.last_frame_ms: int | None = None  # stream time of the newest frame sent
        self.frames_sent = 0
        self.spoken: dict[int, tuple[str, int]] = {}  # turn -> its spoken reply's API item id and length (ms)
        # kept only for an API that can be given a new session (`_replaceable`)
        self.history: list[AnsweredTurn] = []
        self._audio: deque[bytes] = deque()  # this turn's audio as sent (at the API's rate)
        self._audio_bytes = 0
        self._frames: deque[bytes] = deque(maxlen=RESEND_FRAMES)  # this turn's frames as sent
        self._lost = False  # a send failed: the turn's end replaces the session

    @classmethod
    async def open(cls, model_id: str, system: str, config: GenerationConfig, *, base_url: str | None = None,
                   output: str = "text"):
        from benchmark.candidates.realtime import open_realtime_session

        async def reopen():
            return await open_realtime_session(model_id, system, base_url=base_url, streaming_input=True,
                                               output=output, config=config)
        return cls(await reopen(), model_id, reopen)

    async def audio(self, pcm16: bytes) -> None:
        pcm16 = resample_pcm16(pcm16, SAMPLE_RATE, self.session.input_rate)
        if self._replaceable:
            self._audio.append(pcm16)
            self._audio_bytes += len(pcm16)
            while self._audio_bytes > RESEND_AUDIO_S * 2 * self.session.input_rate and len(self._audio) > 1:
                self._audio_bytes -= len(self._audio.popleft())
        await self._send(self.session.send_audio(pcm16))

    async def frame(self, t_ms: int, jpeg: bytes) -> None:
        if self.last_frame_ms is not None and t_ms - self.last_frame_ms < FRAME_INTERVAL_MS:
            return
        if self._replaceable:
            self._frames.append(jpeg)
        await self._send(self.session.send_user(None, (jpeg,)))
        self.last_frame_ms = t_ms
        self.frames_sent += 1

    async def _send(self, sending) -> None:
        """Send, unless the session is lost; a failed send marks it lost (the turn's end replaces it)."""
        if self._lost:
            sending.close()
            return
        try:
            await sending
        except Exception:
            self._lost = True

    @property
    def _replaceable(self) -> bool:
        return self._reopen is not None and getattr(self.session, "replays_history", False)

    async def _replace_session(self) -> None:
        """A new session, told the conversation so far, with this turn's frames and audio sent again."""
        if not self._replaceable:
            raise RetryableError(f"{self.model_id}: the live session was lost mid-conversation")
        with contextlib.suppress(Exception):
            await self.session.aclose()
        self.session = await self._reopen()
        for turn in self.history:
            await self.session.send_user(turn.words, (turn.frame,) if turn.frame else ())
            await self.session.send_assistant(turn.reply)
        for jpeg in self._frames:
            await self.session.send_user(None, (jpeg,))
        for pcm16 in self._audio:
            await self.session.send_audio(pcm16)
        self._lost = False

    def last_frame_age_s(self, end_ms: int) -> float | None:
        """Seconds of stream time between the newest frame the API got and `end_ms` (the end of speech)."""
        return None if self.last_frame_ms is None else round(max(0, end_ms - self.last_frame_ms) / 1000, 3)

    async def answer(self, turn_input: TurnInput, on_delta: Callable[[str], None],
                     on_audio: Callable[[bytes], None]) -> Reply:
        """The frames went as they arrived (`frame`); a channel without one goes as its authored text."""
        texts = [build_context_message(block) for block, source in (
            (turn_input.context_block, turn_input.context_source),
            (turn_input.camera_block, turn_input.camera_source)) if block and source == "authored"]
        for attempt in range(1, SESSIONS_PER_TURN + 1):
            try:
                if self._lost:
                    await self._replace_session()
                for text in texts:
                    await self.session.send_user(text)
                reply = await self.session.respond(audio_turn=True, on_delta=on_delta, on_audio=on_audio)
                break
            except RetryableError as exc:
                if attempt == SESSIONS_PER_TURN or not self._replaceable:
                    raise
                self._lost = True
                await asyncio.sleep(backoff_delay(attempt - 1, retry_after=exc.retry_after))
        if self._replaceable:
            self.history.append(AnsweredTurn("\n".join([*texts, turn_input.speech or ""]).strip(),
                                             self._frames[-1] if self._frames else None, reply.text))
        self._audio.clear()
        self._frames.clear()
        self._audio_bytes = 0
        if reply.item is not None:
            self.spoken[turn_input.turn] = (reply.item, len(reply.audio) * 1000 // (2 * REPLY_AUDIO_RATE))
        return Reply(reply.text, self.model_id, reply.usage, reply.done_s, reply.first_text_s,
                     reply.first_audio_s, reply.heard, interrupted=reply.interrupted)

    async def interrupt(self) -> None:
        await self._send(self.session.interrupt())

    async def reply_cut(self, turn: int, played_ms: int) -> None:
        """Truncate that turn's spoken reply at the API, to at most its length. A cut that comes
        after a later reply was asked (the next reply's audio stopped it) still corrects the
        conversation for the turns after."""
        if turn in self.spoken:
            item, length_ms = self.spoken[turn]
            await self._send(self.session.truncate(item, min(played_ms, length_ms)))

    async def aclose(self) -> None:
        await self.session.aclose()
