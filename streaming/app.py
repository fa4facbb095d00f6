"""The streaming server: a FastAPI app with `/healthz` and the WebSocket
endpoint `/v1/session`, one `Session` per connection.

Shared by all sessions: one Whisper model, one VAD model, one byte budget
for buffered frames, and one opened `Candidate` per backend model id (opened
on first use, at most `max_open_backends`, closed on shutdown). Only the
backend ids the server was configured with are accepted from a hello.

Each connection runs three tasks: the reader (this module: it takes every
message as soon as it arrives, so keepalive pings are always answered,
measures the rate limits at arrival and hands the message to the session),
the session's worker (`streaming.session`), and an idle watchdog. The first
to end ends the connection. Every error text is scrubbed of configured
secrets before it is sent or logged (`streaming.server_settings.scrub`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from fastapi import FastAPI, WebSocket

from core.token_bucket import TokenBucket
from streaming import wire
from streaming.client_messages import CONTROL_TYPES, ReplyCut, SessionEnd, TurnEnd, WatchEnd, decode_client_message
from streaming.memory import Trimmer, fix_mmap_threshold
from streaming.probe_pace import ProbePace
from streaming.server_settings import ServerSettings, backend_refusal, scrub
from streaming.server_state import BackendLimit, Backends, ServerState

if TYPE_CHECKING:
    import numpy as np

    from streaming.session import Session

log = logging.getLogger("wearsim.server")


def camera_conditions(name: str | None):
    """The shipped impairment profile a hello's `camera_conditions` names (its video impairments
    degrade the frames the server gets), or None; an unknown name is `bad_hello`."""
    if not name:
        return None
    from media_effects.impairment_profiles import load_profiles

    profiles = load_profiles()
    if name not in profiles:
        raise wire.WireError(
            "bad_hello",
            f"camera_conditions must name a shipped impairment profile ({', '.join(profiles)}), got {name[:40]!r}",
        )
    return profiles[name]


class ClientGone(Exception):
    """The client left, or took no event for `send_timeout_s`."""


def create_app(settings: ServerSettings | None = None) -> FastAPI:
    settings = settings or ServerSettings()
    state = ServerState()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        from media_effects.frames import FrameBudget
        from perception.asr import Transcriber
        from perception.speech import VoiceActivity

        state.transcriber = Transcriber(settings.asr_model)
        state.vad = VoiceActivity()
        state.frame_budget = FrameBudget(settings.frame_bytes_total)
        state.probe_pace = ProbePace(
            settings.probe_rate, settings.probe_min_gap_s, hold_turns=settings.probe_hold_turns
        )
        max_open = max(settings.max_open_backends, len(settings.allowed_backends or ()))
        state.backends = backends = Backends(settings.backend_base_url, max_open)
        # vision-model describers, each opened once for the server's life and shared by every session
        state.describer_models = describers = Backends(
            settings.describer_base_url, max(1, len(settings.allowed_describers))
        )
        fix_mmap_threshold()  # a large frame's memory is unmapped when freed, not kept in an arena
        state.trimmer = trimmer = Trimmer()  # and what arenas kept goes back to the system after sessions close
        try:
            yield
        finally:
            trimmer.cancel()
            try:
                await backends.close()
            finally:
                await describers.close()

    # no /docs, /redoc or /openapi.json: nothing a page on another origin could use to learn the API
    app = FastAPI(title="wearsim streaming server", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.settings = settings
    from streaming.origin import OriginCheck

    app.add_middleware(
        OriginCheck,
        allowed_origins=settings.allowed_origins,
        allowed_hosts=settings.allowed_hosts,
        token_required=bool(settings.token),
    )

    @app.get("/healthz")
    async def healthz():
        budget = state.frame_budget
        return {
            "ok": True,
            "protocol": wire.PROTOCOL_VERSION,
            "sessions": state.sessions,
            "frame_bytes": budget.used if budget is not None else 0,
        }

    @app.websocket("/v1/session")
    async def session_endpoint(websocket: WebSocket):
        await websocket.accept()
        await Connection(websocket, settings, state).serve()

    from candidates.providers import bundled_model_id
    from streaming.web_routes import add_web_routes

    add_web_routes(
        app,
        token=settings.token,
        backends=settings.allowed_backends or (bundled_model_id(),),
        describers=settings.allowed_describers,
        record_dir=settings.record_dir,
    )
    return app


class Connection:
    def __init__(self, websocket: WebSocket, settings: ServerSettings, state: ServerState):
        self.websocket, self.settings, self.state = websocket, settings, state
        self.send_lock = asyncio.Lock()
        self.last_heard = time.monotonic()
        self.session: Session | None = None

    async def send(self, event: wire.ServerEvent) -> None:
        try:
            async with self.send_lock:
                await asyncio.wait_for(self.websocket.send_text(wire.encode_event(event)), self.settings.send_timeout_s)
        except Exception as exc:  # closed, disconnected, or not reading
            raise ClientGone(type(exc).__name__) from None

    async def fail(self, code: str, message: str, close: int | None = None) -> None:
        message = scrub(message, self.settings)[:500]
        if code in ("backend_error", "backend_unavailable", "internal_error"):
            log.warning("session error %s: %s", code, message)
        with contextlib.suppress(ClientGone):
            await self.send(wire.Error(code=code, message=message))
        if close is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.websocket.close(code=close), self.settings.send_timeout_s)

    async def serve(self) -> None:
        state, settings = self.state, self.settings
        if state.pending >= settings.max_pending_hellos:
            await self.fail(
                "server_busy", "too many connections are waiting to say hello; try again later", wire.CLOSE_BUSY
            )
            return
        state.pending += 1
        try:
            config = await self._hello()
        finally:
            state.pending -= 1
        if config is None:
            return
        if state.sessions >= settings.max_sessions:
            await self.fail(
                "server_busy",
                f"the server holds its maximum of {settings.max_sessions} sessions; try again later",
                wire.CLOSE_BUSY,
            )
            return
        state.sessions += 1
        try:
            await self._run(config)
        finally:
            state.sessions -= 1
            if state.trimmer is not None:
                state.trimmer.session_closed()

    async def _hello(self) -> wire.SessionConfig | None:
        """The checked session config, or None after refusing the hello (error event and close)."""
        try:
            first = await asyncio.wait_for(self.websocket.receive(), self.settings.hello_timeout_s)
        except TimeoutError:
            await self.fail("bad_hello", f"no hello within {self.settings.hello_timeout_s:.0f} s", wire.CLOSE_BAD_HELLO)
            return None
        except Exception:  # the connection went away while we waited
            return None
        if first["type"] == "websocket.disconnect":
            return None
        if first.get("text") is None:
            await self.fail("bad_hello", "the first message must be a text hello", wire.CLOSE_BAD_HELLO)
            return None
        try:
            token, raw = wire.read_hello(first["text"])
            if self.settings.token and not (
                token is not None
                and secrets.compare_digest(
                    token.encode("utf-8", "surrogatepass"), self.settings.token.encode("utf-8", "surrogatepass")
                )
            ):
                await self.fail("unauthenticated", "missing or wrong token", wire.CLOSE_UNAUTHENTICATED)
                return None
            config = wire.SessionConfig.from_dict(raw)
        except wire.WireError as exc:
            await self.fail(exc.code, exc.message, wire.CLOSE_BAD_HELLO)
            return None
        except Exception as exc:  # nothing a client sends may drop the connection without an answer
            log.warning("unexpected error reading a hello: %s", scrub(repr(exc), self.settings)[:300])
            await self.fail("bad_hello", "the hello could not be read", wire.CLOSE_BAD_HELLO)
            return None
        refusal = backend_refusal(config.backend, self.settings.allowed_backends)
        if refusal:
            await self.fail("backend_not_allowed", refusal, wire.CLOSE_BAD_HELLO)
            return None
        if config.describer not in self.settings.allowed_describers:
            await self.fail(
                "describer_not_allowed",
                f"describer {config.describer[:80]!r} is not offered by this "
                f"server; allowed: {', '.join(self.settings.allowed_describers)}",
                wire.CLOSE_BAD_HELLO,
            )
            return None
        return config

    async def _run(self, config: wire.SessionConfig) -> None:
        try:
            self.session = session = await self._open_session(config)
        except BackendLimit as exc:
            await self.fail("backend_not_allowed", str(exc), wire.CLOSE_BAD_HELLO)
            return
        except wire.WireError as exc:
            await self.fail(exc.code, exc.message, wire.CLOSE_BAD_HELLO)
            return
        except Exception as exc:  # backend or describer could not start
            await self.fail("backend_unavailable", f"{type(exc).__name__}: {exc}", wire.CLOSE_BAD_HELLO)
            return
        tasks: dict[asyncio.Task, str] = {}
        try:
            await self.send(wire.Ready(protocol=wire.PROTOCOL_VERSION, backend=config.backend))
            self.last_heard = time.monotonic()
            tasks = {
                asyncio.create_task(self._read(session), name="reader"): "reader",
                asyncio.create_task(session.run(), name="worker"): "worker",
                asyncio.create_task(self._watch_idle(session), name="idle"): "idle",
            }
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if not task.cancelled() and (failure := task.exception()) is not None:
                    await self._failed(tasks[task], failure)
        except ClientGone:
            pass
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            try:
                await session.aclose()
            except Exception as exc:
                log.warning("closing a session failed: %s", scrub(repr(exc), self.settings)[:300])

    async def _failed(self, where: str, exc: BaseException) -> None:
        if isinstance(exc, ClientGone):
            return
        if where == "worker":  # the backend (or perception) failed mid-turn: say so, then close
            await self.fail("backend_error", f"{type(exc).__name__}: {exc}", wire.CLOSE_BACKEND_ERROR)
        else:
            log.warning("%s failed: %s", where, scrub(repr(exc), self.settings)[:300])
            await self.fail("internal_error", "the server failed on this session", wire.CLOSE_BACKEND_ERROR)

    async def _watch_idle(self, session: Session) -> None:
        """Close the session after `idle_timeout_s` with nothing from the client and nothing in flight."""
        timeout = self.settings.idle_timeout_s
        while True:
            if session.busy:
                self.last_heard = time.monotonic()
            remaining = self.last_heard + timeout - time.monotonic()
            if remaining <= 0:
                await self.fail("idle_timeout", f"nothing from the client for {timeout:.0f} s", wire.CLOSE_IDLE)
                return
            await asyncio.sleep(min(remaining, 1.0) if session.busy else remaining)

    async def _read(self, session: Session) -> None:
        """Take each message as it arrives; limits are measured here, at arrival."""
        violations = 0
        audio_rate = TokenBucket(wire.MAX_AUDIO_BYTES_PER_S, wire.MAX_AUDIO_BYTES_PER_S * wire.AUDIO_BURST_S)
        frame_rate = TokenBucket(wire.MAX_FRAMES_PER_S, wire.MAX_FRAMES_PER_S)
        while True:
            message = await self.websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            now = self.last_heard = time.monotonic()
            try:
                if message.get("bytes") is not None:
                    media = wire.decode_media(message["bytes"])
                    if media.kind == wire.KIND_AUDIO:
                        # while the server is behind, flow control (not the client) sets the pace: not charged
                        if not session.behind and not audio_rate.try_take(len(media.payload), now):
                            raise wire.WireError("audio_rate", "audio arrives faster than 20x real time")
                    elif not frame_rate.try_take(1, now):
                        raise wire.WireError("frame_rate", f"more than {wire.MAX_FRAMES_PER_S} frames per second")
                    await session.on_media(media)
                else:
                    match decode_client_message(message.get("text") or "", allowed=CONTROL_TYPES):
                        case SessionEnd():
                            with contextlib.suppress(Exception):
                                await asyncio.wait_for(
                                    self.websocket.close(code=wire.CLOSE_NORMAL), self.settings.send_timeout_s
                                )
                            return
                        case ReplyCut(turn=turn, played_ms=played_ms):
                            await session.on_reply_cut(turn, played_ms)
                        case WatchEnd():
                            await session.on_watch_end()
                        case TurnEnd():
                            await session.on_turn_end()
            except wire.WireError as exc:
                code, text = exc.code, exc.message
            except Exception as exc:  # a message must never drop the session without an answer
                log.warning("unexpected error on a client message: %s", scrub(repr(exc), self.settings)[:300])
                code, text = "bad_message", "the message could not be read"
            else:
                continue
            violations += 1
            if violations >= wire.MAX_VIOLATIONS:
                await self.fail(code, f"{text}; closing after {violations} violations", wire.CLOSE_LIMITS)
                return
            await self.fail(code, text)

    async def _open_session(self, config: wire.SessionConfig) -> Session:
        from candidates.model_ids import is_realtime, output_problem
        from core.candidate import GenerationConfig
        from media_effects.frames import FrameBuffer
        from perception.describers import make_describer, needs_model
        from perception.speech import SpeechSegmenter
        from streaming.backends import Backend, ChatBackend, RealtimeBackend
        from streaming.session import Session

        state, settings = self.state, self.settings
        if (
            state.transcriber is None
            or state.vad is None
            or state.describer_models is None
            or state.backends is None
            or state.frame_budget is None
            or state.probe_pace is None
        ):
            raise RuntimeError("the server has not started: its shared models are not loaded")
        turn_model = None
        if config.end_of_turn == "model":  # loaded once, at the first session that asks for it
            from perception.turn_end import shared_model

            try:
                turn_model = await asyncio.to_thread(shared_model)
            except RuntimeError as exc:
                raise wire.WireError("bad_hello", f"{exc}; or say end_of_turn: silence") from None
        text_turn: Callable[[str, np.ndarray], bool] | None = None
        if config.end_of_turn == "text":
            if is_realtime(config.backend):
                raise wire.WireError(
                    "bad_hello", "end_of_turn 'text' is for chat models; a realtime API ends turns itself"
                )
            from perception.turn_text import ends_the_turn as text_turn
        segmenter = SpeechSegmenter(
            state.transcriber,
            silence_ms=config.silence_ms,
            partials=config.partials,
            vad=state.vad,
            turn_model=turn_model,
            text_turn=text_turn,
        )
        model = await state.describer_models.get(config.describer) if needs_model(config.describer) else None
        describer = make_describer(config.describer, model=model)
        generation = GenerationConfig(temperature=config.temperature, max_tokens=config.max_tokens)
        problem = output_problem(config.backend, config.output)
        if problem:
            raise wire.WireError("bad_hello", f"output {config.output!r} {problem}")
        system = config.system_prompt
        if config.proactive:  # when to speak unasked, and the silence marker
            from core.records import PROACTIVE_INSTRUCTION

            system = f"{system}\n\n{PROACTIVE_INSTRUCTION}".strip()
        backend: Backend
        if is_realtime(config.backend):  # one live API session per glasses session
            backend = await RealtimeBackend.open(
                config.backend, system, generation, base_url=settings.backend_base_url, output=config.output
            )
        else:  # one chat candidate shared by every session
            backend = ChatBackend(await state.backends.get(config.backend), system, generation, describer)
        frames = FrameBuffer(max_bytes=settings.frame_bytes_per_session, budget=state.frame_budget)
        policy = config.frame_policy or settings.frame_policy  # neither: the backend's default
        return Session(
            config,
            segmenter,
            backend,
            self.send,
            frames=frames,
            policy=policy,
            camera_profile=camera_conditions(config.camera_conditions),
            pace=state.probe_pace,
        )
