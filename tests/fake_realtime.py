"""A local conformance server for OpenAI Realtime, speaking its documented
event protocol (../shared/notes/streaming-apis.md, openai-python's realtime
types), driven in tests through the real SDK client; the Gemini Live one is
tests/fake_gemini_live.py. Both share the threaded server here.

It records what it received and checks what the protocol requires (a
session setup first, audio at the API's rate and format, a commit of at
least 100 ms of audio), answers with scripted text (or audio with its
transcript), and can be told to fail: an error event mid-turn, a dropped
connection, and by script (`faults`): every response of a session that was
sent a given text answered with a rate limit, an expired session, a
refusal, a server error, a dropped connection or an empty reply. The
documented behaviour beyond the happy path is switched on by name: input
transcripts that come after the reply or never (`transcripts`), responses
that end `failed` (`fail_every`, `fail_with`) or `incomplete`
(`incomplete_on`), models that do not exist (`models`).

With `word_delay_s` a reply takes that long per word and goes on while the
server reads: `response.cancel` then ends it with status `cancelled` (a
cancel with no response running gets the API's `response_cancel_not_active`
error). The server names each reply's item (`response.output_item.added`)
and takes `conversation.item.truncate` for any of them; an item id it never
gave gets an error carrying the client's `event_id`. Each `response.done`
carries a usage block in the API's shape (`input_token_details` with
`cached_tokens_details`, `output_token_details`) whose counts grow with what
the session was sent (text, images, committed audio) and with the part of
it an earlier response already saw (cached); every block sent is kept in
`usages`, so a test can price the run on its own; each input transcription
carries its own `usage` (`transcription_usage`: "tokens" or "duration", the
two documented shapes), kept in `transcription_usages`.
"""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import threading

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

OPENAI_RATE = 24000
TEST_KEY = "sk-test-never-in-a-record-42"  # the API key tests give the SDKs; it must appear in no output


SILENT_PIECE = b"\x10\x00" * 480  # 20 ms of near silence at 24 kHz


def spoken_pieces(speech: bytes | None, count: int) -> list[bytes]:
    """A spoken reply's audio (PCM16 24 kHz) cut into `count` pieces, one per
    word; without `speech` each piece is 20 ms of near silence."""
    if speech is None:
        return [SILENT_PIECE] * count
    size = -(-len(speech) // (2 * count)) * 2  # whole samples
    return [speech[i * size : (i + 1) * size] for i in range(count)]


async def _until_closed(answer) -> None:
    """An answer sent while the server reads on; a client that leaves mid-answer ends it quietly."""
    try:
        await answer
    except ConnectionClosed:
        pass


class _ThreadedServer:
    """A websockets server on a free loopback port, in its own thread and loop."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None):
        self.ssl_context = ssl_context
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.port = 0
        self.sessions: list[dict] = []  # one record per connection
        self.problems: list[str] = []  # protocol violations seen (a test asserts there are none)

    def __enter__(self):
        self.thread.start()

        async def start():
            return await serve(self._handle, "127.0.0.1", 0, ssl=self.ssl_context, max_size=None)

        self.server = asyncio.run_coroutine_threadsafe(start(), self.loop).result(10)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc):
        self.server.close()
        asyncio.run_coroutine_threadsafe(self.server.wait_closed(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        if not self.thread.is_alive():
            self.loop.close()  # its selector and self-pipe sockets, not left for the garbage collector

    async def _handle(self, ws):
        raise NotImplementedError


# the API's error objects, as documented (openai-python's realtime types; a model_not_found as the
# API sent it in a failed response.done, quoted in openai-realtime-console issue 561), for the scripted faults
SCRIPTED_ERRORS = {
    "rate_limit": {
        "type": "rate_limit_error",
        "code": "rate_limit_exceeded",
        "message": "Rate limit reached for requests per minute. Please try again in 20ms.",
    },
    "session_expired": {
        "type": "invalid_request_error",
        "code": "session_expired",
        "message": "Your session hit the maximum duration of 60 minutes.",
    },
    "refused": {
        "type": "invalid_request_error",
        "code": "invalid_value",
        "message": "The request was declined by the content policy.",
    },
    "server_error": {
        "type": "server_error",
        "code": "server_error",
        "message": "The server had an error while processing your request.",
    },
    "model_not_found": {
        "type": "invalid_request_error",
        "code": "model_not_found",
        "message": "The model `{model}` does not exist or you do not have access to it.",
    },
    "insufficient_quota": {
        "type": "insufficient_quota",
        "code": "insufficient_quota",
        "message": "You exceeded your current quota, please check your plan and billing details.",
    },
}
TRANSCRIBE_USAGE = {  # the two documented shapes of a transcription event's `usage`
    "tokens": lambda ms: {
        "type": "tokens",
        "input_tokens": ms // 100 + 4,
        "output_tokens": ms // 400 + 2,
        "total_tokens": ms // 100 + ms // 400 + 6,
        "input_token_details": {"audio_tokens": ms // 100, "text_tokens": 4},
    },
    "duration": lambda ms: {"type": "duration", "seconds": round(ms / 1000, 3)},
}


class FakeOpenAIRealtime(_ThreadedServer):
    """`/v1/realtime?model=M`: session.update, input_audio_buffer.*, conversation.item.create, response.create."""

    def __init__(
        self,
        *,
        reply="It is the one in your hand now.",
        error_on_response: int | None = None,
        drop_on_responses: tuple[int, ...] = (),
        speech: bytes | None = None,
        word_delay_s: float = 0.0,
        faults: dict[str, str] | None = None,
        transcripts: str = "before",
        transcript_delay_s: float = 0.3,
        transcription_usage: str = "tokens",
        fail_every: int | None = None,
        fail_with: str = "rate_limit",
        incomplete_on: tuple[int, ...] = (),
        models: tuple[str, ...] | None = None,
        failed_usage: bool = False,
        delta_chars: int | None = None,
        error_message: str = "Invalid value: 'x'. Supported values are: 'text' and 'audio'.",
    ):
        super().__init__()
        # the documented behaviour beyond the happy path, as switches:
        # `transcripts`: when a committed item's input transcript comes: "before" the response events,
        # "late" (`transcript_delay_s` after response.done: the API defines no order), or "never";
        # `fail_every`: every Nth response.create (counted over the server) ends in a response.done with
        # status "failed" and `status_details.error` from SCRIPTED_ERRORS[`fail_with`];
        # `incomplete_on`: those responses end "incomplete" (reason max_output_tokens) after two words;
        # `models`: the models that exist; a session for any other gets model_not_found failures;
        # `failed_usage`: a failed response reports (and bills) the input it read, where otherwise it reports
        # zeros (the documents give a failed response.done a `usage` but not what it counts)
        self.failed_usage = failed_usage
        # `delta_chars`: the reply goes out in pieces of that many characters instead of words (a key spelled
        # back a few characters at a time); `error_message`: the message of `error_on_response`'s error event
        self.delta_chars, self.error_message = delta_chars, error_message
        self.transcripts, self.transcript_delay_s = transcripts, transcript_delay_s
        self.transcription_usage = transcription_usage
        self.fail_every, self.fail_with, self.incomplete_on, self.models = fail_every, fail_with, incomplete_on, models
        self.failed = 0  # responses failed by `fail_every`
        self.reply, self.error_on_response, self.drop_on_responses = reply, error_on_response, drop_on_responses
        # a text a session was sent -> how every response.create of such a session is answered: "rate_limit"
        # and "session_expired" (error events the API sends, retryable), "refused" (an invalid_request_error),
        # "server_error", "drop" (the connection closes), "empty" (a completed response with nothing in it)
        self.faults = dict(faults or {})
        self.speech = speech  # PCM16 24 kHz: what a spoken reply sounds like
        self.word_delay_s = word_delay_s
        self.responses = 0
        self.usages: list[dict] = []  # every response.done's usage, as sent
        self.transcription_usages: list[dict] = []  # every input transcription's usage, as sent (or to be sent)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _usage(self, record: dict, words: int, spoken: bool) -> dict:
        """A usage block in the API's shape for what the session holds now: text (the instructions and
        the text parts) about four characters a token, 85 tokens an image, ten a second of committed
        audio; what an earlier response of the session already read counts as cached (text and audio
        in whole blocks of 16 tokens)."""
        parts = [c for item in record["items"] for c in item.get("content", [])]
        told = len(record["session"].get("instructions") or "") + sum(len(c.get("text") or "") for c in parts)
        text = 18 + told // 4 + 4 * len(record["items"]) + self.responses % 5
        image = 85 * sum(c.get("type") == "input_image" for c in parts)
        audio = sum(record["commits"]) * 10 // (2 * OPENAI_RATE)
        seen = record.setdefault("seen", {"text": 0, "audio": 0, "image": 0})
        cached = {
            "text": min(text, seen["text"] // 16 * 16),
            "audio": min(audio, seen["audio"] // 16 * 16),
            "image": min(image, seen["image"]),
        }
        record["seen"] = {"text": text, "audio": audio, "image": image}
        out_text = words + 2
        out_audio = 25 * words if spoken else 0
        usage = {
            "total_tokens": text + image + audio + out_text + out_audio,
            "input_tokens": text + image + audio,
            "output_tokens": out_text + out_audio,
            "input_token_details": {
                "text_tokens": text,
                "audio_tokens": audio,
                "image_tokens": image,
                "cached_tokens": sum(cached.values()),
                "cached_tokens_details": {
                    "text_tokens": cached["text"],
                    "audio_tokens": cached["audio"],
                    "image_tokens": cached["image"],
                },
            },
            "output_token_details": {"text_tokens": out_text, "audio_tokens": out_audio},
        }
        self.usages.append(usage)
        return usage

    async def _send(self, ws, **event):
        await ws.send(json.dumps(event))

    def _transcript(self, item: str, ms: int) -> dict:
        """A committed item's input transcript event, with its usage in the chosen documented shape."""
        usage = TRANSCRIBE_USAGE[self.transcription_usage](ms)
        if self.transcripts != "never":
            self.transcription_usages.append(usage)
        return {
            "type": "conversation.item.input_audio_transcription.completed",
            "event_id": f"event_{item}",
            "item_id": item,
            "content_index": 0,
            "transcript": f"heard {ms} ms of audio",
            "usage": usage,
        }

    async def _send_late(self, ws, record) -> None:
        """The input transcripts held back by `transcripts="late"`, a little after the response ended."""
        late, record["late"] = record["late"], []
        if late:
            await asyncio.sleep(self.transcript_delay_s)
            for event in late:
                await self._send(ws, **event)

    async def _fail(self, ws, record, scripted: str) -> None:
        """A response that ends `failed`, as the API reports rate limits, quota and server errors."""
        error = dict(SCRIPTED_ERRORS[scripted])
        error["message"] = error["message"].replace("{model}", record["model"])
        await self._send(ws, type="response.created", response={"status": "in_progress", "output": []})
        await self._send(
            ws,
            type="response.done",
            response={
                "status": "failed",
                "status_details": {"type": "failed", "error": error},
                "output": [],
                "usage": self._usage(record, 0, False)
                if self.failed_usage
                else {"total_tokens": 0, "input_tokens": 0, "output_tokens": 0},
            },
        )
        asyncio.create_task(_until_closed(self._send_late(ws, record)))

    async def _handle(self, ws):
        request = ws.request
        record = {
            "path": request.path,
            "auth": request.headers.get("Authorization"),
            "events": [],
            "commits": [],
            "items": [],
            "session": None,
            "answering": None,
            "cancel": False,
            "truncations": [],
            "reply_items": [],
            "last_item": None,
            "late": [],
            "sent": [],
        }
        record["model"] = request.path.partition("model=")[2]
        self.sessions.append(record)
        if not (record["auth"] or "").startswith("Bearer "):
            self.problems.append("no bearer token")
        await self._send(ws, type="session.created", session={"type": "realtime"})
        try:
            await self._serve(ws, record)
        except ConnectionClosed:
            pass  # the client left while an answer was going out

    async def _serve(self, ws, record) -> None:
        buffer = b""
        async for raw in ws:
            event = json.loads(raw)
            kind = event.get("type")
            record["events"].append(kind)
            if kind == "session.update":
                record["session"] = event["session"]
                if event["session"].get("type") != "realtime":
                    self.problems.append("session.update without session.type realtime")
                await self._send(ws, type="session.updated", session=event["session"])
            elif record["session"] is None:
                self.problems.append(f"{kind} before session.update")
            elif kind == "input_audio_buffer.append":
                chunk = base64.b64decode(event["audio"])
                if len(chunk) % 2:
                    self.problems.append("audio chunk of odd length")
                buffer += chunk
            elif kind == "input_audio_buffer.commit":
                if len(buffer) < OPENAI_RATE * 2 // 10:  # 100 ms of PCM16
                    await self._send(
                        ws,
                        type="error",
                        error={
                            "type": "invalid_request_error",
                            "code": "input_audio_buffer_commit_empty",
                            "message": "buffer too small",
                        },
                    )
                    continue
                record["commits"].append(len(buffer))
                item = f"item_audio_{len(self.sessions)}_{len(record['commits'])}"
                await self._send(
                    ws, type="input_audio_buffer.committed", item_id=item, previous_item_id=record["last_item"]
                )
                record["last_item"] = item
                heard = self._transcript(item, len(buffer) * 1000 // (2 * OPENAI_RATE))
                if self.transcripts == "before":
                    await self._send(ws, **heard)
                elif self.transcripts == "late":
                    record["late"].append(heard)
                buffer = b""
            elif kind == "conversation.item.create":
                record["items"].append(event["item"])
                await self._send(ws, type="conversation.item.added", item=event["item"])
            elif kind == "response.create":
                self.responses += 1
                await self._send(
                    ws,
                    type="rate_limits.updated",
                    rate_limits=[
                        {"name": "requests", "limit": 1000, "remaining": 999, "reset_seconds": 0.06},
                        {"name": "tokens", "limit": 40000, "remaining": 39000, "reset_seconds": 1.5},
                    ],
                )
                if self.models is not None and record["model"] not in self.models:
                    await self._fail(ws, record, "model_not_found")
                    continue
                if self.fail_every and self.responses % self.fail_every == 0:
                    self.failed += 1
                    await self._fail(ws, record, self.fail_with)
                    continue
                scripted = self._scripted(record)
                if scripted == "drop":
                    await ws.close(1011, "dropped by the test")
                    return
                if scripted in SCRIPTED_ERRORS:
                    await self._send(ws, type="error", error=SCRIPTED_ERRORS[scripted])
                    continue
                if scripted == "empty":
                    await self._send(
                        ws,
                        type="response.done",
                        response={"status": "completed", "usage": self._usage(record, 0, False)},
                    )
                    continue
                if self.responses in self.drop_on_responses:
                    await ws.close(1011, "dropped by the test")
                    return
                if self.error_on_response == self.responses:
                    await self._send(
                        ws,
                        type="error",
                        error={"type": "invalid_request_error", "code": "invalid_value", "message": self.error_message},
                    )
                    continue
                if self.word_delay_s:  # answered while the server goes on reading
                    record["cancel"] = False
                    record["answering"] = asyncio.create_task(_until_closed(self._answer(ws, record)))
                else:
                    await self._answer(ws, record)
            elif kind == "conversation.item.truncate":
                if event.get("item_id") not in record["reply_items"]:
                    await self._send(
                        ws,
                        type="error",
                        error={
                            "type": "invalid_request_error",
                            "code": "item_not_found",
                            "event_id": event.get("event_id"),
                            "message": f"Item {event.get('item_id')!r} not found.",
                        },
                    )
                    continue
                record["truncations"].append((event["item_id"], event["content_index"], event["audio_end_ms"]))
                await self._send(
                    ws,
                    type="conversation.item.truncated",
                    item_id=event["item_id"],
                    content_index=event["content_index"],
                    audio_end_ms=event["audio_end_ms"],
                )
            elif kind == "response.cancel":
                if record["answering"] is not None and not record["answering"].done():
                    record["cancel"] = True
                else:
                    await self._send(
                        ws,
                        type="error",
                        error={
                            "type": "invalid_request_error",
                            "code": "response_cancel_not_active",
                            "message": "There is no active response to cancel.",
                        },
                    )
            else:
                self.problems.append(f"unexpected event {kind}")

    def _scripted(self, record) -> str | None:
        """The fault scripted for this session: the first of `faults` whose text it was sent."""
        sent = " ".join(c.get("text") or "" for item in record["items"] for c in item.get("content", []))
        return next((action for marker, action in self.faults.items() if marker in sent), None)

    async def _answer(self, ws, record):
        spoken = record["session"].get("output_modalities") == ["audio"]
        words = self.reply.split(" ")
        if self.delta_chars:
            words = [self.reply[i : i + self.delta_chars] for i in range(0, len(self.reply), self.delta_chars)]
        cut = self.responses in self.incomplete_on
        if cut:
            words = words[:2]
        audio = spoken_pieces(self.speech, len(words))
        record["reply_items"].append(f"item_reply_{self.responses}")
        await self._send(
            ws,
            type="response.output_item.added",
            item={"id": record["reply_items"][-1], "type": "message", "role": "assistant"},
        )
        for i, word in enumerate(words):
            if record["cancel"]:
                await self._send(
                    ws, type="response.done", response={"status": "cancelled", "usage": self._usage(record, i, spoken)}
                )
                return
            piece = word if i == 0 or self.delta_chars else " " + word
            if spoken:
                await self._send(ws, type="response.output_audio.delta", delta=base64.b64encode(audio[i]).decode())
                await self._send(ws, type="response.output_audio_transcript.delta", delta=piece)
            else:
                await self._send(ws, type="response.output_text.delta", delta=piece)
            await asyncio.sleep(self.word_delay_s)
        await self._send(
            ws,
            type="response.done",
            response={
                "status": "incomplete" if cut else "completed",
                **({"status_details": {"type": "incomplete", "reason": "max_output_tokens"}} if cut else {}),
                "usage": self._usage(record, len(words), spoken),
            },
        )
        asyncio.create_task(_until_closed(self._send_late(ws, record)))
