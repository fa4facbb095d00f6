"""`WatchConversation`: a proactive scenario played through simulated glasses.

One session per trial, its hello naming the proactive strategy. The glasses
play the whole timeline in real time (`simulator.watch_timeline`: the scenes
as synthetic frames, the opening line if there is one, silence otherwise),
then send `watch.end` and collect what the server did: the opening turn's
reply (turn 1), and each probe with its answer. Only what the glasses would
capture crosses the wire; the event, its window and its expected keys never
do. Stream times in the record count from the first scene's start.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from benchmark.conversations.stream import THUMBNAIL_PX, THUMBNAIL_QUALITY, turn_reply
from core.candidate import Message
from core.proactive_scenario import ProactiveScenario
from core.records import TurnResult
from core.scenario import Condition
from core.watching import Probe, Watching

if TYPE_CHECKING:
    from simulator.client import GlassesClient


@dataclass(frozen=True, kw_only=True)
class Watched:
    """What one proactive trial's stream gave: the opening turn (if any), the probes, the messages."""

    turns: tuple[TurnResult, ...]
    watching: Watching
    messages: tuple[Message, ...]
    model: str


class WatchConversation:
    """One proactive trial, played as `settings` (a `simulator.settings.GlassesSettings`) say, at real
    time: timing is what a proactive trial measures, so it is never unpaced (`speed`)."""

    def __init__(
        self,
        scenario: ProactiveScenario,
        condition: Condition,
        settings,
        *,
        strategy: str,
        speed: float = 1.0,
        pictures: tuple | None = None,
    ):
        self.scenario, self.condition, self.strategy = scenario, condition, strategy
        self.glasses = settings
        self.speed = speed
        self.pictures = pictures  # the scenes' specs, drawn as pictographs (None: the camera text drawn)
        self.client: GlassesClient | None = None

    async def watch(self) -> Watched:
        from simulator.client import GlassesClient
        from simulator.pacing import Pacer
        from simulator.timeline import stream_phase_ms
        from simulator.watch_timeline import plan_watch

        scenario, glasses = self.scenario, self.glasses
        session = dataclasses.replace(
            glasses.hello, system_prompt=self.condition.system_prompt, camera=True, proactive=self.strategy
        )
        self.client = client = GlassesClient(glasses.url, token=glasses.token)
        await client.connect(session)
        plan = await asyncio.to_thread(plan_watch, scenario, stream_phase_ms(scenario.scenario_id), self.pictures)
        await client.play(plan, Pacer(self.speed, origin_ms=plan.start_ms))
        done, probes = await client.end_watch()
        turns: tuple[TurnResult, ...] = ()
        messages: tuple[Message, ...] = ()
        if plan.opening:
            events = await client.wait_turn(1)
            reply = turn_reply(events, glasses.backend, client.reply_audio(1))
            metrics = events.metrics.latency_s
            turns = (TurnResult(turn=1, input=events.input, reply=reply, metrics=metrics),)
            messages = (
                *(Message(role="user", text=text) for text in events.input.messages()),
                Message(role="assistant", text=events.done.text),
            )
        origin = plan.start_ms
        recorded = []
        for event in probes:
            spoke = (
                None if event.silent or event.first_s is None else event.asked_ms - origin + round(event.first_s * 1000)
            )
            recorded.append(
                Probe(
                    n=event.probe,
                    asked_ms=event.asked_ms - origin,
                    frame_ms=None if event.frame_ms is None else event.frame_ms - origin,
                    text=event.text,
                    silent=event.silent,
                    spoke_ms=spoke,
                    done_s=event.done_s,
                    usage=event.usage if event.usage.reported else None,
                    scene=None if event.frame_ms is None else plan.scene_at(event.frame_ms),
                    camera=event.camera,
                )
            )
        sent = [t for t in done.frames.get("sent_ms", []) if isinstance(t, int)]
        watching = Watching(
            strategy=self.strategy,
            kind=scenario.kind,
            stream_ms=scenario.stream_ms,
            scene_starts_ms=scenario.scene_starts_ms,
            onset_ms=scenario.onset_ms,
            window_end_ms=scenario.window_end_ms,
            expected=scenario.event.expected if scenario.event else (),
            probes=tuple(recorded),
            frames_sent_ms=tuple(t - origin for t in sent),
            pictures=await asyncio.to_thread(self._pictures, plan, sent, origin) if glasses.keep_frames else (),
            audio=tuple((p.probe, pcm) for p in probes if not p.silent and (pcm := client.remark_audio(p.probe))),
            skipped=done.skipped,
            frames_source=plan.frames_source,
        )
        return Watched(turns=turns, watching=watching, messages=messages, model=glasses.backend)

    def _pictures(self, plan, sent: list[int], origin: int) -> tuple[tuple[int, bytes], ...]:
        """A thumbnail of each sent frame whose picture differs from the sent frame before it (the
        scene changes the assistant was shown), at its stream time from the start."""
        from perception.frame_policy import resize_frame

        played = {item.t_ms: item.payload for item in plan.items if item.kind == "frame"}
        pictures, previous = [], None
        for t in sent:
            payload = played.get(t)
            if payload is None or payload is previous:
                continue
            previous = payload
            pictures.append((t - origin, resize_frame(payload, THUMBNAIL_PX, THUMBNAIL_QUALITY)))
        return tuple(pictures)

    async def aclose(self) -> None:
        if self.client is not None:
            await self.client.close()
            self.client = None
