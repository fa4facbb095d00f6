"""OpenAI Realtime through the `openai` SDK's GA client (`client.realtime.connect`).

Server-side turn detection is off: the caller ends each turn
(`input_audio_buffer.commit` when audio was sent, then `response.create`).
Events are read as JSON so the GA names and the beta names still served by
some endpoints (`response.text.delta`, ...) are both understood. An `error`
event does not close the socket; it fails the turn with the API's message.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import time
from collections.abc import Callable

from benchmark.candidates.base import GenerationConfig
from benchmark.candidates.realtime_base import RealtimeError, RealtimeReply
from benchmark.candidates.retry import RetryableError
from benchmark.candidates.usage import openai_realtime_usage

log = logging.getLogger(__name__)

INPUT_RATE = 24000
TRANSCRIBE_MODEL = "gpt-4o-mini-transcribe"
TEXT_DELTAS = ("response.output_text.delta", "response.text.delta")
AUDIO_DELTAS = ("response.output_audio.delta", "response.audio.delta")
AUDIO_TRANSCRIPT_DELTAS = ("response.output_audio_transcript.delta", "response.audio_transcript.delta")
RETRYABLE_CODES = ("rate_limit_exceeded", "server_error", "session_expired")
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

    @classmethod
    async def open(cls, model: str, model_id: str, system: str, *, base_url: str | None, output: str,
                   config: GenerationConfig) -> "OpenAIRealtimeSession":
        try:
            from openai import AsyncOpenAI
        except ImportError:  # pragma: no cover - openai is a required dependency
            raise RuntimeError("openai-realtime needs the openai package with its realtime extra: "
                               "pip install 'openai[realtime]'") from None
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = os.environ.get("OPENAI_API_KEY") or ("not-needed" if base_url else None)
        if not api_key:
            raise RuntimeError(f"{model_id}: set OPENAI_API_KEY, or --base-url for a local endpoint")
        # the SDK turns an http(s) base URL into ws(s) and appends /realtime?model=...
        client = AsyncOpenAI(api_key=api_key, base_url=base_url, max_retries=0)
        manager = client.realtime.connect(model=model)
        try:
            connection = await manager.__aenter__()
        except Exception as exc:
            raise RetryableError(f"{model_id}: cannot connect: {type(exc).__name__}") from None
        session = cls(connection, manager, model_id, output)
        await connection.send({"type": "session.update", "session": {
            "type": "realtime", "output_modalities": [output], "instructions": system,
            "max_output_tokens": config.max_tokens,
            "audio": {"input": {"format": {"type": "audio/pcm", "rate": INPUT_RATE}, "turn_detection": None,
                                "transcription": {"model": TRANSCRIBE_MODEL}}}}})
        return session

    async def _send_event(self, event: dict) -> None:
        try:
            await self.connection.send(event)
        except Exception as exc:  # the socket closed under us
            raise RetryableError(f"{self.model_id}: connection lost: {type(exc).__name__}") from None

    async def send_audio(self, pcm16: bytes) -> None:
        if pcm16:
            await self._send_event({"type": "input_audio_buffer.append",
                                        "audio": base64.b64encode(pcm16).decode("ascii")})
            self._audio_sent = True

    async def send_user(self, text: str | None, images: tuple[bytes, ...] = ()) -> None:
        content = [{"type": "input_image", "image_url": "data:image/jpeg;base64," + base64.b64encode(i).decode()}
                   for i in images]
        if text:
            content.append({"type": "input_text", "text": text})
        if content:
            await self._send_event({"type": "conversation.item.create",
                                        "item": {"type": "message", "role": "user", "content": content}})

    async def send_assistant(self, text: str) -> None:
        await self._send_event({"type": "conversation.item.create", "item": {
            "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}})

    async def respond(self, *, audio_turn: bool, on_delta: Callable[[str], None] | None = None,
                      on_audio: Callable[[bytes], None] | None = None) -> RealtimeReply:
        if audio_turn and self._audio_sent:
            await self._send_event({"type": "input_audio_buffer.commit"})
            self._audio_sent = False
        await self._send_event({"type": "response.create"})
        self._responding = True
        try:
            return await self._read_response(on_delta, on_audio)
        finally:
            self._responding = False

    async def interrupt(self) -> None:
        """`response.cancel`: the API stops and ends the response with status `cancelled`."""
        if self._responding:
            await self._send_event({"type": "response.cancel"})

    async def truncate(self, item: str, played_ms: int) -> None:
        """`conversation.item.truncate` of a spoken reply (its `RealtimeReply.item`) at
        `played_ms`: the API drops the unheard audio and its transcript from the conversation."""
        self._truncations += 1
        await self._send_event({"type": "conversation.item.truncate",
                                "event_id": f"{TRUNCATE_EVENT}{self._truncations}", "item_id": item,
                                "content_index": 0, "audio_end_ms": played_ms})

    async def _read_response(self, on_delta, on_audio) -> RealtimeReply:
        started = time.monotonic()
        item_id = None
        text: list[str] = []
        audio: list[bytes] = []
        heard = first_text = first_audio = None
        while True:
            try:
                event = json.loads(await self.connection.recv_bytes())
            except Exception as exc:  # the socket closed under us
                raise RetryableError(f"{self.model_id}: connection lost: {type(exc).__name__}") from None
            kind = event.get("type", "")
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
            elif kind == "conversation.item.input_audio_transcription.completed":
                heard = event.get("transcript")
            elif kind == "response.output_item.added" and (event.get("item") or {}).get("type") == "message":
                item_id = event["item"].get("id")
            elif kind == "error":
                error = event.get("error") or {}
                if error.get("code") == CANCEL_TOO_LATE or str(error.get("event_id")).startswith(TRUNCATE_EVENT):
                    continue  # our cancel crossed the response's end, or a truncation was refused: not this turn's
                message = f"{self.model_id}: {error.get('code') or error.get('type')}: {error.get('message')}"
                if error.get("code") in RETRYABLE_CODES:
                    raise RetryableError(message)
                raise RealtimeError(message)
            elif kind == "response.done":
                response = event.get("response") or {}
                if response.get("status") == "failed":
                    raise RealtimeError(f"{self.model_id}: response failed: {response.get('status_details')}")
                return RealtimeReply("".join(text), b"".join(audio), heard, first_text, first_audio,
                                     time.monotonic() - started, openai_realtime_usage(response.get("usage")),
                                     interrupted=response.get("status") == "cancelled",
                                     item=item_id if audio else None)

    async def aclose(self) -> None:
        try:
            await self._manager.__aexit__(None, None, None)
        except Exception as exc:  # noqa: BLE001 - a socket that already dropped: closed either way, logged
            log.info("%s: closing the session: %s: %s", self.model_id, type(exc).__name__, exc)
