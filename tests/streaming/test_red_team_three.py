"""The third red-team pass (issue 49), rows 5, 9 and 10: a closed session's frames are released at
once; a scene spec of thousands of objects is refused before anything is drawn, and its duplicate
ids are found in one pass; strategy and frame-policy numbers follow a strict grammar."""

from __future__ import annotations

import asyncio
import gc

import pytest

from core.scenes import MAX_OBJECTS, parse_scene
from media_effects.frames import FrameBudget, FrameBuffer
from media_effects.synthetic import synthetic_frame
from perception.frame_policy import parse_frame_policy
from streaming import wire
from streaming.backends import MediaBackend
from streaming.proactive import parse_strategy
from streaming.session import Session
from tests.streaming.quiet import Quiet


class Frames(MediaBackend):
    async def audio(self, pcm16):
        return None

    async def frame(self, t_ms, jpeg):
        return None

    async def aclose(self):
        return None


def test_a_closed_session_releases_its_frames_from_the_shared_budget_at_once():
    """Frames offered and frames sent both count against the budget; closing frees both, with the
    garbage collector off (before the change the sent frames stayed until it ran)."""
    budget = FrameBudget(64_000_000)

    async def go() -> tuple[int, int]:
        sessions = []
        for _ in range(3):
            frames = FrameBuffer(max_bytes=8_000_000, budget=budget)
            session = Session(
                wire.SessionConfig(camera=True, frame_policy=parse_frame_policy("fps:5")),
                Quiet(),
                Frames(),
                None,
                frames=frames,
            )
            worker = asyncio.create_task(session.run())
            for i in range(12):
                await session.on_media(
                    wire.Media(kind=wire.KIND_FRAME, t_ms=i * 200, payload=synthetic_frame(f"scene {i}"))
                )
                await session.on_media(wire.Media(kind=wire.KIND_AUDIO, t_ms=i * 200, payload=bytes(6400)))
            while session.busy:
                await asyncio.sleep(0.01)
            sessions.append((session, worker))
        held = budget.used
        assert all(s.sent.frames for s, _ in sessions)  # the policy sent some: they count too
        for session, worker in sessions:
            worker.cancel()
            await session.aclose()
        return held, budget.used

    gc.disable()
    try:
        held, after = asyncio.run(go())
    finally:
        gc.enable()
    assert held > 0 and after == 0


def _scene(objects: list[dict]) -> dict:
    return {"setting": "workbench", "objects": objects}


def test_a_scene_of_thousands_of_objects_is_refused_before_it_is_drawn_or_checked_object_by_object():
    objects = [{"id": "same"} for _ in range(2000)]  # each one unnamed, and every id a duplicate
    problems: list[str] = []
    assert parse_scene(_scene(objects), "scenes/x.json: turn_1", problems) is None
    # refused at the count: no object was parsed (none of their 2,000 problems is there)
    assert problems == [
        f"scenes/x.json: turn_1: field 'objects' holds 2,000 objects, over the {MAX_OBJECTS} a scene may hold"
    ]


def test_the_cap_is_far_above_the_bank_and_duplicate_ids_are_still_named():
    from core.scenario import load_bank
    from core.scenes import load_scene_specs

    busiest = max(len(s.objects) for spec in load_scene_specs(load_bank()).values() for s in spec.scenes.values())
    assert busiest * 3 <= MAX_OBJECTS
    problems: list[str] = []
    objects = [{"id": i, "name": "nail"} for i in ("a", "b", "a", "c", "b", "a")]
    assert parse_scene(_scene(objects), "w", problems) is None
    assert problems == ["w: objects: id 'a' used twice", "w: objects: id 'b' used twice"]


def test_the_renderer_refuses_a_scene_made_in_code_past_the_cap():
    from core.scenes import Scene, SceneObject
    from media_effects.pictograph import render_scene

    scene = Scene(
        setting="workbench",
        objects=tuple(SceneObject(id=f"o{i}", name="nail", picture="nail") for i in range(MAX_OBJECTS + 1)),
    )
    with pytest.raises(ValueError, match=f"at most {MAX_OBJECTS} are drawn"):
        render_scene(scene)


@pytest.mark.parametrize(
    "text",
    ["change:", "native:", "every:1_0", "every:\u0665", "every:1e1", "every:inf", "every: 5", "every:+5", "every:0x5"],
)
def test_a_strategy_is_refused_unless_its_number_is_ascii_digits_with_one_point(text):
    with pytest.raises(ValueError, match="proactive strategy"):
        parse_strategy(text)


def test_a_strategys_plain_numbers_still_read():
    assert parse_strategy("every:5").every_s == 5 and parse_strategy("every:2.5").every_s == 2.5
    assert parse_strategy("change").kind == "change" and parse_strategy(" native ").kind == "native"


@pytest.mark.parametrize(
    "text", ["fps:1_0", "fps:1e1", "fps:\u0661", "speech:2/0_5", "change:0.0_2", "change:\u0660.5", "fps:nan", "fps:-1"]
)
def test_a_frame_policy_is_refused_unless_its_numbers_are_ascii_digits_with_one_point(text):
    with pytest.raises(ValueError, match="frame policy"):
        parse_frame_policy(text)
    assert parse_frame_policy("change:0.02/2").threshold == 0.02 and parse_frame_policy("fps:.5").rate == 0.5
