"""The timeline the glasses play for a proactive scenario.

The scenes stream one after another for their durations: frames at the
glasses' five a second (each scene's camera text drawn as a synthetic frame:
no recording exists for these scenarios; with `--pictograph-frames`, each
scene's spec drawn as a pictograph, `media_effects.pictograph`), and audio the whole time, silent
except for the opening user line when the scenario has one (spoken by TTS
after `LEAD_MS`, then the `turn.end` hint after its silence tail). Nobody
speaks at the event. Stream times start at `start_ms` (the scenario's phase
on the stream clock, `timeline.stream_phase_ms`).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.proactive_scenario import ProactiveScenario
from media_effects.media import FPS
from simulator.timeline import CHUNK_BYTES, LEAD_MS, TAIL_MS, Item

BYTES_PER_MS = 32  # PCM16 mono at 16 kHz


@dataclass(frozen=True, kw_only=True)
class WatchPlan:
    items: tuple[Item, ...]
    start_ms: int  # stream time of the first scene's start
    end_ms: int
    scene_starts_ms: tuple[int, ...]  # stream times
    opening: bool  # the opening line is spoken (and answered as turn 1)
    frames_source: str = "synthetic"  # what the frames are: "synthetic" (the camera text) or "pictograph"

    def scene_at(self, t_ms: int) -> int | None:
        """The scene (index) showing at stream time `t_ms`."""
        if t_ms < self.start_ms or t_ms >= self.end_ms:
            return None
        return max(i for i, start in enumerate(self.scene_starts_ms) if start <= t_ms)


def plan_watch(scenario: ProactiveScenario, start_ms: int, pictures: tuple | None = None) -> WatchPlan:
    """`pictures`: the scenario's scene specs (`core.scenes.read_timeline`), drawn as pictographs; None:
    each scene's camera text drawn."""
    from media_effects.synthetic import synthetic_frame
    from simulator.timeline import spoken_pcm

    starts = tuple(start_ms + t for t in scenario.scene_starts_ms)
    end = start_ms + scenario.stream_ms
    items: list[Item] = []
    for index, scene in enumerate(scenario.scenes):
        if pictures is not None:
            from media_effects.pictograph import pictograph_frame

            jpeg = pictograph_frame(pictures[index])
        else:
            jpeg = synthetic_frame(scene.camera)
        scene_end = starts[index + 1] if index + 1 < len(starts) else end
        for t in range(starts[index], scene_end, 1000 // FPS):
            items.append(Item(t_ms=t, kind="frame", payload=jpeg, scene=str(index)))
    audio = bytearray(scenario.stream_ms * BYTES_PER_MS)
    if scenario.opening_user:
        speech = spoken_pcm(scenario.opening_user)
        lead = LEAD_MS * BYTES_PER_MS
        spoken = speech[: max(0, len(audio) - lead)]
        audio[lead : lead + len(spoken)] = spoken
        items.append(Item(t_ms=start_ms + LEAD_MS + len(spoken) // BYTES_PER_MS + TAIL_MS, kind="turn.end"))
    for offset in range(0, len(audio), CHUNK_BYTES):
        items.append(
            Item(
                t_ms=start_ms + offset // BYTES_PER_MS,
                kind="audio",
                payload=bytes(audio[offset : offset + CHUNK_BYTES]),
            )
        )
    items.sort(key=lambda item: (item.t_ms, item.kind != "frame"))
    return WatchPlan(
        items=tuple(items),
        start_ms=start_ms,
        end_ms=end,
        scene_starts_ms=starts,
        opening=bool(scenario.opening_user),
        frames_source="synthetic" if pictures is None else "pictograph",
    )
