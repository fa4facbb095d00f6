"""Gemini Live through `google-genai` (`client.aio.live.connect`).

Two ways in, never mixed in one session (the API does not allow it):
- text proxy: each turn is one `client_content` turn, closed with
  `turnComplete`;
- simulated glasses (`streaming_input`): `realtime_input` audio at 16 kHz,
  the frame as a JPEG `video` part (or the authored camera text as `text`),
  with automatic activity detection off and each turn framed by
  `activity_start` / `activity_end`, so our endpointing decides the turn.
  Audio goes to the API only inside an activity. An activity opens when the
  user starts to speak (`speech_started`, from our voice activity), with the
  last `PRE_ROLL_S` of audio before it; audio outside an activity (the
  silence between turns) is held, not sent, and the held silence before the
  speech is dropped. A turn that ends with no speech start said (a caller
  without voice activity) takes everything held. So no activity is opened
  for the silence streamed after the last turn: every activity the API is
  sent is ended by a turn we read the reply of, and closing the session asks
  for no reply (ending that trailing activity did: the API answered it, a
  billed reply nobody read).

Live models often refuse TEXT output (the current ones reply in audio only);
the session then reconnects asking for AUDIO with output transcription and
reads the transcript as the reply.

What the API documents and this adapter relies on (docs/protocol.md,
"Provider behaviour"):
- without context window compression a session with audio and video ends
  after about 2 minutes (audio only: about 15): every setup asks for the
  sliding window, so a session lasts as long as the conversation;
- a connection lasts about 10 minutes and is announced to end by a `goAway`
  (`timeLeft`); session resumption carries the conversation to a new
  connection. A reader task takes every server message as it comes, so a
  `goAway` is acted on when it arrives: between replies the session moves
  to a new connection at once, during one as soon as it ends;
- `sessionResumptionUpdate` gives the newest handle. What was sent before an
  update is in the state it names; what was sent after is kept and sent
  again on the new connection (before the first handle: a new session is
  sent everything), so resumed input is neither lost nor sent twice
  (`lastConsumedClientMessageIndex`, when the API gives it, trims that
  further; the Developer API's SDK refuses the `transparent` switch that asks
  for it, so it is not asked);
- a model id the API does not know closes the connection during setup with
  a "not found" reason: that is `ModelNotFoundError`, not a fault to retry.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from candidates.realtime_base import ModelNotFoundError
from candidates.retry import RetryableError
from candidates.usage import gemini_usage
from core.candidate import GenerationConfig, Reply, Usage

log = logging.getLogger(__name__)

INPUT_RATE = 16000
API_VERSION = "v1beta"
RESUMES_WITHOUT_PROGRESS = 3  # connections in a row that closed before any reply or handle: the session is lost
UNSENT_CAP = 8000  # at most this many messages kept for a resend (about 160 s of 20 ms audio chunks)
PRE_ROLL_S = 0.5  # audio before the speech start that opens an activity (voice activity starts a little late)
HELD_S = 15  # audio held outside an activity: a turn that ends with no speech start said takes it all
MODEL_MISSING = (
    "is not found",
    "not found for api version",
    "not supported for bidigeneratecontent",
    "requested entity was not found",
)


@dataclass(frozen=True, kw_only=True)
class _Dropped:
    """Put in the inbox when a connection ends: its generation, and why."""

    generation: int
    reason: str


def _refuses_text(exc: Exception) -> bool:
    return "modalit" in str(exc).lower()


def _model_missing(exc: Exception) -> bool:
    text = str(exc).lower()
    return any(marker in text for marker in MODEL_MISSING)


class GeminiLiveSession:
    input_rate = INPUT_RATE

    def __init__(self, connect, model_id: str, *, spoken: bool, streaming_input: bool):
        from google.genai import types

        self.types = types
        self._connect = connect  # handle -> (session, manager): a new connection, resuming `handle`
        self.model_id = model_id
        self.spoken = spoken  # the reply comes as audio plus its transcription
        self.streaming_input = streaming_input
        self.session = self._manager = None
        self._generation = 0  # which connection: messages and drops of an earlier one are ignored
        self._reader: asyncio.Task | None = None
        self._inbox: asyncio.Queue = asyncio.Queue()  # (generation, message) or _Dropped, for `respond`
        self._lock = asyncio.Lock()  # a send and a move to a new connection never overlap
        self._turns: list = []  # client_content turns waiting for the next respond()
        self._activity_open = False
        self._held: deque[bytes] = deque()  # audio outside an activity, not sent (oldest dropped past HELD_S)
        self._held_bytes = 0
        # (index on the connection, method, kwargs) sent but not yet in a handle's state
        self._unsent: deque[tuple[int, str, dict]] = deque(maxlen=UNSENT_CAP)
        self._count = 0  # messages sent on the current connection after its setup
        self._overflowed = False  # `_unsent` dropped its oldest messages (past UNSENT_CAP)
        self._fruitless = 0  # resumes since the last reply or handle: connections that closed and gave nothing
        self._replying = False  # `respond` is asking or reading a reply
        self.handle: str | None = None  # the newest session resumption handle
        self.going_away = False  # the API said it will close this connection soon
        self.reconnects = 0
        self.trace: Callable[[str, dict], None] | None = None  # `wearsim probe`: every message sent and received

    @property
    def replays_history(self) -> bool:
        """Past turns can be told to a new session as client content on the text proxy only: realtime
        input cannot be mixed with it (the glasses' sessions resume their own connections by handle)."""
        return not self.streaming_input

    @classmethod
    async def open(
        cls,
        model: str,
        model_id: str,
        system: str,
        *,
        base_url: str | None,
        output: str,
        streaming_input: bool,
        config: GenerationConfig,
        trace=None,
    ) -> GeminiLiveSession:
        from google import genai
        from google.genai import types

        api_key = os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY") or (base_url and "not-needed")
        if not api_key:  # a --base-url of one's own may want no key (its table entry: keyless_at_base_url)
            raise RuntimeError(f"{model_id}: set GEMINI_API_KEY (or GOOGLE_API_KEY)")
        client = genai.Client(
            api_key=api_key, http_options=types.HttpOptions(base_url=base_url, api_version=API_VERSION)
        )
        modalities = [types.Modality.AUDIO] if output == "audio" else [types.Modality.TEXT]

        async def connect(handle: str | None):
            live_config = types.LiveConnectConfig(
                response_modalities=modalities,
                system_instruction=system or None,
                max_output_tokens=config.max_tokens,
                temperature=config.temperature,
                input_audio_transcription=types.AudioTranscriptionConfig() if streaming_input else None,
                output_audio_transcription=types.AudioTranscriptionConfig() if modalities == ["AUDIO"] else None,
                realtime_input_config=types.RealtimeInputConfig(
                    automatic_activity_detection=types.AutomaticActivityDetection(disabled=True)
                )
                if streaming_input
                else None,
                # without it a session with audio and video ends after about two minutes
                context_window_compression=types.ContextWindowCompressionConfig(sliding_window=types.SlidingWindow()),
                session_resumption=types.SessionResumptionConfig(handle=handle),
            )
            if trace is not None:
                trace(
                    "sent",
                    {
                        "setup (as configured)": {
                            "model": model,
                            **live_config.model_dump(mode="json", exclude_none=True),
                        }
                    },
                )
            manager = client.aio.live.connect(model=model, config=live_config)
            return await manager.__aenter__(), manager

        while True:
            try:
                session, manager = await connect(None)
            except Exception as exc:
                if modalities == ["TEXT"] and _refuses_text(exc):
                    modalities = [types.Modality.AUDIO]  # the model speaks only: read its output transcription
                    continue
                if _model_missing(exc):
                    raise ModelNotFoundError(model_id, str(exc)) from None
                raise RetryableError(f"{model_id}: cannot connect: {type(exc).__name__}: {str(exc)[:200]}") from None
            live = cls(connect, model_id, spoken=modalities == ["AUDIO"], streaming_input=streaming_input)
            live.trace = trace
            live._attach(session, manager)
            return live

    def _attach(self, session, manager) -> None:
        """Make a connection the current one and start reading it."""
        self.session, self._manager = session, manager
        self._generation += 1
        self._count = 0
        self._reader = asyncio.create_task(self._read(session, self._generation))

    async def _read(self, session, generation: int) -> None:
        """Every message of one connection, as it comes: resumption state and `goAway` are acted on
        here; everything goes to the inbox for `respond`. The connection's end is put there too."""
        try:
            while True:
                async for message in session.receive():  # one turn's worth, then again
                    if generation != self._generation:
                        return
                    self._note(message)
                    self._inbox.put_nowait((generation, message))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the connection ended: `respond` or the next send resumes it
            if generation == self._generation:
                self._inbox.put_nowait(
                    _Dropped(generation=generation, reason=f"{type(exc).__name__}: {str(exc)[:200]}")
                )

    def _note(self, message) -> None:
        if self.trace is not None:
            self.trace("received", message.model_dump(mode="json", exclude_none=True))
        update = message.session_resumption_update
        if update is not None and update.resumable and update.new_handle:
            self.handle = update.new_handle
            self._overflowed = False
            self._fruitless = 0
            index = update.last_consumed_client_message_index
            # what was sent before this update is in the handle's state: only what follows is kept
            self._unsent = deque((m for m in self._unsent if index is not None and m[0] > index), UNSENT_CAP)
        if message.go_away is not None:
            log.info("%s: goAway (%s left)", self.model_id, message.go_away.time_left)
            self.going_away = True
            if not self._replying:
                asyncio.get_running_loop().create_task(self._move_between_replies())

    async def _move_between_replies(self) -> None:
        """After a goAway with no reply in progress: carry the session to a new connection now."""
        async with self._lock:
            if not self.going_away or self._replying:
                return  # moved already, or `respond` moves it once its reply is done
            try:
                await self._resume()
            except RetryableError as exc:
                log.info("%s: moving after a goAway failed: %s", self.model_id, exc)

    async def _resume(self) -> None:
        """A new connection carrying on the conversation from the newest handle, sent again what the
        handle's state does not hold; before the API gave any handle, a new session sent everything
        so far. Called with the lock held."""
        self._fruitless += 1
        if self._fruitless > RESUMES_WITHOUT_PROGRESS:
            raise RetryableError(
                f"{self.model_id}: the connection closed {self._fruitless} times in a row with no "
                f"reply or resumption handle in between"
            )
        if self.handle is None and self._overflowed:
            raise RetryableError(
                f"{self.model_id}: the connection closed before the API gave a resumption "
                f"handle, with more input than is kept to send again"
            )
        old, reader = self._manager, self._reader
        if reader is not None:
            reader.cancel()
        try:
            session, manager = await self._connect(self.handle)
        except Exception as exc:
            raise RetryableError(
                f"{self.model_id}: cannot resume the session: {type(exc).__name__}: {str(exc)[:200]}"
            ) from None
        finally:
            await _close(old, self.model_id)
        self._attach(session, manager)
        self.going_away = False
        self.reconnects += 1
        unsent, self._unsent = self._unsent, deque(maxlen=UNSENT_CAP)
        try:
            for _, method, kwargs in unsent:
                await self._deliver(method, kwargs)
        except Exception as exc:  # noqa: BLE001 - the new connection failed too: the turn fails, retryable
            raise RetryableError(
                f"{self.model_id}: the resumed connection failed: {type(exc).__name__}: {str(exc)[:200]}"
            ) from None

    async def _deliver(self, method: str, kwargs: dict) -> None:
        """Send one message on the current connection, kept until a handle's state holds it."""
        self._overflowed = self._overflowed or len(self._unsent) == UNSENT_CAP  # the oldest drops out
        self._unsent.append((self._count, method, kwargs))
        self._count += 1
        if self.trace is not None:
            self.trace("sent", {method: {k: _shown(v) for k, v in kwargs.items()}})
        await getattr(self.session, method)(**kwargs)

    async def _send(self, method: str, **kwargs) -> None:
        """One message; a connection that closed under it (after a goAway the API closes on its own
        clock) is resumed here and the message goes on the new one."""
        async with self._lock:
            try:
                await self._deliver(method, kwargs)
            except Exception as exc:  # noqa: BLE001 - any failure of the socket: resume it
                log.info("%s: %s failed (%s: %s); resuming", self.model_id, method, type(exc).__name__, exc)
                await self._resume()

    async def send_audio(self, pcm16: bytes) -> None:
        """Sent inside an activity; held outside one (the text proxy sends no audio)."""
        if not pcm16:
            return
        if self._activity_open:
            await self._send_pcm(pcm16)
            return
        self._held.append(pcm16)
        self._held_bytes += len(pcm16)
        while self._held_bytes > HELD_S * 2 * INPUT_RATE and len(self._held) > 1:
            self._held_bytes -= len(self._held.popleft())

    async def speech_started(self) -> None:
        """The user began to speak: an activity opens with the last `PRE_ROLL_S` of the held audio;
        the silence held before it is dropped. During a reply nothing changes here (barge-in is
        `interrupt`; without it the speech is held and goes when its turn ends)."""
        if self.streaming_input and not self._activity_open and not self._replying:
            await self._open_activity(pre_roll_only=True)

    async def _open_activity(self, *, pre_roll_only: bool) -> None:
        """`activityStart`, then the held audio (all of it, or only the pre-roll)."""
        held, self._held, self._held_bytes = list(self._held), deque(), 0
        if pre_roll_only:
            keep, kept = int(PRE_ROLL_S * 2 * INPUT_RATE), list[bytes]()
            for chunk in reversed(held):
                if keep <= 0:
                    break
                kept.insert(0, chunk[-keep:] if len(chunk) > keep else chunk)
                keep -= len(kept[0])
            held = kept
        await self._send("send_realtime_input", activity_start=self.types.ActivityStart())
        self._activity_open = True
        for chunk in held:
            await self._send_pcm(chunk)

    async def _send_pcm(self, pcm16: bytes) -> None:
        await self._send(
            "send_realtime_input", audio=self.types.Blob(data=pcm16, mime_type=f"audio/pcm;rate={INPUT_RATE}")
        )

    async def send_user(self, text: str | None, images: tuple[bytes, ...] = ()) -> None:
        types = self.types
        if self.streaming_input:
            for image in images:
                await self._send("send_realtime_input", video=types.Blob(data=image, mime_type="image/jpeg"))
            if text:
                if not self._activity_open:  # a text turn of its own (a proactive probe) is an activity too
                    await self._send("send_realtime_input", activity_start=self.types.ActivityStart())
                    self._activity_open = True  # the audio held stays held: nobody spoke
                await self._send("send_realtime_input", text=text)
            return
        parts = [types.Part.from_bytes(data=image, mime_type="image/jpeg") for image in images]
        if text:
            parts.append(types.Part.from_text(text=text))
        self._turns.append(types.Content(role="user", parts=parts))

    async def send_assistant(self, text: str) -> None:
        self._turns.append(self.types.Content(role="model", parts=[self.types.Part.from_text(text=text)]))

    async def respond(
        self,
        *,
        audio_turn: bool,
        on_delta: Callable[[str], None] | None = None,
        on_audio: Callable[[bytes], None] | None = None,
    ) -> Reply:
        turns, self._turns = self._turns, []
        self._replying = True
        try:
            if self.streaming_input:
                if not self._activity_open and self._held:  # no speech start was said: the turn is what was held
                    await self._open_activity(pre_roll_only=False)
                if self._activity_open:
                    self._activity_open = False
                    await self._send("send_realtime_input", activity_end=self.types.ActivityEnd())
            else:
                await self._send("send_client_content", turns=turns, turn_complete=True)
            reply = await self._read_reply(on_delta, on_audio)
        finally:
            self._replying = False
        if self.going_away:  # the next turn goes to a new connection
            async with self._lock:
                await self._resume()
        return reply

    async def interrupt(self) -> None:
        """Barge-in: the user's next activity starts now, which cuts the reply off (the
        API's default activity handling). The reply then ends `interrupted`, then
        `turnComplete`, with no `generationComplete`; the audio that follows is that activity's."""
        if not (self.streaming_input and self._replying) or self._activity_open:
            return
        try:
            await self._open_activity(pre_roll_only=True)
        except RetryableError as exc:  # the connection is gone: the reply's own read sees it
            log.info("%s: barge-in's activity start failed: %s", self.model_id, exc)

    async def truncate(self, item: str, played_ms: int) -> None:
        return None  # the Live API has no message for it: its own interruption handling decides what it keeps

    async def _read_reply(self, on_delta, on_audio) -> Reply:
        """Read the inbox to this turn's turnComplete. A connection that ends first is resumed once
        (the turn's input that no handle holds goes again, so the API answers on the new one)."""
        started = time.monotonic()
        text: list[str] = []
        audio: list[bytes] = []
        heard: list[str] = []
        first_text = first_audio = None
        usage = Usage()
        interrupted = resumed = False
        while True:
            item = await self._inbox.get()
            if isinstance(item, _Dropped):
                if item.generation != self._generation:
                    continue  # an earlier connection's end
                if resumed or self.handle is None:
                    raise RetryableError(
                        f"{self.model_id}: session ended during the reply"
                        f"{', also after resuming it' if resumed else ''}: {item.reason}"
                    )
                resumed = True
                async with self._lock:
                    await self._resume()
                continue
            generation, message = item
            if generation != self._generation:
                continue
            if message.usage_metadata is not None:
                usage = gemini_usage(message.usage_metadata, text_only_output=not self.spoken)
            content = message.server_content
            if content is None:
                continue
            interrupted = interrupted or bool(content.interrupted)
            pieces = [p.text for p in (content.model_turn.parts or [])] if content.model_turn else []
            if self.spoken:
                pieces = [content.output_transcription.text] if content.output_transcription else []
            for piece in filter(None, pieces):
                first_text = first_text if first_text is not None else time.monotonic() - started
                text.append(piece)
                if on_delta is not None:
                    on_delta(piece)
            for part in (content.model_turn.parts or []) if content.model_turn else []:
                if part.inline_data is not None and part.inline_data.data:
                    first_audio = first_audio if first_audio is not None else time.monotonic() - started
                    audio.append(part.inline_data.data)
                    if on_audio is not None:
                        on_audio(part.inline_data.data)
            if content.input_transcription and content.input_transcription.text:
                heard.append(content.input_transcription.text)
            if content.turn_complete:
                self._fruitless = 0
                return Reply(
                    text="".join(text),
                    model=self.model_id,
                    audio=b"".join(audio),
                    heard="".join(heard) or None,
                    first_token_s=first_text,
                    first_audio_s=first_audio,
                    latency_s=time.monotonic() - started,
                    usage=usage,
                    interrupted=interrupted,
                )

    async def aclose(self) -> None:
        """Close the connection. An activity still open (speech that no turn end followed) is left
        open: ending it would ask the API for a reply nobody reads, and it bills that reply."""
        if self._activity_open:
            log.info("%s: closing with an activity open; no reply asked for it", self.model_id)
        if self._reader is not None:
            self._reader.cancel()
        await _close(self._manager, self.model_id)


def _shown(value):
    """A message field as a trace shows it: media as its size, never its bytes."""
    data = getattr(value, "data", None)
    if isinstance(data, bytes):
        return {"mime_type": getattr(value, "mime_type", None), "bytes": len(data)}
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, list):
        return [_shown(v) for v in value]
    return value


async def _close(manager, model_id: str) -> None:
    """Close a connection; one that already dropped may fail to, which changes nothing but is logged."""
    if manager is None:
        return
    try:
        await manager.__aexit__(None, None, None)
    except Exception as exc:  # noqa: BLE001
        log.info("%s: closing the connection: %s: %s", model_id, type(exc).__name__, exc)
