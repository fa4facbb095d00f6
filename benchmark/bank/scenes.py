"""The validator's scene spec check: every scenario's scenes (`core.scenes`) against the scenario.

What it checks, each problem naming the scenario, the scene (turn) and the field:

- the shipped bank has a spec for every scenario (another bank: a warning per
  scenario without one, once it has a `scenes/` folder at all); every spec reads;
- the scenes are the scenario's camera blocks: a scene for each of
  `context_image`, `turn_1_image`, `turn_2_image` that is set, none for one
  that is null;
- the answer keys' objects are in view where the keys need them: every id of
  `answer_objects.current_answers` in the Turn 2 scene and every id of
  `answer_objects.prior_answers` in the Turn 1 scene (a
  `pre_conversation_recall` item: current in Turn 1 or 2, prior in the
  context scene); both lists name at least one object, and each object's
  `name` is tied to its list (an entry of the list in the name, or the name
  in an entry or in the named repair anchor), so the spec cannot point at a
  bystander;
- nothing is carried over unsaid: no hand of a scene holds an object of the
  scene before it unless `carried.<scene>` lists it (the scenario says so:
  the same utensil lifted again, the watch still on the wrist);
- `screen_content` holds no answer token, as a camera block may not.
"""

from __future__ import annotations

from core.scenario import Bank, Scenario
from core.scenes import IMAGE_OF_SCENE, SCENE_NAMES, SceneSpec, read_scene_spec, scene_dir


def key_scenes(scenario: Scenario, answer_list: str) -> tuple[str, ...]:
    """The scenes an answer list's objects must be in (the first named is the usual one)."""
    recall = scenario.cue_type == "pre_conversation_recall"
    if answer_list == "current_answers":
        return ("turn_2", "turn_1") if recall else ("turn_2",)
    return ("context",) if recall else ("turn_1",)


def scene_spec_findings(bank: Bank, mentions, *, shipped: bool = False) -> tuple[list[str], list[str]]:
    """(problems, warnings) of the bank's scene specs. `mentions(text, token)` is the validator's
    word-bounded match (`benchmark.bank.authoring.mentions`), which `check_scene_specs` there passes in."""
    problems: list[str] = []
    warnings: list[str] = []
    folder = scene_dir(bank)
    if not folder.is_dir():
        if shipped:
            problems.append(f"{folder}: no scene specs (every shipped scenario has one)")
        return problems, warnings
    for scenario in bank.scenarios:
        path = folder / f"{scenario.scenario_id}.json"
        if not path.is_file():
            (problems if shipped else warnings).append(f"{scenario.scenario_id}: no scene spec ({path})")
            continue
        spec = read_scene_spec(path, scenario, problems)
        if spec is not None:
            problems += spec_problems(scenario, spec, mentions)
    return problems, warnings


def spec_problems(scenario: Scenario, spec: SceneSpec, mentions) -> list[str]:
    """Every way `spec` disagrees with `scenario`, one line each: scenario, scene, field."""
    sid = scenario.scenario_id
    out: list[str] = []
    for name in SCENE_NAMES:
        shown = getattr(scenario, IMAGE_OF_SCENE[name])
        if shown and name not in spec.scenes:
            out.append(f"{sid}: {name}: field 'scenes.{name}' is missing (the scenario has {IMAGE_OF_SCENE[name]})")
        elif not shown and name in spec.scenes:
            out.append(
                f"{sid}: {name}: field 'scenes.{name}' describes a frame the scenario does not have "
                f"({IMAGE_OF_SCENE[name]} is null)"
            )
    anchor = scenario.turn_3_repair_anchor
    for answer_list in ("current_answers", "prior_answers"):
        ids = spec.answer_objects.get(answer_list, ())
        allowed = key_scenes(scenario, answer_list)
        field = f"answer_objects.{answer_list}"
        if not ids:
            out.append(f"{sid}: {allowed[0]}: field '{field}' names no object (the objects its answers are about)")
        entries = getattr(scenario.answers, answer_list)
        for object_id in ids:
            found = [
                (n, o) for n in allowed if n in spec.scenes and (o := spec.scenes[n].object(object_id)) is not None
            ]
            if not found:
                out.append(
                    f"{sid}: {allowed[0]}: field '{field}': object {object_id!r} is not in the "
                    f"{' or '.join(allowed)} scene"
                )
                continue
            scene_name, obj = found[0]
            if not (
                any(mentions(obj.name, entry) for entry in entries)
                or any(mentions(entry, obj.name) for entry in entries)
                or mentions(anchor, obj.name)
            ):
                out.append(
                    f"{sid}: {scene_name}: field '{field}': object {object_id!r} is named {obj.name!r}, "
                    f"which neither holds an entry of {answer_list} nor is named by one or by the repair anchor"
                )
    shown = [n for n in SCENE_NAMES if n in spec.scenes]
    for earlier, later in zip(shown, shown[1:]):
        before, after = spec.scenes[earlier], spec.scenes[later]
        allowed_over = set(spec.carried.get(later, ()))
        for hand in after.hands:
            if hand.holds and before.object(hand.holds) is not None and hand.holds not in allowed_over:
                out.append(
                    f"{sid}: {later}: field 'hands': the {hand.side} hand holds {hand.holds!r}, an object "
                    f"of the {earlier} scene (list it in carried.{later} only where the scenario says so)"
                )
        for object_id in sorted(allowed_over - after.held()):
            out.append(f"{sid}: {later}: field 'carried.{later}': {object_id!r} is not held in the {later} scene")
    for scene_name, scene in spec.scenes.items():
        for obj in scene.objects:
            if not obj.screen_content:
                continue
            for entry in scenario.answers.current_answers + scenario.answers.prior_answers:
                if mentions(obj.screen_content, entry):
                    out.append(
                        f"{sid}: {scene_name}: field 'screen_content' of {obj.id!r} holds answer token {entry!r}"
                    )
    return out
