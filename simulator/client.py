"""The simulated glasses' WebSocket client: sends a timeline, paced, and
collects the server's typed events by turn.

However fast the pacing (`--fast` sends without waiting), the client keeps
within the server's documented rate limits (`streaming.wire`): a governor
holds audio and frames to 95% of them, so an unpaced run is never closed
for its rate."""

from __future__ import annotations

import asyncio
import base64
import json
import random
import time
from dataclasses import dataclass

import websockets
from websockets.asyncio.client import ClientConnection

from core.records import TurnInput
from core.token_bucket import TokenBucket
from simulator.pacing import Pacer
from simulator.timeline import TurnPlan
from simulator.watch_timeline import WatchPlan
from streaming import wire
from streaming.client_messages import Hello, SessionEnd, TurnEnd, WatchEnd, encode_client_message


class ServerError(RuntimeError):
    pass


SHARE_OF_LIMITS = 0.95


@dataclass(frozen=True, kw_only=True)
class Delivery:
    """What the uplink did to one turn's sends: the stream times of the audio chunks and
    frames it lost (never sent), and the mean delay of the rest (None without an uplink)."""

    lost_audio_ms: tuple[int, ...] = ()
    lost_frames_ms: tuple[int, ...] = ()
    mean_delay_ms: float | None = None
    frames_played: int = 0  # the turn's frames, lost ones included


@dataclass(frozen=True, kw_only=True)
class TurnEvents:
    """What the server said about one finished turn."""

    input: TurnInput
    done: wire.AssistantDone
    metrics: wire.Metrics


class GlassesClient:
    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        on_event=None,
        drop_frames: float = 0.0,
        seed: int | None = None,
        ping_interval: float | None = 20.0,
        ping_timeout: float | None = 20.0,
    ):
        self.url = url.rstrip("/")
        if not self.url.endswith("/v1/session"):
            self.url += "/v1/session"
        self.token = token
        self.ping_interval, self.ping_timeout = ping_interval, ping_timeout  # keepalive, as websockets does
        self.on_event = on_event
        self.drop_frames = drop_frames
        self.random = random.Random(seed)
        self.events: list[tuple[float, wire.ServerEvent]] = []  # (arrival time, event), for the session log
        self._turn_done: dict[int, asyncio.Event] = {}
        self._watch_done = asyncio.Event()  # a proactive session's `watch.done` came (or the connection ended)
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task | None = None
        self._failure: str | None = None
        # the governor: each send waits for its bucket, so the server's limits are never reached
        self._audio_rate = TokenBucket(
            wire.MAX_AUDIO_BYTES_PER_S * SHARE_OF_LIMITS, wire.MAX_AUDIO_BYTES_PER_S * SHARE_OF_LIMITS / 2
        )
        self._frame_rate = TokenBucket(wire.MAX_FRAMES_PER_S * SHARE_OF_LIMITS, wire.MAX_FRAMES_PER_S / 2)

    @property
    def _socket(self) -> ClientConnection:
        """The open connection; using the client before `connect` is a programming error, said plainly."""
        if self._ws is None:
            raise ServerError("the glasses are not connected: connect() first")
        return self._ws

    async def connect(self, config: wire.SessionConfig, timeout: float = 300.0) -> wire.Ready:
        self._ws = await websockets.connect(
            self.url,
            max_size=wire.MAX_MESSAGE_BYTES,
            open_timeout=60,
            ping_interval=self.ping_interval,
            ping_timeout=self.ping_timeout,
        )
        await self._socket.send(encode_client_message(Hello(token=self.token, config=config)))
        ready = wire.decode_event(await asyncio.wait_for(self._socket.recv(), timeout))
        self._record(ready)
        if not isinstance(ready, wire.Ready):
            detail = f"{ready.code}: {ready.message}" if isinstance(ready, wire.Error) else ready.type
            raise ServerError(f"server refused the session: {detail}")
        self._reader = asyncio.create_task(self._read())
        return ready

    def _record(self, event: wire.ServerEvent) -> None:
        self.events.append((round(time.time(), 3), event))
        if self.on_event is not None:
            self.on_event(event)

    def session_log(self) -> list[dict]:
        """Every event as it came over the wire, with its arrival time (reply
        audio by its size: the audio itself is `reply_audio`)."""
        log = []
        for at, event in self.events:
            entry = json.loads(wire.encode_event(event))
            if isinstance(event, wire.AssistantAudio):
                entry["audio"] = f"{len(event.audio) * 3 // 4} bytes"
            log.append({**entry, "received_at": at})
        return log

    def reply_audio(self, turn: int) -> bytes:
        """The turn's spoken reply, its pieces joined (PCM16 mono at the rate the events give)."""
        return b"".join(
            base64.b64decode(e.audio) for _, e in self.events if isinstance(e, wire.AssistantAudio) and e.turn == turn
        )

    async def _read(self) -> None:
        try:
            async for raw in self._socket:
                event = wire.decode_event(raw)
                self._record(event)
                if isinstance(event, wire.Metrics):
                    self._turn_done.setdefault(event.turn, asyncio.Event()).set()
                elif isinstance(event, wire.WatchDone):
                    self._watch_done.set()
        except websockets.ConnectionClosed as exc:
            self._failure = f"connection closed ({exc.rcvd.code if exc.rcvd else 1006})"
        except wire.WireError as exc:
            self._failure = f"unreadable server event: {exc.message}"
        finally:
            self._failure = self._failure or "connection closed"
            for done in self._turn_done.values():
                done.set()
            self._watch_done.set()

    async def play(self, plan: TurnPlan | WatchPlan, pacer: Pacer, uplink=None) -> Delivery:
        """Send the turn's timeline, each item when `pacer` reaches its time. With an `uplink`
        (`media_effects.impairments.Uplink`), an item goes when the uplink delivers it, or never
        when the uplink loses it; the items keep their stream times."""
        schedule: list = []
        lost_audio: list[int] = []
        lost_frames: list[int] = []
        delays: list[float] = []
        last = float("-inf")
        for item in plan.items:
            at = float(item.t_ms)
            if uplink is not None and item.kind != "turn.end":
                at = uplink.deliver(item.t_ms, item.kind, len(item.payload))
                if at is None:
                    (lost_audio if item.kind == "audio" else lost_frames).append(item.t_ms)
                    continue
                delays.append(at - item.t_ms)
            last = max(last, at)  # one socket: nothing overtakes what went before
            schedule.append((last, item))
        for at, item in schedule:
            await pacer.wait(at)
            if item.kind == "turn.end":
                await self._socket.send(encode_client_message(TurnEnd(t_ms=item.t_ms)))
            elif item.kind == "frame":
                if self.drop_frames and self.random.random() < self.drop_frames:
                    continue
                await self._frame_rate.take(1)
                await self._socket.send(wire.encode_media(wire.KIND_FRAME, item.t_ms, item.payload))
            else:
                await self._audio_rate.take(len(item.payload))
                await self._socket.send(wire.encode_media(wire.KIND_AUDIO, item.t_ms, item.payload))
        return Delivery(
            lost_audio_ms=tuple(lost_audio),
            lost_frames_ms=tuple(lost_frames),
            mean_delay_ms=round(sum(delays) / len(delays), 1) if delays else None,
            frames_played=sum(item.kind == "frame" for item in plan.items),
        )

    async def wait_turn(self, turn: int, timeout: float = 600.0) -> TurnEvents:
        """The turn's input, reply and metrics (the last of each), once its metrics arrived."""
        done = self._turn_done.setdefault(turn, asyncio.Event())
        try:
            await asyncio.wait_for(done.wait(), timeout)
        except TimeoutError:
            raise ServerError(f"no reply for turn {turn} within {timeout:.0f} s") from None
        by_type = {type(e): e for _, e in self.events if getattr(e, "turn", None) == turn}
        if wire.Metrics not in by_type:
            errors = [e for _, e in self.events if isinstance(e, wire.Error)]
            detail = f"{errors[-1].code}: {errors[-1].message}" if errors else self._failure
            raise ServerError(f"turn {turn} did not complete: {detail}")
        turn_input, done_event, metrics = (
            by_type[wire.TurnInputEvent],
            by_type[wire.AssistantDone],
            by_type[wire.Metrics],
        )
        assert (
            isinstance(turn_input, wire.TurnInputEvent)
            and isinstance(done_event, wire.AssistantDone)
            and isinstance(metrics, wire.Metrics)
        )  # keyed by their own types above
        return TurnEvents(input=turn_input.input, done=done_event, metrics=metrics)

    def remark_audio(self, probe: int) -> bytes:
        """A proactive remark's spoken pieces joined (PCM16 mono at the rate the events give)."""
        return b"".join(
            base64.b64decode(e.audio) for _, e in self.events if isinstance(e, wire.RemarkAudio) and e.probe == probe
        )

    async def end_watch(self, timeout: float = 600.0) -> tuple[wire.WatchDone, list[wire.ProbeDone]]:
        """A proactive stream is over: `watch.end`, then the server's `watch.done` once every frame and
        probe before it is handled; with every probe's `probe.done`, in order."""
        await self._socket.send(encode_client_message(WatchEnd()))
        try:
            await asyncio.wait_for(self._watch_done.wait(), timeout)
        except TimeoutError:
            raise ServerError(f"no watch.done within {timeout:.0f} s") from None
        done = [e for _, e in self.events if isinstance(e, wire.WatchDone)]
        if not done:
            errors = [e for _, e in self.events if isinstance(e, wire.Error)]
            detail = f"{errors[-1].code}: {errors[-1].message}" if errors else self._failure
            raise ServerError(f"the proactive stream did not complete: {detail}")
        return done[-1], [e for _, e in self.events if isinstance(e, wire.ProbeDone)]

    async def close(self) -> None:
        if self._ws is not None:
            try:
                await self._ws.send(encode_client_message(SessionEnd()))
            except websockets.ConnectionClosed:
                pass
            await self._ws.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)
