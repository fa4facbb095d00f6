"""Proactive scenarios: the scene changes and nobody asks.

A proactive scenario is a timeline of scenes, each a camera text (described
without naming, as the bank's camera blocks are) and a duration. An `event`
scenario has one scene where something calls for an unprompted remark (a
danger, a mistake in a task the user started, something about to be missed,
something left behind): its onset is that scene's start, and a remark counts
as on time up to `window_s` after it. What a correct remark must convey is
its `expected` answer keys, judged as a Turn 2 reply's current answers are.
A `quiet` scenario changes in a harmless way: any remark is a false alarm.
An optional opening user line sets up the task ("tell me when the water
boils"); it is spoken at the start of the first scene and answered as an
ordinary turn.

The shipped set is `benchmark/v1/proactive.json` (the bank's `proactive`
subset). `load_proactive` reads it and collects every problem, each naming
the file, the scenario and the field; the authoring checks (`wearsim
validate`) are in `benchmark/bank/proactive.py`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from core.scenario import SAFE_ID, AnswerKey, BankError, Scenario

PROACTIVE_FILE = "proactive.json"
SUBSET = "proactive"
KINDS = ("event", "quiet")
EVENT_TYPES = ("safety", "task_mistake", "about_to_miss", "left_behind")
MIN_STREAM_S = 30.0  # every scenario streams at least this long
MIN_WINDOW_S, MAX_WINDOW_S = 4.0, 30.0
MAX_SCENE_S = 120.0
MAX_SCENES = 12
# a TrialRecord's target_context for each kind (the three-turn metrics leave these records out)
TARGETS = {"event": "speak_up", "quiet": "stay_quiet"}


@dataclass(frozen=True, kw_only=True)
class ProactiveScene:
    camera: str
    duration_s: float


@dataclass(frozen=True, kw_only=True)
class ProactiveEvent:
    scene: int  # index of the scene that starts the event (never the first)
    window_s: float  # a remark up to this long after the onset is on time
    expected: tuple[str, ...]  # what a correct remark conveys (any one of them)


@dataclass(frozen=True, kw_only=True)
class ProactiveScenario:
    scenario_id: str
    kind: str  # "event" or "quiet"
    event_type: str | None  # one of EVENT_TYPES (None for a quiet control)
    activity_domain: str
    opening_user: str | None
    scenes: tuple[ProactiveScene, ...]
    event: ProactiveEvent | None
    notes: str = ""
    subset: str = SUBSET

    # what a trial record says of the scenario (the fields a three-turn scenario fills from its own)
    @property
    def target_context(self) -> str:
        return TARGETS[self.kind]

    @property
    def cue_type(self) -> str:
        return self.event_type or "quiet"

    @property
    def difficulty_tier(self) -> str:
        return "unknown"

    @property
    def scene_starts_ms(self) -> tuple[int, ...]:
        """Each scene's start, in ms from the start of the stream."""
        starts, t = [], 0
        for scene in self.scenes:
            starts.append(t)
            t += round(scene.duration_s * 1000)
        return tuple(starts)

    @property
    def stream_ms(self) -> int:
        return sum(round(scene.duration_s * 1000) for scene in self.scenes)

    @property
    def onset_ms(self) -> int | None:
        return None if self.event is None else self.scene_starts_ms[self.event.scene]

    @property
    def window_end_ms(self) -> int | None:
        onset = self.onset_ms
        return None if onset is None else onset + round(cast(ProactiveEvent, self.event).window_s * 1000)

    def judge_scenario(self) -> Scenario:
        """The scenario a Turn 2 judge is asked about a remark with: the event's expected keys as the
        current answers; a remark labelled `current` conveys the event. The event's scene reaches the
        judge as the judged message's camera block, never as the scenario's Turn 2 camera: a remark
        that only describes the new scene (a lexical judge would side it with that scene's words)
        has not conveyed the danger, the mistake or what is left behind."""
        event = self.event
        if event is None:
            raise ValueError(f"{self.scenario_id}: a quiet control has no event to judge a remark against")
        return Scenario(
            scenario_id=self.scenario_id,
            target_context="current",
            cue_type="object_state",
            activity_domain=self.activity_domain,
            cognitive_load="low",
            difficulty_tier="medium",
            time_gap_bucket="seconds",
            context_image=None,
            turn_1_image=None,
            turn_1_user=self.opening_user or "",
            turn_2_image=None,
            turn_2_user="",
            turn_3_repair_anchor="",
            turn_3_repair_anchor_deictic=None,
            notes=self.notes,
            answers=AnswerKey(
                current_answers=tuple(event.expected), prior_answers=(), clarify_indicators=(), abstain_indicators=()
            ),
            subset=SUBSET,
        )


def load_proactive(path: Path) -> tuple[ProactiveScenario, ...]:
    """The proactive scenarios in `path` (a JSON list); every problem raised together in a `BankError`."""
    problems: list[str] = []
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BankError([f"{path}: missing"]) from None
    except json.JSONDecodeError as exc:
        raise BankError([f"{path}: line {exc.lineno}: invalid JSON: {exc.msg}"]) from None
    except (UnicodeDecodeError, RecursionError):
        raise BankError([f"{path}: not a JSON list of proactive scenarios"]) from None
    if not isinstance(raw, list):
        raise BankError([f"{path}: expected a JSON list of proactive scenarios"])
    scenarios: list[ProactiveScenario] = []
    for index, item in enumerate(raw, start=1):
        where = f"{path}: scenario #{index}"
        if isinstance(item, dict) and isinstance(item.get("scenario_id"), str):
            where = (
                f"{path}: {item['scenario_id'][:80]!r}"
                if not SAFE_ID.fullmatch(item["scenario_id"])
                else f"{path}: {item['scenario_id']}"
            )
        scenario = _build(item, where, problems)
        if scenario is not None and any(s.scenario_id == scenario.scenario_id for s in scenarios):
            problems.append(f"{where}: field 'scenario_id' is used twice; every scenario_id must be unique")
        elif scenario is not None:
            scenarios.append(scenario)
    if problems:
        raise BankError(problems)
    return tuple(scenarios)


def _text(item: dict, name: str, where: str, problems: list[str], *, optional: bool = False) -> str | None:
    value = item.get(name)
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        problems.append(f"{where}: field '{name}' must be a non-empty string" + (" or null" if optional else ""))
        return None
    return value.strip()


def _number(value: Any, low: float, high: float) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        return None
    return float(value)


def _build(item: Any, where: str, problems: list[str]) -> ProactiveScenario | None:
    if not isinstance(item, dict):
        problems.append(f"{where}: expected a JSON object")
        return None
    before = len(problems)
    known = {"scenario_id", "kind", "event_type", "activity_domain", "opening_user", "scenes", "event", "notes"}
    for name in sorted(set(item) - known):
        problems.append(f"{where}: unknown field {name[:60]!r} (known: {', '.join(sorted(known))})")
    scenario_id = _text(item, "scenario_id", where, problems)
    if scenario_id is not None and not SAFE_ID.fullmatch(scenario_id):
        problems.append(f"{where}: field 'scenario_id' must be a plain name (letters, digits, '.', '_', '-')")
    kind = item.get("kind")
    if kind not in KINDS:
        problems.append(f"{where}: field 'kind' must be one of {', '.join(KINDS)}, got {kind!r}")
    event_type = item.get("event_type")
    if kind == "event" and event_type not in EVENT_TYPES:
        problems.append(f"{where}: field 'event_type' must be one of {', '.join(EVENT_TYPES)}, got {event_type!r}")
    if kind == "quiet" and event_type is not None:
        problems.append(f"{where}: field 'event_type' must be null in a quiet control")
    domain = _text(item, "activity_domain", where, problems)
    opening = _text(item, "opening_user", where, problems, optional=True)
    scenes = _scenes(item.get("scenes"), where, problems)
    event = None
    if kind == "event":
        event = _event(item.get("event"), scenes, where, problems)
    elif kind == "quiet" and item.get("event") is not None:
        problems.append(f"{where}: field 'event' must be null in a quiet control")
    notes = item.get("notes", "")
    if not isinstance(notes, str):
        problems.append(f"{where}: field 'notes' must be a string")
    if len(problems) > before:
        return None
    return ProactiveScenario(
        scenario_id=cast(str, scenario_id),
        kind=cast(str, kind),
        event_type=event_type,
        activity_domain=cast(str, domain),
        opening_user=opening,
        scenes=scenes,
        event=event,
        notes=notes,
    )


def _scenes(raw: Any, where: str, problems: list[str]) -> tuple[ProactiveScene, ...]:
    if not isinstance(raw, list) or not 2 <= len(raw) <= MAX_SCENES:
        problems.append(f"{where}: field 'scenes' must be a list of 2 to {MAX_SCENES} scenes")
        return ()
    scenes = []
    for index, scene in enumerate(raw):
        at = f"{where}: scenes[{index}]"
        if not isinstance(scene, dict) or set(scene) != {"camera", "duration_s"}:
            problems.append(f"{at}: expected an object with exactly 'camera' and 'duration_s'")
            continue
        camera = _text(scene, "camera", at, problems)
        duration = _number(scene["duration_s"], 1.0, MAX_SCENE_S)
        if duration is None:
            problems.append(f"{at}: field 'duration_s' must be a number of seconds from 1 to {MAX_SCENE_S:g}")
        if camera is not None and duration is not None:
            scenes.append(ProactiveScene(camera=camera, duration_s=duration))
    total = sum(scene.duration_s for scene in scenes)
    if len(scenes) == len(raw) and total < MIN_STREAM_S:
        problems.append(f"{where}: field 'scenes' lasts {total:g} s; a scenario streams at least {MIN_STREAM_S:g} s")
    return tuple(scenes)


def _event(raw: Any, scenes: tuple[ProactiveScene, ...], where: str, problems: list[str]) -> ProactiveEvent | None:
    if not isinstance(raw, dict) or set(raw) != {"scene", "window_s", "expected"}:
        problems.append(f"{where}: field 'event' must be an object with exactly 'scene', 'window_s' and 'expected'")
        return None
    scene = raw["scene"]
    if isinstance(scene, bool) or not isinstance(scene, int) or not 1 <= scene < max(len(scenes), 2):
        problems.append(
            f"{where}: event.scene must be the index of a scene after the first (1 to "
            f"{max(len(scenes) - 1, 1)}), got {scene!r}"
        )
        scene = None
    window = _number(raw["window_s"], MIN_WINDOW_S, MAX_WINDOW_S)
    if window is None:
        problems.append(
            f"{where}: event.window_s must be a number of seconds from {MIN_WINDOW_S:g} to {MAX_WINDOW_S:g}"
        )
    expected = raw["expected"]
    if not isinstance(expected, list) or not expected or not all(isinstance(e, str) and e.strip() for e in expected):
        problems.append(f"{where}: event.expected must be a non-empty list of non-empty strings")
        expected = None
    if scene is None or window is None or expected is None:
        return None
    if scenes:
        onset = sum(s.duration_s for s in scenes[:scene])
        total = sum(s.duration_s for s in scenes)
        if onset + window > total:
            problems.append(
                f"{where}: the event's window ends at {onset + window:g} s, after the stream "
                f"({total:g} s): lengthen the scenes after it or shorten window_s"
            )
    return ProactiveEvent(scene=scene, window_s=window, expected=tuple(e.strip() for e in expected))
