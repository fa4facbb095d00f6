"""OpenAI Realtime through the `openai` SDK's GA client (`client.realtime.connect`).

Server-side turn detection is off: the caller ends each turn
(`input_audio_buffer.commit` when audio was sent, then `response.create`).
Events are read as JSON so the GA names and the beta names still served by
some endpoints (`response.text.delta`, ...) are both understood.

What the API documents and this adapter relies on (docs/protocol.md, "Provider
behaviour"):
- the input transcript (`conversation.item.input_audio_transcription.completed`)
  runs apart from the response and may come before or after it: it is matched
  to its turn by the committed item's id, waited for at most
  `TRANSCRIPT_WAIT_S` after `response.done`, and a late one for an earlier
  item is never taken as this turn's;
- a response can end `failed` (`status_details.error`: rate limits, server
  errors, a model that does not exist) or `incomplete` (`status_details.reason`,
  e.g. `max_output_tokens`), and an `error` event does not close the socket:
  both are read into the retry policy (`_api_error`), and a rate-limited or
  server-failed response is asked again on the same session; the usage a
  failed response reports goes with the error and is added to the turn's
  (every response asked is priced, the failed ones too);
- `rate_limits.updated` says when a spent limit resets, the wait used when a
  rate-limited response names none;
- the input transcription is billed apart from the response: its event's
  `usage` (tokens, or seconds of audio) is kept by item and goes with the
  turn's reply (`Reply.transcription`), priced by the transcription
  model's entry (`openai:` + `TRANSCRIBE_MODEL`).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import re
import time
from collections.abc import Callable
from typing import overload

from candidates.realtime_base import ModelNotFoundError, RealtimeError
from candidates.retry import RetryableError
from candidates.usage import openai_realtime_usage, openai_transcription_usage
from core.candidate import GenerationConfig, Reply, TranscriptionUsage, Usage

log = logging.getLogger(__name__)

INPUT_RATE = 24000
TRANSCRIBE_MODEL = "gpt-4o-mini-transcribe"
TRANSCRIBE_MODEL_ID = f"openai:{TRANSCRIBE_MODEL}"  # as the price table names it
TEXT_DELTAS = ("response.output_text.delta", "response.text.delta")
AUDIO_DELTAS = ("response.output_audio.delta", "response.audio.delta")
AUDIO_TRANSCRIPT_DELTAS = ("response.output_audio_transcript.delta", "response.audio_transcript.delta")
RETRYABLE_CODES = ("rate_limit_exceeded", "server_error", "session_expired")
RETRYABLE_TYPES = ("rate_limit_error", "server_error")
SAME_SESSION_CODES = ("rate_limit_exceeded", "server_error")  # the session is intact: ask again on it
MODEL_MISSING_CODES = ("model_not_found",)
TRANSCRIPT_DONE = "conversation.item.input_audio_transcription.completed"
TRANSCRIPT_FAILED = "conversation.item.input_audio_transcription.failed"
TRANSCRIPT_WAIT_S = 3.0  # after response.done, how long a turn waits for its own input transcript
WAIT_IN = re.compile(r"try again in (\d+(?:\.\d+)?)\s*(ms|s)\b", re.I)
CANCEL_TOO_LATE = "response_cancel_not_active"  # a response.cancel that arrived after the response ended
TRUNCATE_EVENT = "wearsim_truncate_"  # our conversation.item.truncate events' ids: their errors are not the turn's


class OpenAIRealtimeSession:
    input_rate = INPUT_RATE
    replays_history = True  # a lost session is replaced by a new one told the conversation (no resumption)

    def __init__(self, connection, manager, model_id: str, output: str):
        self.connection, self._manager = connection, manager
        self.model_id, self.output = model_id, output
        self._audio_sent = False
        self._responding = False  # between response.create and its response.done
        self._truncations = 0
        self._committed: str | None = None  # the item id of this turn's committed audio, once the API names it
        self._awaiting_commit = False  # a commit was sent and its `input_audio_buffer.committed` not read yet
        self._transcripts: dict[str, str | None] = {}  # item id -> its transcript (None: transcription failed)
        self._transcribed: dict[str, TranscriptionUsage] = {}  # item id -> what its transcription was billed
        self._commit_sent = False  # this turn committed audio: a transcription was asked for
        self._limit_reset_s: float | None = None  # when a spent rate limit resets (`rate_limits.updated`)
        self.trace: Callable[[str, dict], None] | None = None  # `wearsim probe`: every event sent and received

    @classmethod
    async def open(
        cls,
        model: str,
        model_id: str,
        system: str,
        *,
        base_url: str | None,
        output: str,
        streaming_input: bool = False,  # a turn's audio and frames need no other session set-up here
        config: GenerationConfig,
        trace=None,
    ) -> OpenAIRealtimeSession:
        try:
            from openai import AsyncOpenAI
        except ImportError:  # pragma: no cover - openai is a required dependency
            raise RuntimeError(
                "openai-realtime needs the openai package with its realtime extra: pip install 'openai[realtime]'"
            ) from None
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = os.environ.get("OPENAI_API_KEY") or ("not-needed" if base_url else None)
        if not api_key:
            raise RuntimeError(f"{model_id}: set OPENAI_API_KEY, or --base-url for a local endpoint")
        # the socket's URL is ours to give (older SDKs always used wss): http(s) becomes ws(s); the SDK
        # appends /realtime?model=...
        socket_url = ("ws" + base_url[4:] if base_url.startswith("http") else base_url) if base_url else None
        client = AsyncOpenAI(api_key=api_key, base_url=base_url, websocket_base_url=socket_url, max_retries=0)
        manager = client.realtime.connect(model=model)
        try:
            connection = await manager.__aenter__()
        except Exception as exc:
            raise RetryableError(f"{model_id}: cannot connect: {type(exc).__name__}") from None
        session = cls(connection, manager, model_id, output)
        session.trace = trace
        await session._send_event(
            {
                "type": "session.update",
                "session": {
                    "type": "realtime",
                    "output_modalities": [output],
                    "instructions": system,
                    "max_output_tokens": config.max_tokens,
                    "audio": {
                        "input": {
                            "format": {"type": "audio/pcm", "rate": INPUT_RATE},
                            "turn_detection": None,
                            "transcription": {"model": TRANSCRIBE_MODEL},
                        }
                    },
                },
            }
        )
        return session

    async def _send_event(self, event: dict) -> None:
        if self.trace is not None:
            self.trace("sent", event)
        try:
            await self.connection.send(event)
        except Exception as exc:  # the socket closed under us
            raise RetryableError(f"{self.model_id}: connection lost: {type(exc).__name__}") from None

    async def send_audio(self, pcm16: bytes) -> None:
        if pcm16:
            await self._send_event(
                {"type": "input_audio_buffer.append", "audio": base64.b64encode(pcm16).decode("ascii")}
            )
            self._audio_sent = True

    async def speech_started(self) -> None:
        return None  # the audio buffer is committed when the turn ends: the start changes nothing

    async def send_user(self, text: str | None, images: tuple[bytes, ...] = ()) -> None:
        content = [
            {"type": "input_image", "image_url": "data:image/jpeg;base64," + base64.b64encode(i).decode()}
            for i in images
        ]
        if text:
            content.append({"type": "input_text", "text": text})
        if content:
            await self._send_event(
                {"type": "conversation.item.create", "item": {"type": "message", "role": "user", "content": content}}
            )

    async def send_assistant(self, text: str) -> None:
        await self._send_event(
            {
                "type": "conversation.item.create",
                "item": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]},
            }
        )

    async def respond(
        self,
        *,
        audio_turn: bool,
        on_delta: Callable[[str], None] | None = None,
        on_audio: Callable[[bytes], None] | None = None,
    ) -> Reply:
        """End the turn and read its reply. Raises `RetryableError` with `same_session` set when the
        API failed the response but kept the conversation (rate limits, server errors): calling
        `respond` again asks again, without committing the audio twice."""
        if audio_turn and self._audio_sent:
            await self._send_event({"type": "input_audio_buffer.commit"})
            self._audio_sent = False
            self._committed, self._awaiting_commit = None, True
            self._commit_sent = True
        await self._send_event({"type": "response.create"})
        self._responding = True
        try:
            reply = await self._read_response(on_delta, on_audio)
        finally:
            self._responding = False
        self._committed = None  # the turn is answered: a later one commits its own item (or none)
        return reply

    async def interrupt(self) -> None:
        """`response.cancel`: the API stops and ends the response with status `cancelled`."""
        if self._responding:
            await self._send_event({"type": "response.cancel"})

    async def truncate(self, item: str, played_ms: int) -> None:
        """`conversation.item.truncate` of a spoken reply (its `Reply.item`) at
        `played_ms`: the API drops the unheard audio and its transcript from the conversation."""
        self._truncations += 1
        await self._send_event(
            {
                "type": "conversation.item.truncate",
                "event_id": f"{TRUNCATE_EVENT}{self._truncations}",
                "item_id": item,
                "content_index": 0,
                "audio_end_ms": played_ms,
            }
        )

    @overload
    async def _event(self, timeout: None = None) -> dict: ...

    @overload
    async def _event(self, timeout: float) -> dict | None: ...

    async def _event(self, timeout: float | None = None) -> dict | None:
        """The next server event (None when `timeout` passed first); a closed socket is a lost connection."""
        try:
            raw = await (
                self.connection.recv_bytes()
                if timeout is None
                else asyncio.wait_for(self.connection.recv_bytes(), timeout)
            )
        except TimeoutError:
            return None
        except Exception as exc:  # the socket closed under us
            raise RetryableError(f"{self.model_id}: connection lost: {type(exc).__name__}") from None
        event = json.loads(raw)
        if self.trace is not None:
            self.trace("received", event)
        return event

    def _note(self, event: dict) -> bool:
        """Keep what an event says about the session whenever it comes (the committed item, input
        transcripts by item, rate limits); True when that is all the event is."""
        kind = event.get("type", "")
        if kind == "input_audio_buffer.committed":
            self._committed, self._awaiting_commit = event.get("item_id"), False
        elif kind in (TRANSCRIPT_DONE, TRANSCRIPT_FAILED) and event.get("item_id"):
            self._transcripts[event["item_id"]] = event.get("transcript") if kind == TRANSCRIPT_DONE else None
            if kind == TRANSCRIPT_DONE:
                self._transcribed[event["item_id"]] = openai_transcription_usage(
                    event.get("usage"), TRANSCRIBE_MODEL_ID
                )
        elif kind == "rate_limits.updated":
            spent = [
                limit.get("reset_seconds")
                for limit in event.get("rate_limits") or []
                if isinstance(limit, dict) and limit.get("remaining") == 0
            ]
            self._limit_reset_s = max((float(s) for s in spent if isinstance(s, (int, float))), default=None)
        else:
            return False
        return True

    def _api_error(self, error: dict, where: str, usage: Usage | None = None) -> Exception:
        """An API error (an `error` event's, or a failed response's `status_details.error`) as the
        exception the retry policy reads: retryable, a model that does not exist, or final. A
        retryable one carries what the failed response was billed (`usage`), so the turn records it."""
        code, kind = error.get("code"), error.get("type")
        message = f"{self.model_id}: {where}{code or kind}: {error.get('message')}"
        if code in MODEL_MISSING_CODES:
            return ModelNotFoundError(self.model_id, str(error.get("message") or code))
        if code in RETRYABLE_CODES or kind in RETRYABLE_TYPES:
            wait = WAIT_IN.search(str(error.get("message") or ""))
            retry_after = (
                float(wait.group(1)) / (1000 if wait.group(2).lower() == "ms" else 1)
                if wait
                else self._limit_reset_s
                if code == "rate_limit_exceeded"
                else None
            )
            return RetryableError(
                message,
                retry_after=retry_after,
                same_session=code in SAME_SESSION_CODES or kind in RETRYABLE_TYPES,
                usage=usage,
            )
        return RealtimeError(message)

    async def _read_response(self, on_delta, on_audio) -> Reply:
        started = time.monotonic()
        item_id = None
        text: list[str] = []
        audio: list[bytes] = []
        first_text = first_audio = None
        while True:
            event = await self._event()
            kind = event.get("type", "")
            if self._note(event):
                continue
            if kind in TEXT_DELTAS or kind in AUDIO_TRANSCRIPT_DELTAS:
                first_text = first_text if first_text is not None else time.monotonic() - started
                text.append(event.get("delta") or "")
                if on_delta is not None:
                    on_delta(event.get("delta") or "")
            elif kind in AUDIO_DELTAS:
                first_audio = first_audio if first_audio is not None else time.monotonic() - started
                audio.append(base64.b64decode(event.get("delta") or ""))
                if on_audio is not None:
                    on_audio(audio[-1])
            elif kind == "response.output_item.added" and (event.get("item") or {}).get("type") == "message":
                item_id = event["item"].get("id")
            elif kind == "error":
                error = event.get("error") or {}
                if error.get("code") == CANCEL_TOO_LATE or str(error.get("event_id")).startswith(TRUNCATE_EVENT):
                    continue  # our cancel crossed the response's end, or a truncation was refused: not this turn's
                raise self._api_error(error, "")
            elif kind == "response.done":
                response = event.get("response") or {}
                status, details = response.get("status"), response.get("status_details") or {}
                if status == "failed":
                    raise self._api_error(
                        details.get("error") or {"type": details.get("type")},
                        "response failed: ",
                        openai_realtime_usage(response.get("usage")),
                    )
                done_s = time.monotonic() - started
                heard = await self._heard()
                return Reply(
                    text="".join(text),
                    model=self.model_id,
                    audio=b"".join(audio),
                    heard=heard,
                    first_token_s=first_text,
                    first_audio_s=first_audio,
                    latency_s=done_s,
                    usage=openai_realtime_usage(response.get("usage")),
                    interrupted=status == "cancelled",
                    item=item_id if audio else None,
                    incomplete=(details.get("reason") or "incomplete") if status == "incomplete" else None,
                    transcription=self._transcription(),
                )

    async def _heard(self) -> str | None:
        """This turn's input transcript, by its committed item: waited for at most TRANSCRIPT_WAIT_S
        (it runs apart from the response); None when it failed, did not come, or no audio was committed."""
        deadline = time.monotonic() + TRANSCRIPT_WAIT_S
        while self._awaiting_commit or (self._committed is not None and self._committed not in self._transcripts):
            left = deadline - time.monotonic()
            event = await self._event(left) if left > 0 else None
            if event is None:
                log.info(
                    "%s: no input transcript for item %s within %.1f s",
                    self.model_id,
                    self._committed,
                    TRANSCRIPT_WAIT_S,
                )
                return None
            self._note(event)
        return self._transcripts.get(self._committed) if self._committed is not None else None

    def _transcription(self) -> TranscriptionUsage | None:
        """What this turn's input transcription was billed (after `_heard`): None when no audio was
        committed; not reported when it failed or did not come in time (its cost is then unknown)."""
        if not self._commit_sent:
            return None
        self._commit_sent = False
        if self._committed is not None and self._committed in self._transcribed:
            return self._transcribed[self._committed]
        return TranscriptionUsage(model=TRANSCRIBE_MODEL_ID, reported=False)

    async def aclose(self) -> None:
        try:
            await self._manager.__aexit__(None, None, None)
        except Exception as exc:  # noqa: BLE001 - a socket that already dropped: closed either way, logged
            log.info("%s: closing the session: %s: %s", self.model_id, type(exc).__name__, exc)
