"""The session timeline the glasses produce for one scenario.

Per turn: audio in 20 ms chunks (lead silence, the speech, a silence tail long
enough for the end of speech), frames at 5 per second across the turn, and a
`turn.end` hint at the end. Before turn 1, a context segment of frames only
when the scenario has context media. Speech comes from media when recorded or
synthesized files exist, else from TTS of the scenario's text; frames only from
media (without them the server falls back to the authored camera text the
session declared).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from core.scenario import Scenario
from media_effects.media import FPS, MEDIA_ROOT, frame_source, turn_frames, turn_speech

CHUNK_MS = 20
CHUNK_BYTES = 16000 * CHUNK_MS // 1000 * 2
LEAD_MS = 300
TAIL_MS = 1200
CONTEXT_MS = 1500
TURN_MEDIA = {1: ("turn_1", "turn_1"), 2: ("turn_2", "turn_2"), 3: (None, "turn_3_repair")}


@dataclass(frozen=True, kw_only=True)
class Item:
    t_ms: int
    kind: str  # "audio", "frame" or "turn.end"
    payload: bytes = b""
    scene: str | None = None  # a frame's scene: "context", "turn_1" or "turn_2" (None: a live camera's)


@dataclass(frozen=True, kw_only=True)
class TurnPlan:
    turn: int
    items: tuple[Item, ...]
    end_ms: int
    speech_source: str  # "media" (a file in media/) or "tts" (made now)
    has_frames: bool
    synthetic_frames: bool = False  # frames drawn from the authored camera text
    scene: str | None = None  # the scene this turn's own frames show (None: no frames of its own, or live)
    frames_degraded: int = 0  # frames an impairment profile changed
    frames_source: str | None = None  # "recording", "synthetic" or "pictograph" (None: no frames of its own)

    def frame_scenes(self) -> dict[int, str]:
        """Stream time -> scene of every frame the turn plays."""
        return {item.t_ms: item.scene for item in self.items if item.kind == "frame" and item.scene}


PHASE_SPAN_MS = 10_000


def stream_phase_ms(scenario_id: str) -> int:
    """The glasses' stream clock when a scenario begins: 0 to 9.999 s, drawn from the scenario
    id. A frame policy's schedule runs on the stream clock, so its slots fall at a different
    moment of each scenario, as a real client's schedule knows nothing of the scene."""
    return int(hashlib.sha256(scenario_id.encode()).hexdigest()[:8], 16) % PHASE_SPAN_MS


def cell_seed(seed: int, scenario_id: str, trial: int) -> int:
    """An impairment profile's seed for one cell: the run's seed, the scenario and the trial, so
    every cell draws its own noise and losses and a rerun draws the same."""
    return int(hashlib.sha256(f"{seed}:{scenario_id}:{trial}".encode()).hexdigest()[:8], 16)


def _speech_pcm(
    scenario: Scenario,
    turn: int,
    media_root: Path,
    repair_style: str,
    *,
    voice: str | None = None,
    rate: int | None = None,
) -> tuple[bytes, str]:
    """The turn's speech: its media file, else espeak-ng TTS (cached by text, voice and rate). A voice
    or rate (an impairment profile's speech variety) always speaks the line afresh."""
    from core.records import authored_turn_input
    from media_effects.audio import decode_audio, float_to_pcm16

    _, speech_name = TURN_MEDIA[turn]
    path = turn_speech(media_root, scenario.scenario_id, speech_name)
    text = authored_turn_input(scenario, turn, repair_style=repair_style).speech
    respoken = voice is not None or rate is not None
    if (
        path is not None
        and not respoken
        and not (turn == 3 and repair_style == "deictic" and scenario.turn_3_repair_anchor_deictic)
    ):
        return float_to_pcm16(decode_audio(path)), "media"
    return spoken_pcm(text, voice=voice, rate=rate), "tts"


def spoken_pcm(text: str, *, voice: str | None = None, rate: int | None = None) -> bytes:
    """A line spoken by espeak-ng TTS, PCM16 mono 16 kHz (cached by text, voice and rate)."""
    from media_effects.audio import decode_audio, float_to_pcm16
    from media_effects.tts import synthesize

    cache = Path(os.environ.get("WEARSIM_CACHE_DIR", Path.home() / ".cache" / "wearsim")) / "tts"
    voice, rate = voice or "en-us", rate or 150
    key = text if (voice, rate) == ("en-us", 150) else f"{voice}:{rate}:{text}"
    target = cache / (hashlib.sha256(key.encode()).hexdigest()[:24] + ".wav")
    if not target.exists():
        synthesize(text, target, voice=voice, rate=rate)
    return float_to_pcm16(decode_audio(target))


def _frames(
    scenario: Scenario, name: str, media_root: Path, synthetic: bool, scenes=None
) -> tuple[list[bytes] | None, str | None]:
    """A turn's (or the context's) frames from media; else, when asked, one frame drawn from its
    scene spec (`scenes`, a `core.scenes.SceneSpec`: a pictograph) or from its authored camera
    text (`synthetic`). (frames, their source: "recording", "pictograph", "synthetic" or None)"""
    frames = turn_frames(media_root, scenario.scenario_id, name)
    if frames:
        return frames, frame_source(media_root, scenario.scenario_id, name)
    text = {"context": scenario.context_image, "turn_1": scenario.turn_1_image, "turn_2": scenario.turn_2_image}.get(
        name
    )
    if not text:
        return None, None
    if scenes is not None and name in scenes.scenes:
        from media_effects.pictograph import pictograph_frame

        return [pictograph_frame(scenes.scenes[name])], "pictograph"
    if not synthetic:
        return None, None
    from media_effects.synthetic import synthetic_frame

    return [synthetic_frame(text)], "synthetic"


def babble_clips(scenario_id: str, media_root: Path, count: int, seed: int) -> list[bytes]:
    """`count` other scenarios' spoken lines from the media folder (the bank's own synthesized
    speech), chosen by `seed`: the talkers of a babble noise."""
    import random

    from media_effects.audio import decode_audio, float_to_pcm16

    files = sorted(p for p in media_root.glob("*/turn_*.wav") if p.parent.name != scenario_id)
    chosen = random.Random(seed).sample(files, min(count, len(files)))
    return [float_to_pcm16(decode_audio(path)) for path in chosen]


def plan_turn(
    scenario: Scenario,
    turn: int,
    start_ms: int,
    *,
    media_root: Path = MEDIA_ROOT,
    camera: bool = True,
    repair_style: str = "named",
    live_frames=None,
    lead_ms: int = LEAD_MS,
    synthetic_frames: bool = False,
    profile=None,
    scenes=None,
) -> TurnPlan:
    """One turn: frames from `start_ms` (the scene of the turn appears), speech
    after `lead_ms` of silence (the staleness sweep varies it on Turn 2). A turn without
    recorded frames gets a pictograph drawn from `scenes` (the scenario's `SceneSpec`) when
    given, else a synthetic frame of its camera text with `synthetic_frames`. With an
    impairment `profile` (`media_effects.impairment_profiles.Profile`) the turn's audio
    (its silences too) and each frame are degraded as the glasses would capture them."""
    speaker = profile.audio if profile is not None else None
    pcm, source = _speech_pcm(
        scenario,
        turn,
        media_root,
        repair_style,
        voice=speaker and speaker.voice,
        rate=speaker and speaker.speech_rate_wpm,
    )
    frame_name, _ = TURN_MEDIA[turn]
    frames, origin = None, None
    if camera and frame_name:
        frames, origin = (
            (live_frames, None) if live_frames else _frames(scenario, frame_name, media_root, synthetic_frames, scenes)
        )
    synthetic = origin == "synthetic"
    items: list[Item] = []
    t = start_ms
    if camera and turn == 1:
        context, context_origin = _frames(scenario, "context", media_root, synthetic_frames, scenes)
        synthetic = synthetic or context_origin == "synthetic"
        origin = origin or context_origin
        if context:
            for i in range(CONTEXT_MS * FPS // 1000):
                items.append(
                    Item(t_ms=t + i * 1000 // FPS, kind="frame", payload=context[i % len(context)], scene="context")
                )
            t += CONTEXT_MS
    silence = bytes(2 * 16000 * lead_ms // 1000)
    tail = bytes(2 * 16000 * TAIL_MS // 1000)
    audio = silence + pcm + tail
    if profile is not None and profile.audio.degrades:
        babble = (
            babble_clips(scenario.scenario_id, media_root, profile.audio.babble_talkers, profile.seed)
            if profile.audio.babble_snr_db is not None
            else ()
        )
        audio = profile.impair_audio(audio, index=turn, babble=babble)
    duration_ms = len(audio) // 32
    scene = None if (live_frames or not frames) else frame_name
    if frames:
        for i in range(duration_ms * FPS // 1000):
            items.append(Item(t_ms=t + i * 1000 // FPS, kind="frame", payload=frames[i % len(frames)], scene=scene))
    for offset in range(0, len(audio), CHUNK_BYTES):
        items.append(Item(t_ms=t + offset // 32, kind="audio", payload=audio[offset : offset + CHUNK_BYTES]))
    end = t + duration_ms
    items.append(Item(t_ms=end, kind="turn.end"))
    items.sort(key=lambda item: (item.t_ms, item.kind != "frame"))
    degraded = 0
    if profile is not None and not profile.video.is_clean:
        items = [
            Item(
                t_ms=i.t_ms,
                kind=i.kind,
                payload=profile.impair_frame(i.payload, index=turn * 10_000 + n),
                scene=i.scene,
            )
            if i.kind == "frame"
            else i
            for n, i in enumerate(items)
        ]
        degraded = sum(i.kind == "frame" for i in items)
    return TurnPlan(
        turn=turn,
        items=tuple(items),
        end_ms=end,
        speech_source=source,
        has_frames=bool(frames),
        synthetic_frames=synthetic,
        scene=scene,
        frames_degraded=degraded,
        frames_source=origin,
    )
