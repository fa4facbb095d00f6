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
from dataclasses import dataclass, field
from pathlib import Path

from core.candidate import GenerationConfig, Message, Reply
from core.records import FrameFacts, GlassesFacts, TurnResult, authored_turn_input
from core.scenario import Condition, Scenario

THUMBNAIL_PX = 160  # a kept frame's longer side (RUN_DIR/frames/, for the viewer)
THUMBNAIL_QUALITY = 70


def session_config(scenario: Scenario, condition: Condition, backend: str, *, camera: bool = True, **options):
    """The hello's session config of one scenario: only what the glasses would
    know, plus the authored camera text declared as the fallback for turns
    without frames. Answer keys, target and notes are never part of it."""
    from streaming.wire import SessionConfig

    fallback = {str(n): text for n, text in ((1, scenario.turn_1_image), (2, scenario.turn_2_image)) if text}
    return SessionConfig(backend=backend, system_prompt=condition.system_prompt, camera=camera,
                         fallback_camera=fallback if camera else {},
                         fallback_context=scenario.context_image if camera else None, **options)


@dataclass(frozen=True)
class ServerSession:
    """The streaming server a trial talks to, and what each session's hello asks of it."""

    url: str
    backend: str  # the model id the server answers with
    token: str | None = field(default=None, repr=False)
    describer: str = "opencv"
    silence_ms: int = 1500
    end_of_turn: str | None = None  # "model" or "silence" (streaming.wire.SessionConfig); None: the server's
    frame_policy: str | None = None  # None: the server's default
    frame_size: int = 0  # longer side of a sent frame (0: as captured)
    frame_quality: int = 0  # JPEG quality of a sent frame (0: as captured)
    output: str = "text"  # "audio": spoken replies (a realtime backend), kept in the reply


@dataclass(frozen=True)
class GlassesPlay:
    """What the simulated glasses play, how fast, and whether the frames sent are kept."""

    media_root: Path | None = None  # speech and frames from here (None: media/)
    synthetic_frames: bool = False
    scenes: object = None  # the scenario's `SceneSpec`: pictographs where no recording exists (None: none)
    impairment: object = None  # a `media_effects.impairment_profiles.Profile` (its seed set), or None
    staleness_ms: int | None = None  # Turn 2 speech starts this long after its first frame
    speed: float | None = None  # pacing (None: as fast as the server takes it)
    keep_frames: bool = True  # the frames sent go out with each turn as thumbnails


class StreamConversation:
    def __init__(self, scenario: Scenario, condition: Condition, server: ServerSession, config: GenerationConfig,
                 *, glasses: GlassesPlay = GlassesPlay(), camera: bool = True, repair_style: str = "named"):
        self.scenario = scenario
        self.condition = condition
        self.server_url = server.url
        self.backend = server.backend
        self.config = config
        self.camera = camera
        self.repair_style = repair_style
        self.speed = glasses.speed
        self.token = server.token
        self.describer = server.describer
        self.silence_ms = server.silence_ms
        self.end_of_turn = server.end_of_turn
        self.media_root = glasses.media_root
        self.staleness_ms = glasses.staleness_ms
        self.synthetic_frames = glasses.synthetic_frames
        self.scene_spec = glasses.scenes
        self.output = server.output
        self.frame_policy = server.frame_policy
        self.frame_size, self.frame_quality = server.frame_size, server.frame_quality
        self.scenes: dict[int, str] = {}  # stream time -> the scene of each frame played
        self.impairment = glasses.impairment
        self.uplink = None  # the impaired uplink of this session, made when it opens
        self.keep_frames = glasses.keep_frames
        self.played: dict[int, bytes] = {}  # stream time -> each frame played (the thumbnails' source)
        self.messages: list[Message] = []
        self.client = None
        self.pacer = None
        self.lateness: list[float] = []  # seconds each send went out after its deadline, all turns
        self.clock_ms: int | None = None  # the stream clock; it starts at the scenario's phase

    async def _open(self) -> None:
        from simulator.client import GlassesClient

        session = session_config(self.scenario, self.condition, self.backend, camera=self.camera,
                                 describer=self.describer, silence_ms=self.silence_ms,
                                 max_tokens=self.config.max_tokens, temperature=self.config.temperature,
                                 output=self.output, frame_policy=self.frame_policy,
                                 frame_size=self.frame_size, frame_quality=self.frame_quality,
                                 **({"end_of_turn": self.end_of_turn} if self.end_of_turn else {}))
        self.client = GlassesClient(self.server_url, token=self.token)
        await self.client.connect(session)
        if self.impairment is not None and not self.impairment.uplink.is_clean:
            self.uplink = self.impairment.new_uplink()

    async def send(self, turn: int) -> TurnResult:
        from media_effects.media import MEDIA_ROOT
        from simulator.pacing import Pacer
        from simulator.timeline import LEAD_MS, plan_turn, stream_phase_ms

        if self.client is None:
            await self._open()
        if self.clock_ms is None:
            self.clock_ms = stream_phase_ms(self.scenario.scenario_id)
        lead = self.staleness_ms if (turn == 2 and self.staleness_ms is not None) else LEAD_MS
        plan = plan_turn(self.scenario, turn, self.clock_ms, media_root=self.media_root or MEDIA_ROOT,
                         camera=self.camera, repair_style=self.repair_style, lead_ms=lead,
                         synthetic_frames=self.synthetic_frames, profile=self.impairment, scenes=self.scene_spec)
        self.clock_ms = plan.end_ms + 200
        self.scenes.update(plan.frame_scenes())
        if self.keep_frames:
            self.played.update((item.t_ms, item.payload) for item in plan.items if item.kind == "frame")
        self.pacer = Pacer(self.speed, origin_ms=plan.items[0].t_ms)
        delivery = await self.client.play(plan, self.pacer, self.uplink)
        self.lateness += self.pacer.lateness
        events = await self.client.wait_turn(turn)
        self.messages += [Message("user", text) for text in events.input.messages()]
        self.messages.append(Message("assistant", events.done.text))
        metrics = events.metrics.latency_s
        reply = Reply(events.done.text, self.backend, events.done.usage,
                      metrics.reply_done or 0.0, metrics.first_token, metrics.first_audio, events.done.heard,
                      audio=self.client.reply_audio(turn), session_lost=events.done.session_lost,
                      incomplete=events.done.incomplete, transcription=events.done.transcription)
        authored = authored_turn_input(self.scenario, turn, repair_style=self.repair_style)
        frames = self._frame_facts(events.metrics.frames, plan.scene)
        if self.keep_frames and frames.sent_ms:
            frames = dataclasses.replace(frames, pictures=await asyncio.to_thread(self._thumbnails, frames.sent_ms))
        profile = self.impairment
        glasses = GlassesFacts(
            plan.speech_source, plan.has_frames, plan.synthetic_frames, plan.frames_source, lead, authored.speech,
            authored.camera_block,
            impairment=profile.name if profile else None, impairment_seed=profile.seed if profile else None,
            frames_played=delivery.frames_played if profile else None,
            frames_degraded=plan.frames_degraded if profile else None, audio_lost_ms=delivery.lost_audio_ms,
            frames_lost_ms=delivery.lost_frames_ms, uplink_delay_ms=delivery.mean_delay_ms,
            **self._timeline(plan, turn))
        turn_end = events.metrics.turn_end
        return TurnResult(turn, events.input, reply, metrics=metrics, glasses=glasses, frames=frames, turn_end=turn_end)

    def _timeline(self, plan, turn: int) -> dict:
        """The turn's stream times (its audio's start, its own scene's first frame, the end of speech the
        server heard) and its audio as played, for the viewer's timeline."""
        from streaming.wire import TranscriptFinal

        audio = [item for item in plan.items if item.kind == "audio"]
        scene = next((item.t_ms for item in plan.items if item.kind == "frame" and plan.scene
                      and item.scene == plan.scene), None)
        heard = [event for _, event in self.client.events if isinstance(event, TranscriptFinal) and event.turn == turn]
        return {"start_ms": audio[0].t_ms if audio else None, "scene_ms": scene,
                "speech_end_ms": heard[-1].end_ms if heard else None,
                "speech_audio": b"".join(item.payload for item in audio)}

    def _thumbnails(self, sent_ms: tuple[int, ...]) -> tuple[tuple[int, bytes], ...]:
        """Each frame sent, as played, made small (`THUMBNAIL_PX` on its longer side); a frame the glasses
        did not play (none should be) is left out."""
        from perception.frame_policy import resize_frame

        return tuple((t, resize_frame(self.played[t], THUMBNAIL_PX, THUMBNAIL_QUALITY))
                     for t in sent_ms if t in self.played)

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
