"""The simulated glasses' WebSocket client: sends a timeline, paced, and
collects the server's events by turn."""

from __future__ import annotations

import asyncio
import json
import random
import time

import websockets

from simulator.pacing import Pacer
from simulator.timeline import TurnPlan
from streaming import wire


class ServerError(RuntimeError):
    pass


class GlassesClient:
    def __init__(self, url: str, *, token: str | None = None, on_event=None, drop_frames: float = 0.0,
                 seed: int | None = None):
        self.url = url.rstrip("/")
        if not self.url.endswith("/v1/session"):
            self.url += "/v1/session"
        self.token = token
        self.on_event = on_event
        self.drop_frames = drop_frames
        self.random = random.Random(seed)
        self.events: list[dict] = []  # every server event, with arrival time, for the session log
        self._turn_done: dict[int, asyncio.Event] = {}
        self._ws = None
        self._reader: asyncio.Task | None = None
        self._failure: str | None = None

    async def connect(self, config: wire.SessionConfig, timeout: float = 300.0) -> dict:
        self._ws = await websockets.connect(self.url, max_size=wire.MAX_MESSAGE_BYTES)
        await self._ws.send(wire.hello(self.token, config))
        ready = json.loads(await asyncio.wait_for(self._ws.recv(), timeout))
        self._record(ready)
        if ready.get("type") != "ready":
            raise ServerError(f"server refused the session: {ready.get('code')}: {ready.get('message')}")
        self._reader = asyncio.create_task(self._read())
        return ready

    def _record(self, event: dict) -> None:
        event = {**event, "received_at": round(time.time(), 3)}
        self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)

    async def _read(self) -> None:
        try:
            async for raw in self._ws:
                event = json.loads(raw)
                self._record(event)
                if event.get("type") == "metrics":
                    self._turn_done.setdefault(event["turn"], asyncio.Event()).set()
        except websockets.ConnectionClosed as exc:
            self._failure = f"connection closed ({exc.code})"
        finally:
            self._failure = self._failure or "connection closed"
            for done in self._turn_done.values():
                done.set()

    async def play(self, plan: TurnPlan, pacer: Pacer) -> None:
        for item in plan.items:
            await pacer.wait(item.t_ms)
            if item.kind == "turn.end":
                await self._ws.send(wire.encode_message("turn.end", t_ms=item.t_ms))
            elif item.kind == "frame":
                if self.drop_frames and self.random.random() < self.drop_frames:
                    continue
                await self._ws.send(wire.encode_media(wire.KIND_FRAME, item.t_ms, item.payload))
            else:
                await self._ws.send(wire.encode_media(wire.KIND_AUDIO, item.t_ms, item.payload))

    async def wait_turn(self, turn: int, timeout: float = 600.0) -> dict[str, dict]:
        """The turn's events by type (the last of each), once its metrics arrived."""
        done = self._turn_done.setdefault(turn, asyncio.Event())
        try:
            await asyncio.wait_for(done.wait(), timeout)
        except asyncio.TimeoutError:
            raise ServerError(f"no reply for turn {turn} within {timeout:.0f} s") from None
        by_type = {e["type"]: e for e in self.events if e.get("turn") == turn}
        if "metrics" not in by_type:
            errors = [e for e in self.events if e.get("type") == "error"]
            detail = f"{errors[-1]['code']}: {errors[-1]['message']}" if errors else self._failure
            raise ServerError(f"turn {turn} did not complete: {detail}")
        return by_type

    async def close(self) -> None:
        if self._ws is not None:
            try:
                await self._ws.send(wire.encode_message("session.end"))
            except websockets.ConnectionClosed:
                pass
            await self._ws.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)
