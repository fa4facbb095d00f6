"""A local conformance server for Gemini Live (`BidiGenerateContent` over TLS),
written from the API's documents (../shared/notes/streaming-apis.md, the Live
API's session-management page, google-genai's live types) and driven in tests
through the real SDK.

It records what it received and checks what the protocol requires (a setup
first, one kind of input per realtime message, activities that start before
they end), answers each turn with scripted text (or audio with its
transcript), and has the documented behaviours beyond the happy path as
switches:

- `refuse_text`: a model that replies in audio only closes a TEXT setup;
- `models`: the model names that exist; a setup for any other is closed
  with a "not found" reason (close code 1008);
- `session_limit_s`: a session that holds video and more than that many
  seconds of audio ends unless its setup asked for context window
  compression (the API documents about 2 minutes of audio and video, a
  limit of its context window; the close code and reason here are ours);
- `reset_after_s`: each connection is announced to end with a `goAway`
  (`timeLeft` of `go_away_left_s`) that long after it opened, then closed
  (the API documents about 10 minutes, with the goAway about a minute first);
- `go_away_on_turn`, `drop_on_turn`: one turn's reply carries a goAway (the
  close follows), or the connection drops when that turn is asked.

Session resumption: after every completed reply (a resumable point) the
server sends `sessionResumptionUpdate` with a new handle naming the state so
far: the turns answered and the audio and frames the conversation holds. A
connection set up with a handle starts from that state (the session limit
spans connections); input sent again after a
resume that the state already holds would show as a turn heard twice.

With `word_delay_s` a reply takes that long per word and goes on while the
server reads; an `activityStart` then cuts it off (`interrupted`, then
`turnComplete` with the usage of the words said, no `generationComplete`).
Each turn's `usageMetadata` counts what the connection was sent; every one is
kept in `usages`, and `responses` counts the answers begun.

`answer_every_activity`: every ended activity is answered and billed, also
one whose answer the client does not wait for (it closes the connection
first): the real service may go on and bill a reply nobody reads. Its usage
goes into `usages` all the same. Off, a close stops such an answer unbilled.
"""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import subprocess
import threading
from pathlib import Path

from websockets.exceptions import ConnectionClosed

from tests.fake_realtime import _ThreadedServer, _until_closed, spoken_pieces

GEMINI_RATE = 16000
# what a resumption handle carries over: the conversation's turns, what it heard (per turn, and every audio
# chunk's first bytes in order), its activities, its clock and whether it has had audio and video
STATE = ("conversation", "history", "heard", "chunks", "activity", "held_audio", "saw_audio", "saw_video")
NOT_FOUND = (
    "models/{model} is not found for API version v1beta, or is not supported for bidiGenerateContent. "
    "Call ListModels to see the list of available models and their supported methods."
)


def self_signed_certificate(directory: Path) -> Path:
    """cert.pem and key.pem for 127.0.0.1 (the Gemini SDK always speaks TLS)."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    return cert


class FakeGeminiLive(_ThreadedServer):
    """`/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent` over TLS."""

    PATH = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"

    def __init__(
        self,
        cert_dir: Path,
        *,
        reply="It is the one in your hand now.",
        refuse_text=False,
        drop_on_turn: int | None = None,
        speech: bytes | None = None,
        go_away_on_turn: int | None = None,
        word_delay_s: float = 0.0,
        models: tuple[str, ...] | None = None,
        session_limit_s: float | None = None,
        reset_after_s: float | None = None,
        go_away_left_s: float = 0.5,
        answer_every_activity: bool = False,
    ):
        cert = self_signed_certificate(cert_dir)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, cert_dir / "key.pem")
        super().__init__(context)
        self.cert = cert
        self.reply, self.refuse_text, self.drop_on_turn = reply, refuse_text, drop_on_turn
        self.speech = speech  # PCM16 24 kHz: what a spoken reply sounds like
        self.go_away_on_turn = go_away_on_turn  # that turn's reply carries a goAway; the close follows
        self.word_delay_s = word_delay_s
        self.models, self.session_limit_s = models, session_limit_s
        self.reset_after_s, self.go_away_left_s = reset_after_s, go_away_left_s
        self.answer_every_activity = answer_every_activity
        self.turns = 0
        self.responses = 0  # answers begun (a turn the test drops is none)
        self.handles: dict[str, dict] = {}  # resumption handle -> the session's state at that point
        self.usages: list[dict] = []  # every usageMetadata sent
        self.limit_closes = 0  # sessions ended by the session limit
        self.resets = 0  # connections announced with a goAway and closed
        self.went_away = threading.Event()  # the connection of `go_away_on_turn` is closed

    def _usage(self, record: dict, words: int, spoken: bool) -> dict:
        """usageMetadata in the API's shape for what the connection was sent: text about four characters a
        token, 32 tokens a second of audio, 258 a frame (reported as VIDEO); the reply's words as text or,
        spoken, 25 audio tokens a word."""
        told = [
            p.get("text") or ""
            for turns in record["client_turns"]
            for turn in turns or []
            for p in turn.get("parts", [])
        ]
        text = 12 + sum(len(t) for t in record["texts"] + told) // 4
        audio = record["audio_bytes"] * 32 // (2 * GEMINI_RATE)
        video = 258 * record["frames"]
        out = 25 * words if spoken else words + 1
        given = [{"modality": m, "tokenCount": n} for m, n in (("TEXT", text), ("AUDIO", audio), ("VIDEO", video)) if n]
        usage = {
            "promptTokenCount": text + audio + video,
            "responseTokenCount": out,
            "totalTokenCount": text + audio + video + out,
            "promptTokensDetails": given,
            "responseTokensDetails": [{"modality": "AUDIO" if spoken else "TEXT", "tokenCount": out}],
        }
        self.usages.append(usage)
        return usage

    def final_states(self) -> list[dict]:
        """Each conversation that answered a turn, as the API holds it at the end: its last connection's
        state. (One left before it answered anything, for a new session sent it all, is not among them.)"""
        last = {record["conversation"]: record for record in self.sessions if record["setup"] is not None}
        return [record for record in last.values() if record["history"]]

    @property
    def base_url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    async def _send(self, ws, message: dict):
        await ws.send(json.dumps(message))

    async def _handle(self, ws):
        request = ws.request
        record = {
            "path": request.path,
            "key": request.headers.get("x-goog-api-key"),
            "setup": None,
            "audio_bytes": 0,
            "turn_audio_bytes": 0,
            "audio_mime": set(),
            "frames": 0,
            "texts": [],
            "activity": [],
            "client_turns": [],
            "history": [],
            "heard": [],
            "resumed_from": None,
            "answering": None,
            "interrupt": False,
            "open": False,
            "saw_audio": False,
            "saw_video": False,
            "held_audio": 0,
            "chunks": [],
            "issued": [],
            "conversation": len(self.sessions),
        }
        self.sessions.append(record)
        if not request.path.startswith(self.PATH):
            self.problems.append(f"wrong path {request.path}")
        setup = json.loads(await ws.recv()).get("setup")
        record["setup"] = setup
        if setup is None:
            self.problems.append("first message is not a setup")
            return
        model = str(setup.get("model", "")).removeprefix("models/")
        if self.models is not None and model not in self.models:
            await ws.close(1008, NOT_FOUND.format(model=model)[:120])  # a close reason holds at most 123 bytes
            return
        modalities = (setup.get("generationConfig") or {}).get("responseModalities")
        if self.refuse_text and modalities == ["TEXT"]:
            await ws.close(1007, "The combination of response modalities (TEXT) is not supported.")
            return
        handle = (setup.get("sessionResumption") or {}).get("handle")
        if handle is not None:
            if handle not in self.handles:
                self.problems.append(f"resumed from an unknown handle {handle}")
                await ws.close(1008, "invalid session resumption handle")
                return
            state = self.handles[handle]
            record.update(
                resumed_from=handle,
                **{key: (list(value) if isinstance(value, list) else value) for key, value in state.items()},
            )
        await self._send(ws, {"setupComplete": {}})
        if self.reset_after_s is not None:
            asyncio.get_running_loop().call_later(
                self.reset_after_s, lambda: asyncio.ensure_future(_until_closed(self._reset(ws)))
            )
        try:
            await self._serve(ws, record, modalities)
        except ConnectionClosed:
            pass  # the client left while an answer was going out

    async def _serve(self, ws, record, modalities) -> None:
        async for raw in ws:
            message = json.loads(raw)
            if await self._over_limit(ws, record):
                return
            if "realtime_input" in message or "realtimeInput" in message:
                body = message.get("realtime_input") or message.get("realtimeInput")
                if len(body) != 1:
                    self.problems.append(f"realtime_input with {len(body)} kinds in one message")
                await self._realtime(ws, record, body, modalities)
            elif "client_content" in message or "clientContent" in message:
                body = message.get("client_content") or message.get("clientContent")
                record["client_turns"].append(body.get("turns"))
                if body.get("turnComplete") or body.get("turn_complete"):
                    await self._answer(ws, record, modalities)
            else:
                self.problems.append(f"unexpected message {sorted(message)}")

    async def _reset(self, ws) -> None:
        """The connection's documented end: a goAway with the time left, then the close."""
        self.resets += 1
        await self._send(ws, {"goAway": {"timeLeft": f"{self.go_away_left_s}s"}})
        await asyncio.sleep(self.go_away_left_s)
        await ws.close(1000, "connection reached its maximum duration")

    async def _go_away(self, ws) -> None:
        await ws.close(1000, "go away")
        self.went_away.set()

    async def _over_limit(self, ws, record) -> bool:
        """A session holding video and more than `session_limit_s` of audio, without compression: ended.
        (The limit is one of context size: input sent again after a resume counts again.)"""
        if (
            self.session_limit_s is None
            or "contextWindowCompression" in record["setup"]
            or not (record["saw_audio"] and record["saw_video"])
            or record["held_audio"] / (2 * GEMINI_RATE) < self.session_limit_s
        ):
            return False
        self.limit_closes += 1
        await ws.close(1011, "session limit: audio and video context exceeded")
        return True

    async def _realtime(self, ws, record, body, modalities):
        if "audio" in body:
            record["audio_mime"].add(body["audio"].get("mime_type") or body["audio"].get("mimeType"))
            size = len(base64.urlsafe_b64decode(body["audio"]["data"]))
            record["audio_bytes"] += size
            record["turn_audio_bytes"] += size
            record["held_audio"] += size
            record["chunks"].append(base64.urlsafe_b64decode(body["audio"]["data"])[:4].hex())
            record["saw_audio"] = True
        elif "video" in body:
            data = base64.urlsafe_b64decode(body["video"]["data"])
            if not data.startswith(b"\xff\xd8"):
                self.problems.append("video part is not a JPEG")
            record["frames"] += 1
            record["saw_video"] = True
        elif "text" in body:
            record["texts"].append(body["text"])
        elif "activityStart" in body or "activity_start" in body:
            record["activity"].append("start")
            if record["open"]:
                self.problems.append("activityStart while an activity is open")
            record["open"] = True
            if record["answering"] is not None and not record["answering"].done():
                record["interrupt"] = True  # the default activity handling: the start cuts the reply off
        elif "activityEnd" in body or "activity_end" in body:
            record["activity"].append("end")
            if not record["open"]:
                self.problems.append("activityEnd with no activity open")
            record["open"] = False
            heard = f"heard {record['turn_audio_bytes'] * 1000 // (2 * GEMINI_RATE)} ms of audio"
            record["heard"].append(heard)
            await self._send(ws, {"serverContent": {"inputTranscription": {"text": heard}}})
            record["turn_audio_bytes"] = 0
            if self.word_delay_s:  # answered while the server goes on reading
                record["interrupt"] = False
                record["answering"] = asyncio.create_task(_until_closed(self._answer(ws, record, modalities)))
            else:
                await self._answer(ws, record, modalities)
        else:
            self.problems.append(f"unexpected realtime input {sorted(body)}")

    async def _answer(self, ws, record, modalities):
        self.turns += 1
        if self.drop_on_turn == self.turns:
            await ws.close(1011, "dropped by the test")
            return
        record["history"].append(self.turns)
        self.responses += 1
        words = self.reply.split(" ")
        spoken = modalities == ["AUDIO"]
        billed: list[dict] = []  # this answer's usage, once reported
        try:
            await self._say(ws, record, words, spoken, billed)
        except ConnectionClosed:
            if self.answer_every_activity and not billed:  # generated and billed although nobody reads it
                self._usage(record, len(words), spoken)
            raise

    async def _say(self, ws, record, words: list[str], spoken: bool, billed: list[dict]):
        if self.go_away_on_turn == self.turns:  # the connection ends a little after this reply
            await self._send(ws, {"goAway": {"timeLeft": "0.3s"}})
            asyncio.get_running_loop().call_later(0.3, lambda: asyncio.ensure_future(self._go_away(ws)))
        pieces = spoken_pieces(self.speech, len(words))
        for i, word in enumerate(words):
            if i:
                await asyncio.sleep(self.word_delay_s)
            if record["interrupt"]:
                await self._send(ws, {"serverContent": {"interrupted": True}})
                billed.append(self._usage(record, i, spoken))
                await self._send(ws, {"serverContent": {"turnComplete": True}, "usageMetadata": billed[0]})
                return
            piece = word if i == 0 else " " + word
            if spoken:
                audio = base64.b64encode(pieces[i]).decode()
                await self._send(
                    ws,
                    {
                        "serverContent": {
                            "modelTurn": {
                                "parts": [{"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": audio}}]
                            },
                            "outputTranscription": {"text": piece},
                        }
                    },
                )
            else:
                await self._send(ws, {"serverContent": {"modelTurn": {"parts": [{"text": piece}]}}})
        await self._send(ws, {"serverContent": {"generationComplete": True}})
        if "sessionResumption" in record["setup"]:  # the conversation so far can be resumed from here
            handle = f"handle-{len(self.handles) + 1}"
            self.handles[handle] = {
                key: (list(record[key]) if isinstance(record[key], list) else record[key]) for key in STATE
            }
            record["issued"].append(handle)
            await self._send(ws, {"sessionResumptionUpdate": {"newHandle": handle, "resumable": True}})
        billed.append(self._usage(record, len(words), spoken))
        await self._send(ws, {"serverContent": {"turnComplete": True}, "usageMetadata": billed[0]})
