"""Gemini Live through `google-genai` (`client.aio.live.connect`).

Two ways in, never mixed in one session (the API does not allow it):
- text proxy: each turn is one `client_content` turn, closed with
  `turnComplete`;
- simulated glasses (`streaming_input`): `realtime_input` audio at 16 kHz,
  the frame as a JPEG `video` part (or the authored camera text as `text`),
  with automatic activity detection off and the turn framed by
  `activity_start` / `activity_end`, so our endpointing decides the turn.

Live models often refuse TEXT output; the session then reconnects asking for
AUDIO with output transcription and reads the transcript as the reply.

Connections are short-lived (about 2 minutes with video, then a `goAway`
some seconds before the close). Every session asks for session resumption
and keeps the newest handle the API gives. After a `goAway` the session
reconnects with that handle once the reply in progress is done, so the next
turn goes to a fresh connection holding the same conversation; a connection
that drops mid-turn is resumed the same way and the turn's input (its
audio, frames and text, kept until the reply ends) is sent again, once.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable

from benchmark.candidates.base import GenerationConfig, Usage
from benchmark.candidates.realtime_base import RealtimeReply
from benchmark.candidates.retry import RetryableError
from benchmark.candidates.usage import gemini_usage

log = logging.getLogger(__name__)

INPUT_RATE = 16000
API_VERSION = "v1beta"


class _Dropped(Exception):
    """The connection ended before the reply did."""


def _refuses_text(exc: Exception) -> bool:
    return "modalit" in str(exc).lower()


class GeminiLiveSession:
    input_rate = INPUT_RATE

    def __init__(self, connect, session, manager, model_id: str, *, spoken: bool, streaming_input: bool):
        from google.genai import types

        self.types = types
        self._connect = connect  # handle -> (session, manager): a new connection, resuming `handle`
        self.session, self._manager = session, manager
        self.model_id = model_id
        self.spoken = spoken  # the reply comes as audio plus its transcription
        self.streaming_input = streaming_input
        self._turns: list = []  # client_content turns waiting for the next respond()
        self._activity_open = False
        self._sent: list[dict] = []  # this turn's realtime inputs, sent again after a resumed drop
        self._replying = False  # `respond` is reading a reply
        self._barged_in = False  # `interrupt` opened the next turn's activity during that reply
        self.handle: str | None = None  # the newest session resumption handle
        self.going_away = False  # the API said it will close this connection soon
        self.reconnects = 0

    @property
    def replays_history(self) -> bool:
        """Past turns can be told to a new session as client content on the text proxy only: realtime
        input cannot be mixed with it (the glasses' sessions resume their own connections by handle)."""
        return not self.streaming_input

    @classmethod
    async def open(cls, model: str, model_id: str, system: str, *, base_url: str | None, output: str,
                   streaming_input: bool, config: GenerationConfig) -> "GeminiLiveSession":
        from google import genai
        from google.genai import types

        api_key = os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")
        if not api_key:
            raise RuntimeError(f"{model_id}: set GEMINI_API_KEY (or GOOGLE_API_KEY)")
        client = genai.Client(api_key=api_key, http_options=types.HttpOptions(base_url=base_url,
                                                                               api_version=API_VERSION))
        modalities = ["AUDIO"] if output == "audio" else ["TEXT"]

        async def connect(handle: str | None):
            live_config = types.LiveConnectConfig(
                response_modalities=modalities, system_instruction=system or None,
                max_output_tokens=config.max_tokens, temperature=config.temperature,
                input_audio_transcription=types.AudioTranscriptionConfig() if streaming_input else None,
                output_audio_transcription=types.AudioTranscriptionConfig() if modalities == ["AUDIO"] else None,
                realtime_input_config=types.RealtimeInputConfig(
                    automatic_activity_detection=types.AutomaticActivityDetection(disabled=True))
                if streaming_input else None,
                session_resumption=types.SessionResumptionConfig(handle=handle))
            manager = client.aio.live.connect(model=model, config=live_config)
            return await manager.__aenter__(), manager

        while True:
            try:
                session, manager = await connect(None)
            except Exception as exc:
                if modalities == ["TEXT"] and _refuses_text(exc):
                    modalities = ["AUDIO"]  # the model speaks only: read its output transcription
                    continue
                raise RetryableError(f"{model_id}: cannot connect: {type(exc).__name__}: {str(exc)[:200]}") from None
            return cls(connect, session, manager, model_id, spoken=modalities == ["AUDIO"],
                       streaming_input=streaming_input)

    async def _resume(self) -> None:
        """A new connection carrying on the conversation (the newest resumption handle)."""
        if self.handle is None:
            raise RetryableError(f"{self.model_id}: the connection closed and the API gave no resumption handle")
        old = self._manager
        try:
            self.session, self._manager = await self._connect(self.handle)
        except Exception as exc:
            raise RetryableError(f"{self.model_id}: cannot resume the session: {type(exc).__name__}: "
                                 f"{str(exc)[:200]}") from None
        finally:
            await _close(old, self.model_id)
        self.going_away = False
        self.reconnects += 1

    async def _resume_and_resend(self) -> None:
        """Resume on a new connection and send this turn's realtime inputs again."""
        await self._resume()
        for part in self._sent:
            await self.session.send_realtime_input(**part)

    async def _realtime(self, **part) -> None:
        """One realtime input, kept until the reply so a resumed connection can get
        it again; a connection that closed under it (after a goAway the API
        closes on its own clock) is resumed here."""
        self._sent.append(part)
        try:
            await self.session.send_realtime_input(**part)
        except Exception as exc:  # noqa: BLE001 - any failure of the socket: resume it
            log.info("%s: realtime input failed (%s: %s); resuming", self.model_id, type(exc).__name__, exc)
            await self._resume_and_resend()

    async def send_audio(self, pcm16: bytes) -> None:
        if not pcm16:
            return
        if not self._activity_open:
            await self._realtime(activity_start=self.types.ActivityStart())
            self._activity_open = True
        await self._realtime(audio=self.types.Blob(data=pcm16, mime_type=f"audio/pcm;rate={INPUT_RATE}"))

    async def send_user(self, text: str | None, images: tuple[bytes, ...] = ()) -> None:
        types = self.types
        if self.streaming_input:
            for image in images:
                await self._realtime(video=types.Blob(data=image, mime_type="image/jpeg"))
            if text:
                await self._realtime(text=text)
            return
        parts = [types.Part.from_bytes(data=image, mime_type="image/jpeg") for image in images]
        if text:
            parts.append(types.Part.from_text(text=text))
        self._turns.append(types.Content(role="user", parts=parts))

    async def send_assistant(self, text: str) -> None:
        self._turns.append(self.types.Content(role="model", parts=[self.types.Part.from_text(text=text)]))

    async def respond(self, *, audio_turn: bool, on_delta: Callable[[str], None] | None = None,
                      on_audio: Callable[[bytes], None] | None = None) -> RealtimeReply:
        turns, self._turns = self._turns, []
        if self.streaming_input and self._activity_open:
            await self._realtime(activity_end=self.types.ActivityEnd())
            self._activity_open = False
        self._replying = True
        try:
            reply = await self._reply(turns, on_delta, on_audio)
        except _Dropped as dropped:
            if self.handle is None:
                raise RetryableError(f"{self.model_id}: session ended during the reply: {dropped}") from None
            await self._resume_and_resend()
            try:
                reply = await self._reply(turns, on_delta, on_audio)
            except _Dropped as again:
                raise RetryableError(f"{self.model_id}: session ended during the reply, also after resuming "
                                     f"it: {again}") from None
        finally:
            self._replying = False
        # a barge-in's activity start belongs to the next turn: kept for a resend
        self._sent = [{"activity_start": self.types.ActivityStart()}] if self._barged_in else []
        self._barged_in = False
        if self.going_away:  # the next turn goes to a new connection
            await self._resume()
        return reply

    async def interrupt(self) -> None:
        """Barge-in: the user's next activity starts now, which cuts the reply off (the
        API's default activity handling). The reply then ends `interrupted`, then
        `turnComplete`, with no `generationComplete`; the audio that follows is that activity's."""
        if not (self.streaming_input and self._replying) or self._activity_open:
            return
        self._activity_open = self._barged_in = True
        try:
            await self.session.send_realtime_input(activity_start=self.types.ActivityStart())
        except Exception as exc:  # noqa: BLE001 - the connection is gone: the reply's own read sees it and resumes
            log.info("%s: barge-in's activity start failed: %s: %s", self.model_id, type(exc).__name__, exc)

    async def truncate(self, item: str, played_ms: int) -> None:
        return None  # the Live API has no message for it: its own interruption handling decides what it keeps

    async def _reply(self, turns: list, on_delta, on_audio) -> RealtimeReply:
        """Ask (text proxy: the waiting turns) and read the reply to turnComplete;
        `_Dropped` when the connection ends first."""
        if not self.streaming_input:
            try:
                await self.session.send_client_content(turns=turns, turn_complete=True)
            except Exception as exc:
                raise _Dropped(f"{type(exc).__name__}: {str(exc)[:200]}") from None
        started = time.monotonic()
        text: list[str] = []
        audio: list[bytes] = []
        heard: list[str] = []
        first_text = first_audio = None
        usage = Usage()
        interrupted = False
        try:
            async for message in self.session.receive():  # ends after turnComplete
                content = message.server_content
                update = message.session_resumption_update
                if update is not None and update.resumable and update.new_handle:
                    self.handle = update.new_handle
                if message.go_away is not None:
                    self.going_away = True  # reconnect once this reply is done
                if message.usage_metadata is not None:
                    usage = gemini_usage(message.usage_metadata, text_only_output=not self.spoken)
                if content is None:
                    continue
                interrupted = interrupted or bool(content.interrupted)
                pieces = [p.text for p in (content.model_turn.parts or [])] if content.model_turn else []
                if self.spoken and content.output_transcription and content.output_transcription.text:
                    pieces = [content.output_transcription.text]
                elif self.spoken:
                    pieces = []
                for piece in filter(None, pieces):
                    first_text = first_text if first_text is not None else time.monotonic() - started
                    text.append(piece)
                    if on_delta is not None:
                        on_delta(piece)
                if content.model_turn:
                    for part in content.model_turn.parts or []:
                        if part.inline_data is not None and part.inline_data.data:
                            first_audio = first_audio if first_audio is not None else time.monotonic() - started
                            audio.append(part.inline_data.data)
                            if on_audio is not None:
                                on_audio(part.inline_data.data)
                if content.input_transcription and content.input_transcription.text:
                    heard.append(content.input_transcription.text)
        except Exception as exc:
            raise _Dropped(f"{type(exc).__name__}: {str(exc)[:200]}") from None
        return RealtimeReply("".join(text), b"".join(audio), "".join(heard) or None, first_text, first_audio,
                             time.monotonic() - started, usage, interrupted)

    async def aclose(self) -> None:
        await _close(self._manager, self.model_id)


async def _close(manager, model_id: str) -> None:
    """Close a connection; one that already dropped may fail to, which changes nothing but is logged."""
    try:
        await manager.__aexit__(None, None, None)
    except Exception as exc:  # noqa: BLE001
        log.info("%s: closing the connection: %s: %s", model_id, type(exc).__name__, exc)
