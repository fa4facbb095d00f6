"""The streaming server: a FastAPI app with `/healthz` and the WebSocket
endpoint `/v1/session`, one `Session` per connection.

Shared by all sessions: one Whisper model, one VAD model, and one opened
`Candidate` per backend model id (opened on first use, closed on shutdown).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections import deque
from dataclasses import dataclass

from fastapi import FastAPI, WebSocket, WebSocketDisconnect

from streaming import wire


@dataclass
class ServerSettings:
    token: str | None = None  # required in hello when set
    asr_model: str | None = None
    describer_base_url: str | None = None
    backend_base_url: str | None = None


class Backends:
    """Opened candidates by model id, shared across sessions."""

    def __init__(self, base_url: str | None):
        self.base_url = base_url
        self._open: dict[str, object] = {}
        self._stack = contextlib.AsyncExitStack()
        self._lock = asyncio.Lock()

    async def get(self, model_id: str):
        from benchmark.candidates import open_candidate

        async with self._lock:
            if model_id not in self._open:
                self._open[model_id] = await self._stack.enter_async_context(
                    open_candidate(model_id, base_url=self.base_url))
            return self._open[model_id]

    async def close(self) -> None:
        await self._stack.aclose()
        self._open.clear()


class RateWindow:
    """Counts over the last second of wall time."""

    def __init__(self):
        self.events: deque[tuple[float, int]] = deque()

    def add(self, amount: int) -> int:
        now = time.monotonic()
        self.events.append((now, amount))
        while self.events and self.events[0][0] < now - 1.0:
            self.events.popleft()
        return sum(a for _, a in self.events)


def create_app(settings: ServerSettings | None = None) -> FastAPI:
    settings = settings or ServerSettings()
    state: dict = {}

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        from perception.asr import Transcriber
        from perception.speech import VoiceActivity

        state["transcriber"] = Transcriber(settings.asr_model)
        state["vad"] = VoiceActivity()
        state["backends"] = Backends(settings.backend_base_url)
        state["sessions"] = 0
        try:
            yield
        finally:
            await state["backends"].close()

    app = FastAPI(title="wearsim streaming server", lifespan=lifespan)

    @app.get("/healthz")
    async def healthz():
        return {"ok": True, "protocol": wire.PROTOCOL_VERSION, "sessions": state.get("sessions", 0)}

    @app.websocket("/v1/session")
    async def session_endpoint(websocket: WebSocket):
        await websocket.accept()
        send_lock = asyncio.Lock()

        async def send(event: wire.ServerEvent) -> None:
            async with send_lock:
                await websocket.send_text(wire.encode_event(event))

        async def fail(code: str, message: str, close: int | None = None) -> None:
            await send(wire.Error(code, message))
            if close is not None:
                await websocket.close(code=close)

        try:
            first = await asyncio.wait_for(websocket.receive_text(), timeout=30)
            token, config = wire.parse_hello(first)
        except wire.WireError as exc:
            await fail(exc.code, exc.message, wire.CLOSE_BAD_HELLO)
            return
        except (asyncio.TimeoutError, KeyError, RuntimeError):
            await fail("bad_hello", "the first message must be a text hello", wire.CLOSE_BAD_HELLO)
            return
        except WebSocketDisconnect:
            return
        if settings.token and not (isinstance(token, str) and secrets.compare_digest(token, settings.token)):
            await fail("unauthenticated", "missing or wrong token", wire.CLOSE_UNAUTHENTICATED)
            return
        try:
            session = await _open_session(config, send)
        except Exception as exc:  # backend or describer could not start
            await fail("backend_unavailable", f"{type(exc).__name__}: {exc}"[:300], wire.CLOSE_BAD_HELLO)
            return
        state["sessions"] += 1
        await send(wire.Ready(wire.PROTOCOL_VERSION, config.backend))
        violations = 0
        audio_rate, frame_rate = RateWindow(), RateWindow()
        try:
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                try:
                    if message.get("bytes") is not None:
                        media = wire.decode_media(message["bytes"])
                        if media.kind == wire.KIND_AUDIO:
                            if audio_rate.add(len(media.payload)) > wire.MAX_AUDIO_BYTES_PER_S:
                                raise wire.WireError("audio_rate", "audio arrives faster than 20x real time")
                        elif frame_rate.add(1) > wire.MAX_FRAMES_PER_S:
                            raise wire.WireError("frame_rate", f"more than {wire.MAX_FRAMES_PER_S} frames per second")
                        await session.on_media(media)
                    else:
                        control = wire.decode_message(message.get("text") or "", allowed=("turn.end", "session.end"))
                        if control["type"] == "session.end":
                            await websocket.close(code=wire.CLOSE_NORMAL)
                            break
                        await session.on_turn_end()
                except wire.WireError as exc:
                    violations += 1
                    if violations >= wire.MAX_VIOLATIONS:
                        await fail(exc.code, f"{exc.message}; closing after {violations} violations",
                                   wire.CLOSE_LIMITS)
                        break
                    await fail(exc.code, exc.message)
        except WebSocketDisconnect:
            pass
        except Exception as exc:  # the backend (or perception) failed mid-turn: say so, then close
            await fail("backend_error", f"{type(exc).__name__}: {exc}"[:300], wire.CLOSE_BACKEND_ERROR)
        finally:
            state["sessions"] -= 1
            await session.aclose()

    async def _open_session(config: wire.SessionConfig, send):
        from perception.describers import make_describer
        from perception.speech import SpeechSegmenter
        from streaming.session import Session

        segmenter = SpeechSegmenter(state["transcriber"], silence_ms=config.silence_ms, partials=config.partials,
                                    vad=state["vad"])
        from benchmark.candidates.base import GenerationConfig
        from benchmark.candidates.factory import is_realtime
        from streaming.backends import ChatBackend, RealtimeBackend

        describer = make_describer(config.describer, base_url=settings.describer_base_url)
        generation = GenerationConfig(temperature=config.temperature, max_tokens=config.max_tokens)
        if is_realtime(config.backend):  # one live API session per glasses session
            backend = await RealtimeBackend.open(config.backend, config.system_prompt, generation,
                                                 base_url=settings.backend_base_url)
        else:  # one chat candidate shared by every session
            backend = ChatBackend(await state["backends"].get(config.backend), config.system_prompt, generation)
        return Session(config, segmenter, describer, backend, send)

    return app
