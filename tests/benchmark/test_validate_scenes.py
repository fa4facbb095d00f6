"""The validator's scene spec check: the shipped specs pass, and a spec that drops an answer-key
object, hands back an earlier object unsaid, misses a camera turn, shows an answer token or cannot
be read fails with the scenario, the scene (turn) and the field named."""

from __future__ import annotations

import json
import shutil

import pytest

from benchmark.bank.scenes import key_scenes
from benchmark.bank.validate import check_scene_specs, validate_bank
from core.scenario import load_bank
from core.scenes import SceneError, load_scene_specs, parse_scene


def _bank_copy(tmp_path, edit=None, scenario="sc-01"):
    """The shipped bank copied, its scenario's spec passed through `edit` (a function of the JSON)."""
    folder = tmp_path / "v1"
    shutil.copytree("benchmark/v1", folder)
    if edit is not None:
        path = folder / "scenes" / f"{scenario}.json"
        data = json.loads(path.read_text())
        edit(data)
        path.write_text(json.dumps(data))
    return load_bank(folder)


def _problems(bank):
    return check_scene_specs(bank, shipped=True).problems


def test_every_shipped_scenario_has_a_spec_that_passes():
    bank = load_bank()
    assert len(load_scene_specs(bank, required=True)) == len(bank.scenarios) == 70
    check = next(c for c in validate_bank(bank) if c.name == "scene_specs")
    assert check.ok and not check.warnings, check.problems[:5]


def test_a_spec_missing_an_answer_key_object_fails_naming_scenario_turn_and_field(tmp_path):
    def drop_screwdriver(data):
        scene = data["scenes"]["turn_2"]
        scene["objects"] = [o for o in scene["objects"] if o["id"] != "screwdriver"]
        scene["hands"] = [h for h in scene["hands"] if h.get("holds") != "screwdriver"]

    problems = _problems(_bank_copy(tmp_path, drop_screwdriver))
    assert problems == [
        "sc-01: turn_2: field 'answer_objects.current_answers': object 'screwdriver' is not in the turn_2 scene"
    ]
    check = next(c for c in validate_bank(_bank_copy(tmp_path / "again", drop_screwdriver)) if c.name == "scene_specs")
    assert not check.ok


def test_the_prior_object_must_be_in_turn_1_and_a_recall_items_in_the_context(tmp_path):
    def drop_hammer(data):
        data["scenes"]["turn_1"]["objects"] = [o for o in data["scenes"]["turn_1"]["objects"] if o["id"] != "hammer"]
        data["scenes"]["turn_1"]["hands"] = [{"side": "left", "touches": "strip"}]

    assert _problems(_bank_copy(tmp_path, drop_hammer)) == [
        "sc-01: turn_1: field 'answer_objects.prior_answers': object 'hammer' is not in the turn_1 scene"
    ]
    bank = load_bank()
    assert key_scenes(bank.get("sc-47"), "prior_answers") == ("context",)
    assert key_scenes(bank.get("sc-01"), "current_answers") == ("turn_2",)

    def salt_only_in_turn_1(data):
        data["scenes"]["context"]["objects"] = [o for o in data["scenes"]["context"]["objects"] if o["id"] != "salt"]
        data["scenes"]["context"]["hands"] = []

    assert _problems(_bank_copy(tmp_path / "recall", salt_only_in_turn_1, "sc-47")) == [
        "sc-47: context: field 'answer_objects.prior_answers': object 'salt' is not in the context scene"
    ]


def test_an_earlier_object_held_again_fails_unless_the_spec_carries_it(tmp_path):
    def hammer_back_in_hand(data):
        data["scenes"]["turn_2"]["hands"] = [
            {"side": "right", "holds": "hammer"},
            {"side": "left", "holds": "screwdriver"},
        ]

    assert _problems(_bank_copy(tmp_path, hammer_back_in_hand)) == [
        "sc-01: turn_2: field 'hands': the right hand holds 'hammer', an object of the turn_1 scene (list it in "
        "carried.turn_2 only where the scenario says so)"
    ]

    def said_so(data):
        hammer_back_in_hand(data)
        data["carried"] = {"turn_2": ["hammer"]}

    assert _problems(_bank_copy(tmp_path / "said", said_so)) == []

    def carried_but_not_held(data):
        data["carried"] = {"turn_2": ["hammer"]}

    assert _problems(_bank_copy(tmp_path / "idle", carried_but_not_held)) == [
        "sc-01: turn_2: field 'carried.turn_2': 'hammer' is not held in the turn_2 scene"
    ]


def test_scenes_match_the_camera_blocks_and_the_key_objects_are_named_for_the_keys(tmp_path):
    def no_turn_2(data):
        del data["scenes"]["turn_2"]

    problems = _problems(_bank_copy(tmp_path, no_turn_2))
    assert "sc-01: turn_2: field 'scenes.turn_2' is missing (the scenario has turn_2_image)" in problems

    def invented_context(data):
        data["scenes"]["context"] = data["scenes"]["turn_1"]

    assert _problems(_bank_copy(tmp_path / "ctx", invented_context))[0] == (
        "sc-01: context: field 'scenes.context' describes a frame the scenario does not have (context_image is null)"
    )

    def bystander(data):
        data["answer_objects"]["current_answers"] = ["strip"]

    assert _problems(_bank_copy(tmp_path / "by", bystander)) == [
        "sc-01: turn_2: field 'answer_objects.current_answers': object 'strip' is named 'pine strip', "
        "which neither holds an entry of current_answers nor is named by one or by the repair anchor"
    ]


def test_screen_content_may_not_show_an_answer_token(tmp_path):
    def leak(data):
        data["scenes"]["turn_2"]["objects"][0]["screen_content"] = "ERROR CODE"

    assert _problems(_bank_copy(tmp_path, leak, "sc-44")) == [
        "sc-44: turn_2: field 'screen_content' of 'psu' holds answer token 'error code'"
    ]


def test_unreadable_specs_name_file_scenario_scene_and_field(tmp_path):
    def bad_place(data):
        data["scenes"]["turn_1"]["objects"][0]["place"] = "somewhere"
        data["scenes"]["turn_1"]["setting"] = "moon"

    bank = _bank_copy(tmp_path, bad_place)
    problems = _problems(bank)
    assert any(
        p.endswith("sc-01.json: sc-01: turn_1: field 'setting' must be one of the known settings, got 'moon'")
        for p in problems
    )
    assert any("sc-01: turn_1: objects[0]: field 'place' must be one of" in p for p in problems)
    with pytest.raises(SceneError) as caught:
        load_scene_specs(bank)
    assert "sc-01: turn_1: objects[0]: field 'place'" in str(caught.value)
    (tmp_path / "v1" / "scenes" / "sc-02.json").unlink()
    assert "sc-02: no scene spec" in "\n".join(_problems(load_bank(tmp_path / "v1")))
    assert check_scene_specs(load_bank(tmp_path / "v1"), shipped=False).warnings[0].startswith("sc-02: no scene spec")


def test_a_hand_must_hold_an_object_of_its_own_scene():
    problems: list[str] = []
    scene = parse_scene(
        {
            "setting": "desk",
            "objects": [{"id": "mug", "name": "mug", "picture": "cup"}],
            "hands": [{"side": "right", "holds": "pen"}],
        },
        "x: sc-99: turn_1",
        problems,
    )
    assert scene is None
    assert problems == ["x: sc-99: turn_1: hands[0]: field 'holds' names 'pen', which is not an object of this scene"]
