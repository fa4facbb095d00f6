"""`StreamConversation`: the protocol's turns played through simulated
glasses against a streaming server.

Each trial opens its own session. `send(1)` and `send(2)` play the turn's
timeline (speech and frames) and wait for the server's reply; `send(3)` plays
the repair utterance, which the driver asks for only after judging a miss on
its own side. Only what the glasses would capture crosses the wire, plus the
scenario's authored camera text declared as the fallback for turns without
frames; the answer keys, target and notes never do.

Each turn also carries what the viewer shows of it: the frames the server
says it sent (`frames.sent_ms`) as the glasses played them, made small
(`FrameFacts.pictures`), the turn's audio and its stream times
(`GlassesFacts`); the runner keeps them in the run dir (`kept_media.py`).
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING

from core.candidate import Message, Reply
from core.records import FrameFacts, GlassesFacts, TurnResult, authored_turn_input
from core.scenario import Condition, Scenario

if TYPE_CHECKING:
    from simulator.client import GlassesClient
    from simulator.pacing import Pacer

THUMBNAIL_PX = 160  # a kept frame's longer side (RUN_DIR/frames/, for the viewer)
THUMBNAIL_QUALITY = 70


def session_config(scenario: Scenario, condition: Condition, hello, *, camera: bool = True):
    """The hello's session config of one scenario: the glasses' `hello` (a `streaming.wire.SessionConfig`)
    with only what the glasses would know of the scenario, plus the authored camera text declared as
    the fallback for turns without frames. Answer keys, target and notes are never part of it."""
    import dataclasses

    fallback = {str(n): text for n, text in ((1, scenario.turn_1_image), (2, scenario.turn_2_image)) if text}
    return dataclasses.replace(
        hello,
        system_prompt=condition.system_prompt,
        camera=camera,
        fallback_camera=fallback if camera else {},
        fallback_context=scenario.context_image if camera else None,
    )


def turn_reply(events, backend: str, audio: bytes) -> Reply:
    """The `Reply` of one finished turn, from the server's events for it (`simulator.client.TurnEvents`)."""
    done, metrics = events.done, events.metrics.latency_s
    return Reply(
        text=done.text,
        model=backend,
        usage=done.usage,
        latency_s=metrics.reply_done or 0.0,
        first_token_s=metrics.first_token,
        first_audio_s=metrics.first_audio,
        heard=done.heard,
        audio=audio,
        session_lost=done.session_lost,
        incomplete=done.incomplete,
        transcription=done.transcription,
    )


class StreamConversation:
    """One trial's session, its turns played as `settings` (a `simulator.settings.GlassesSettings`) say;
    `on_event` sees each server event as it comes (`wearsim simulate` prints them)."""

    def __init__(
        self,
        scenario: Scenario,
        condition: Condition,
        settings,
        *,
        camera: bool = True,
        repair_style: str = "named",
        on_event=None,
    ):
        self.scenario = scenario
        self.condition = condition
        self.glasses = settings
        self.camera = camera
        self.repair_style = repair_style
        self.on_event = on_event
        self.scenes: dict[int, str] = {}  # stream time -> the scene of each frame played
        self.uplink = None  # the impaired uplink of this session, made when it opens
        self.played: dict[int, bytes] = {}  # stream time -> each frame played (the thumbnails' source)
        self.messages: list[Message] = []
        self.client: GlassesClient | None = None
        self.pacer: Pacer | None = None
        self.lateness: list[float] = []  # seconds each send went out after its deadline, all turns
        self.clock_ms: int | None = None  # the stream clock; it starts at the scenario's phase

    async def open(self) -> None:
        """Connect and send the hello (`send` does it on the first turn); a failure leaves nothing open."""
        from simulator.client import GlassesClient

        glasses = self.glasses
        session = session_config(self.scenario, self.condition, glasses.hello, camera=self.camera)
        client = GlassesClient(
            glasses.url, token=glasses.token, on_event=self.on_event, drop_frames=glasses.drop_frames
        )
        await client.connect(session)
        self.client = client
        impairment = glasses.impairment
        if impairment is not None and not impairment.uplink.is_clean:
            self.uplink = impairment.new_uplink()

    async def send(self, turn: int) -> TurnResult:
        from media_effects.media import MEDIA_ROOT
        from simulator.pacing import Pacer
        from simulator.timeline import LEAD_MS, plan_turn, stream_phase_ms

        glasses = self.glasses
        if self.client is None:
            await self.open()
        client = self._client()
        if self.clock_ms is None:
            self.clock_ms = stream_phase_ms(self.scenario.scenario_id)
        lead = glasses.staleness_ms if (turn == 2 and glasses.staleness_ms is not None) else LEAD_MS
        plan = plan_turn(
            self.scenario,
            turn,
            self.clock_ms,
            media_root=glasses.media_root or MEDIA_ROOT,
            camera=self.camera,
            repair_style=self.repair_style,
            lead_ms=lead,
            live_frames=glasses.live_frames,
            synthetic_frames=glasses.synthetic_frames,
            profile=glasses.impairment,
            scenes=glasses.scenes,
        )
        self.clock_ms = plan.end_ms + glasses.gap_ms
        self.scenes.update(plan.frame_scenes())
        if glasses.keep_frames:
            self.played.update((item.t_ms, item.payload) for item in plan.items if item.kind == "frame")
        self.pacer = pacer = Pacer(glasses.speed, origin_ms=plan.items[0].t_ms, jitter_ms=glasses.jitter_ms)
        delivery = await client.play(plan, pacer, self.uplink)
        self.lateness += pacer.lateness
        events = await client.wait_turn(turn)
        self.messages += [Message(role="user", text=text) for text in events.input.messages()]
        self.messages.append(Message(role="assistant", text=events.done.text))
        metrics = events.metrics.latency_s
        reply = turn_reply(events, glasses.backend, client.reply_audio(turn))
        authored = authored_turn_input(self.scenario, turn, repair_style=self.repair_style)
        frames = self._frame_facts(events.metrics.frames, plan.scene)
        if glasses.keep_frames and frames.sent_ms:
            frames = dataclasses.replace(frames, pictures=await asyncio.to_thread(self._thumbnails, frames.sent_ms))
        profile = glasses.impairment
        facts = GlassesFacts(
            speech_media=plan.speech_source,
            frames_sent=plan.has_frames,
            synthetic_frames=plan.synthetic_frames,
            frames_source=plan.frames_source,
            lead_ms=lead,
            script=authored.speech,
            camera_script=authored.camera_block,
            impairment=profile.name if profile else None,
            impairment_seed=profile.seed if profile else None,
            frames_played=delivery.frames_played if profile else None,
            frames_degraded=plan.frames_degraded if profile else None,
            audio_lost_ms=delivery.lost_audio_ms,
            frames_lost_ms=delivery.lost_frames_ms,
            uplink_delay_ms=delivery.mean_delay_ms,
            **self._timeline(plan, turn),
        )
        turn_end = events.metrics.turn_end
        return TurnResult(
            turn=turn, input=events.input, reply=reply, metrics=metrics, glasses=facts, frames=frames, turn_end=turn_end
        )

    def _client(self) -> GlassesClient:
        """The open session's client (`open` made it)."""
        if self.client is None:
            raise RuntimeError("the stream conversation is not open")
        return self.client

    def _timeline(self, plan, turn: int) -> dict:
        """The turn's stream times (its audio's start, its own scene's first frame, the end of speech the
        server heard) and its audio as played, for the viewer's timeline."""
        from streaming.wire import TranscriptFinal

        audio = [item for item in plan.items if item.kind == "audio"]
        scene = next(
            (item.t_ms for item in plan.items if item.kind == "frame" and plan.scene and item.scene == plan.scene), None
        )
        heard = [
            event for _, event in self._client().events if isinstance(event, TranscriptFinal) and event.turn == turn
        ]
        return {
            "start_ms": audio[0].t_ms if audio else None,
            "scene_ms": scene,
            "speech_end_ms": heard[-1].end_ms if heard else None,
            "speech_audio": b"".join(item.payload for item in audio),
        }

    def _thumbnails(self, sent_ms: tuple[int, ...]) -> tuple[tuple[int, bytes], ...]:
        """Each frame sent, as played, made small (`THUMBNAIL_PX` on its longer side); a frame the glasses
        did not play (none should be) is left out."""
        from perception.frame_policy import resize_frame

        return tuple(
            (t, resize_frame(self.played[t], THUMBNAIL_PX, THUMBNAIL_QUALITY)) for t in sent_ms if t in self.played
        )

    def _frame_facts(self, facts: FrameFacts, scene: str | None) -> FrameFacts:
        """The server's frame facts, and which scene the newest frame sent shows: the glasses
        know each frame's scene; the server never learns it."""
        if facts.policy is None:
            return facts
        shown = self.scenes.get(facts.newest_ms) if facts.newest_ms is not None else None
        verdict = "unknown" if (shown is None or scene is None) else ("current" if shown == scene else "earlier")
        return dataclasses.replace(facts, newest_frame_scene=verdict)

    async def aclose(self) -> None:
        if self.client is not None:
            await self.client.close()
            self.client = None
