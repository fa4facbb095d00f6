"""Scene specs: what each camera frame of a scenario shows, as parts a renderer can draw.

A scenario's camera blocks are prose for the text proxy. Its scene spec says
the same scenes as parts: the setting, the objects in view (each with its
place in the frame, its size and its state), what each hand holds or touches,
and a screen's or label's text only where the scene itself shows text
(`screen_content`). `media_effects.pictograph` draws a spec as a frame; the
validator (`benchmark.bank.scenes`) checks every spec against its
scenario.

One `Scene` stands alone (it names no turn and no scenario), so a timeline of
scenes (a proactive trial) can hold a list of them. A `SceneSpec` is one
scenario's scenes by name (`context`, `turn_1`, `turn_2`), the objects each
answer list is about (`answer_objects`), and the earlier objects a later
scene's hands may hold again (`carried`).

Storage: one JSON file per scenario, `scenes/<scenario_id>.json` beside the
bank's files (docs/schema.md, "Scene specs"); a proactive scenario's scenes,
in the order it plays them, in `scenes/proactive/<scenario_id>.json` as
`{"scenario_id": ..., "timeline": [scene, ...]}` (`read_timeline`). A scenario's file is optional
for loading the bank; `load_scene_specs` reads those that exist and raises
one `SceneError` listing every problem, each naming file, scenario, scene
and field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from core.scenario import SAFE_ID, Bank, InputProblems, Scenario

SCENE_DIR = "scenes"
PROACTIVE_SCENE_DIR = "proactive"  # inside SCENE_DIR: the proactive scenarios' timelines
SCENE_NAMES = ("context", "turn_1", "turn_2")  # in the order the glasses show them
IMAGE_OF_SCENE = {"context": "context_image", "turn_1": "turn_1_image", "turn_2": "turn_2_image"}
# the frame is read from the wearer's eyes: the top row is far away, the bottom row near the hands
ROWS = ("top", "middle", "bottom")
COLUMNS = ("left", "center", "right")
PLACES = tuple(f"{row} {column}" for row in ROWS for column in COLUMNS) + (
    "left edge",
    "right edge",
    "top edge",
    "bottom edge",
)  # half out of the frame
SIZES = ("tiny", "small", "medium", "large", "huge")
# what a state looks like is the renderer's; which states exist is the spec's
STATES = (
    "boiling",
    "steaming",
    "smoking",
    "lit",
    "glowing",
    "blinking",
    "wet",
    "dripping",
    "dry",
    "cracked",
    "wilted",
    "open",
    "empty",
    "full",
    "dirty",
    "foamy",
    "spilled",
    "on its side",
    "spinning",
    "moving",
    "blurred",
)
SETTINGS = (
    "kitchen counter",
    "stovetop",
    "workbench",
    "garage floor",
    "painted wall",
    "garden",
    "desk",
    "office",
    "bathroom",
    "living room",
    "street",
    "car interior",
    "engine bay",
    "gym",
    "trail",
    "beach",
    "yard",
    "shop counter",
    "windowsill",
    "hallway ceiling",
    "laundry room",
    "sewing table",
    "dining table",
    "dim room",
    "under sink",
    "driveway",
    "waterfall",
    "forest",
    "road",
    "bike stand",
)
HANDS = ("left", "right")
# objects one scene may hold: the bank's busiest scene has 6, and drawing one takes about 40 ms an object, so a
# spec of thousands (83 s for 2,000) is refused before anything is drawn
MAX_OBJECTS = 24
ANSWER_OBJECT_LISTS = ("current_answers", "prior_answers")


class SceneError(InputProblems):
    """Unreadable or invalid scene specs."""


@dataclass(frozen=True, kw_only=True)
class SceneObject:
    id: str  # the same physical object keeps its id from scene to scene
    name: str  # what it is, in the answer keys' words ("claw hammer")
    picture: str  # the entry of the picture set drawn for it (`media_effects.pictures`); default: the name
    place: str = "middle center"
    size: str = "medium"
    states: tuple[str, ...] = ()
    colour: str | None = None  # a drawn shape's colour (a patch of paint, a liquid), "#rrggbb"
    screen_content: str | None = None  # text the scene itself shows on this object (a screen, a label)


@dataclass(frozen=True, kw_only=True)
class Hand:
    side: str  # "left" or "right"
    holds: str | None = None  # an object id
    touches: str | None = None  # an object id (a fingertip on it, a palm pressing it)


@dataclass(frozen=True, kw_only=True)
class Scene:
    setting: str
    objects: tuple[SceneObject, ...]
    hands: tuple[Hand, ...] = ()
    light: str = "normal"  # "normal", "dim" or "bright"

    def object(self, object_id: str) -> SceneObject | None:
        return next((o for o in self.objects if o.id == object_id), None)

    def held(self) -> set[str]:
        return {hand.holds for hand in self.hands if hand.holds}


@dataclass(frozen=True, kw_only=True)
class SceneSpec:
    scenario_id: str
    scenes: dict[str, Scene]
    answer_objects: dict[str, tuple[str, ...]]  # answer list -> ids of the objects it is about
    carried: dict[str, tuple[str, ...]] = field(default_factory=dict)  # scene -> earlier ids its hands may hold
    source: Path | None = None


def scene_dir(bank: Bank) -> Path:
    source = Path(bank.source)
    return (source if source.is_dir() else source.parent) / SCENE_DIR


def scene_file(bank: Bank, scenario_id: str) -> Path:
    return scene_dir(bank) / f"{scenario_id}.json"


def load_scene_specs(bank: Bank, *, required: bool = False) -> dict[str, SceneSpec]:
    """The scene specs of the bank's scenarios that have one (`required`: every scenario must)."""
    problems: list[str] = []
    specs: dict[str, SceneSpec] = {}
    for scenario in bank.scenarios:
        path = scene_file(bank, scenario.scenario_id)
        if not path.is_file():
            if required:
                problems.append(f"{path}: {scenario.scenario_id}: no scene spec")
            continue
        spec = read_scene_spec(path, scenario, problems)
        if spec is not None:
            specs[scenario.scenario_id] = spec
    if problems:
        raise SceneError(problems)
    return specs


def scene_spec_in(directory: str | Path, scenario: Scenario) -> SceneSpec:
    """One scenario's spec from a scenes folder; a `SceneError` when it is missing or invalid."""
    problems: list[str] = []
    path = Path(directory) / f"{scenario.scenario_id}.json"
    spec = read_scene_spec(path, scenario, problems) if path.is_file() else None
    if spec is None:
        raise SceneError(problems or [f"{path}: {scenario.scenario_id}: no scene spec"])
    return spec


def timeline_file(directory: str | Path, scenario_id: str) -> Path:
    """A proactive scenario's scenes, in a bank's scenes folder."""
    return Path(directory) / PROACTIVE_SCENE_DIR / f"{scenario_id}.json"


def read_timeline(directory: str | Path, scenario_id: str, scenes: int) -> tuple[Scene, ...]:
    """A proactive scenario's `scenes` scenes from a bank's scenes folder, in the order played; a
    `SceneError` naming the file, the scene and the field when it is missing or invalid."""
    path = timeline_file(directory, scenario_id)
    problems: list[str] = []
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SceneError([f"{path}: {scenario_id}: no scene spec"]) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SceneError([f"{path}: unreadable ({str(exc)[:120]})"]) from None
    where = f"{path}: {scenario_id}"
    if not isinstance(raw, dict) or set(raw) != {"scenario_id", "timeline"} or raw["scenario_id"] != scenario_id:
        raise SceneError([f'{where}: expected {{"scenario_id": {scenario_id!r}, "timeline": [scene, ...]}}'])
    timeline = raw["timeline"]
    if not isinstance(timeline, list) or len(timeline) != scenes:
        raise SceneError([f"{where}: field 'timeline' must list the scenario's {scenes} scenes, in order"])
    parsed = [parse_scene(body, f"{where}: timeline[{i}]", problems) for i, body in enumerate(timeline)]
    if problems:
        raise SceneError(problems)
    return tuple(scene for scene in parsed if scene is not None)  # none is None: problems would be raised


def scenes_sha256(bank: Bank) -> str | None:
    """One hash over the scene spec files of the bank's scenarios (None: none has one), for a run's manifest;
    a proactive bank's are its timelines."""
    import hashlib

    digest, found = hashlib.sha256(), False
    for scenario in sorted(bank.scenarios, key=lambda s: s.scenario_id):
        path = (
            timeline_file(scene_dir(bank), scenario.scenario_id)
            if getattr(scenario, "kind", None)
            else scene_file(bank, scenario.scenario_id)
        )
        if path.is_file():
            found = True
            digest.update(scenario.scenario_id.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest() if found else None


def read_scene_spec(path: Path, scenario: Scenario, problems: list[str]) -> SceneSpec | None:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{path}: unreadable ({exc})")
        return None
    except json.JSONDecodeError as exc:
        problems.append(f"{path}: line {exc.lineno}: invalid JSON: {exc.msg}")
        return None
    return parse_scene_spec(raw, scenario.scenario_id, str(path), problems, source=path)


def parse_scene_spec(
    raw: Any, scenario_id: str, where: str, problems: list[str], *, source: Path | None = None
) -> SceneSpec | None:
    """A spec from its JSON form; each problem names `where`, the scenario, the scene and the field."""
    where = f"{where}: {scenario_id}"
    before = len(problems)
    if not isinstance(raw, dict):
        problems.append(f"{where}: expected a JSON object")
        return None
    unknown = set(raw) - {"scenario_id", "scenes", "answer_objects", "carried"}
    if unknown:
        problems.append(f"{where}: unknown field {sorted(unknown)[0]!r}")
    if raw.get("scenario_id") != scenario_id:
        problems.append(f"{where}: field 'scenario_id' must be {scenario_id!r}, got {raw.get('scenario_id')!r}")
    scenes: dict[str, Scene] = {}
    raw_scenes = raw.get("scenes")
    if not isinstance(raw_scenes, dict) or not raw_scenes:
        problems.append(f"{where}: field 'scenes' must be an object of scene name -> scene")
        raw_scenes = {}
    for name, body in raw_scenes.items():
        if name not in SCENE_NAMES:
            problems.append(f"{where}: scenes: unknown scene {name!r} (one of {', '.join(SCENE_NAMES)})")
            continue
        scene = parse_scene(body, f"{where}: {name}", problems)
        if scene is not None:
            scenes[name] = scene
    answer_objects = _id_lists(raw.get("answer_objects"), ANSWER_OBJECT_LISTS, f"{where}: answer_objects", problems)
    carried = _id_lists(raw.get("carried", {}), SCENE_NAMES, f"{where}: carried", problems)
    if len(problems) > before:
        return None
    return SceneSpec(
        scenario_id=scenario_id, scenes=scenes, answer_objects=answer_objects, carried=carried, source=source
    )


def _id_lists(raw: Any, keys: tuple[str, ...], where: str, problems: list[str]) -> dict[str, tuple[str, ...]]:
    if not isinstance(raw, dict):
        problems.append(f"{where}: expected an object of {' / '.join(keys)} -> list of object ids")
        return {}
    out = {}
    for key, ids in raw.items():
        if key not in keys:
            problems.append(f"{where}: unknown key {key!r} (one of {', '.join(keys)})")
        elif not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            problems.append(f"{where}: {key}: expected a list of object ids")
        else:
            out[key] = tuple(ids)
    return out


def parse_scene(raw: Any, where: str, problems: list[str]) -> Scene | None:
    """One scene from its JSON form (a proactive timeline can hold these on their own)."""
    before = len(problems)
    if not isinstance(raw, dict):
        problems.append(f"{where}: expected a JSON object")
        return None
    unknown = set(raw) - {"setting", "objects", "hands", "light"}
    if unknown:
        problems.append(f"{where}: unknown field {sorted(unknown)[0]!r}")
    setting = raw.get("setting")
    if setting not in SETTINGS:
        problems.append(f"{where}: field 'setting' must be one of the known settings, got {setting!r}")
    light = raw.get("light", "normal")
    if light not in ("normal", "dim", "bright"):
        problems.append(f"{where}: field 'light' must be normal, dim or bright, got {light!r}")
    raw_objects = raw.get("objects")
    if not isinstance(raw_objects, list) or not raw_objects:
        problems.append(f"{where}: field 'objects' must be a non-empty list")
        raw_objects = []
    if len(raw_objects) > MAX_OBJECTS:
        problems.append(
            f"{where}: field 'objects' holds {len(raw_objects):,} objects, over the {MAX_OBJECTS} a scene may hold"
        )
        return None
    objects = [
        o
        for i, body in enumerate(raw_objects)
        if (o := _parse_object(body, f"{where}: objects[{i}]", problems)) is not None
    ]
    ids = [o.id for o in objects]
    seen: set[str] = set()
    dups: set[str] = set()
    for object_id in ids:  # seen before: a duplicate
        if object_id in seen:
            dups.add(object_id)
        seen.add(object_id)
    for dup in sorted(dups):
        problems.append(f"{where}: objects: id {dup!r} used twice")
    hands = []
    raw_hands = raw.get("hands", [])
    if not isinstance(raw_hands, list):
        problems.append(f"{where}: field 'hands' must be a list")
        raw_hands = []
    for i, body in enumerate(raw_hands):
        hand = _parse_hand(body, f"{where}: hands[{i}]", set(ids), problems)
        if hand is not None:
            hands.append(hand)
    sides = [h.side for h in hands]
    if len(set(sides)) != len(sides):
        problems.append(f"{where}: hands: a hand is listed twice")
    held = [h.holds for h in hands if h.holds]
    if len(set(held)) != len(held):
        problems.append(f"{where}: hands: both hands hold the same object")
    if len(problems) > before:
        return None
    return Scene(setting=cast(str, setting), objects=tuple(objects), hands=tuple(hands), light=light)


def _parse_object(raw: Any, where: str, problems: list[str]) -> SceneObject | None:
    if not isinstance(raw, dict):
        problems.append(f"{where}: expected a JSON object")
        return None
    before = len(problems)
    unknown = set(raw) - {"id", "name", "picture", "place", "size", "states", "colour", "screen_content"}
    if unknown:
        problems.append(f"{where}: unknown field {sorted(unknown)[0]!r}")
    object_id, name = raw.get("id"), raw.get("name")
    if not isinstance(object_id, str) or not SAFE_ID.fullmatch(object_id):
        problems.append(f"{where}: field 'id' must be a plain name, got {object_id!r}")
    if not isinstance(name, str) or not name.strip():
        problems.append(f"{where}: field 'name' must be a non-empty string")
    picture = raw.get("picture", name)
    if not isinstance(picture, str):
        problems.append(f"{where}: field 'picture' must be a string")
    place, size = raw.get("place", "middle center"), raw.get("size", "medium")
    if place not in PLACES:
        problems.append(f"{where}: field 'place' must be one of {', '.join(PLACES)}, got {place!r}")
    if size not in SIZES:
        problems.append(f"{where}: field 'size' must be one of {', '.join(SIZES)}, got {size!r}")
    states = raw.get("states", [])
    if not isinstance(states, list) or any(s not in STATES for s in states):
        problems.append(f"{where}: field 'states' must be a list of known states ({', '.join(STATES)}), got {states!r}")
    colour = raw.get("colour")
    if colour is not None and not (
        isinstance(colour, str)
        and len(colour) == 7
        and colour.startswith("#")
        and all(c in "0123456789abcdefABCDEF" for c in colour[1:])
    ):
        problems.append(f"{where}: field 'colour' must be '#rrggbb', got {colour!r}")
    text = raw.get("screen_content")
    if text is not None and (not isinstance(text, str) or not text.strip() or len(text) > 40):
        problems.append(f"{where}: field 'screen_content' must be a short non-empty string (at most 40 characters)")
    if len(problems) > before:
        return None
    return SceneObject(
        id=cast(str, object_id),
        name=cast(str, name).strip(),
        picture=cast(str, picture),
        place=place,
        size=size,
        states=tuple(states),
        colour=colour,
        screen_content=text,
    )


def _parse_hand(raw: Any, where: str, ids: set[str], problems: list[str]) -> Hand | None:
    if not isinstance(raw, dict):
        problems.append(f"{where}: expected a JSON object")
        return None
    before = len(problems)
    unknown = set(raw) - {"side", "holds", "touches"}
    if unknown:
        problems.append(f"{where}: unknown field {sorted(unknown)[0]!r}")
    if raw.get("side") not in HANDS:
        problems.append(f"{where}: field 'side' must be left or right, got {raw.get('side')!r}")
    for key in ("holds", "touches"):
        value = raw.get(key)
        if value is not None and value not in ids:
            problems.append(f"{where}: field '{key}' names {value!r}, which is not an object of this scene")
    if raw.get("holds") and raw.get("touches"):
        problems.append(f"{where}: a hand either holds or touches an object, not both")
    if len(problems) > before:
        return None
    return Hand(side=raw["side"], holds=raw.get("holds"), touches=raw.get("touches"))


def scene_to_json(scene: Scene) -> dict:
    """The JSON form of one scene (what `parse_scene` reads back)."""
    objects = []
    for o in scene.objects:
        body: dict[str, Any] = {"id": o.id, "name": o.name}
        if o.picture != o.name:
            body["picture"] = o.picture
        body.update(place=o.place, size=o.size)
        for key, value in (("states", list(o.states)), ("colour", o.colour), ("screen_content", o.screen_content)):
            if value:
                body[key] = value
        objects.append(body)
    hands = [
        {k: v for k, v in (("side", h.side), ("holds", h.holds), ("touches", h.touches)) if v} for h in scene.hands
    ]
    out: dict[str, Any] = {"setting": scene.setting, "objects": objects, "hands": hands}
    if scene.light != "normal":
        out["light"] = scene.light
    return out
