"""wearsim validate: the v1.1 authoring rules (errors on the shipped bank, warnings on any other bank) and the
shipped bank's contrast subset, checked on its own."""

import dataclasses
import json

from benchmark.bank.authoring import GENERIC_TOKENS, is_generic, sentences
from benchmark.bank.validate import (
    check_answer_lists,
    check_camera_blocks,
    check_near_duplicates,
    check_object_names,
    check_repair_anchors,
    check_structure,
)
from core.nouns import object_nouns_in
from core.scenario import load_bank
from tests.benchmark.test_validate import _with, wearsim

# The authoring rules of v1.1: errors on the shipped bank, warnings on any other bank


def test_any_answer_token_in_a_camera_block_fails_on_the_shipped_bank():
    # v1's sc-29 said "hallway ceiling" and "ring stain": "ceiling" is one of its prior answers
    bank = _with(load_bank(), "sc-29", turn_1_image="A hallway ceiling shows a brown water stain. Paint flakes.")
    result = check_object_names(bank, shipped=True)
    assert result.problems == [
        "sc-29: field 'turn_1_image' contains answer token 'ceiling'",
        "sc-29: field 'turn_1_image' contains answer token 'water stain'",
    ]
    elsewhere = check_object_names(bank)
    assert elsewhere.ok and elsewhere.warnings == result.problems
    # plural and singular forms are the same token: "herbs" is found as "herb"
    herbs = _with(load_bank(), "sc-38", turn_2_image="A ledge of green sprigs. One herb is pinched.")
    assert (
        "sc-38: field 'turn_2_image' names an object: 'herb' (an answer token)"
        in check_object_names(herbs, shipped=True).problems
    )


def test_a_listed_noun_inside_an_answer_phrase_or_in_the_background_fails_on_the_shipped_bank():
    # v1's sc-01 aimed the driver "at a small brass hinge"; "hinge screw" is one of its answers
    bank = _with(load_bank(), "sc-01", turn_2_image="A slim handle aimed at a small brass hinge. A fence behind.")
    problems = check_object_names(bank, shipped=True).problems
    assert problems == [
        "sc-01: field 'turn_2_image' names an object: 'hinge' (part of an answer token)",
        "sc-01: field 'turn_2_image' names an object: 'fence' (not an answer token; the shipped "
        "bank names no listed object)",
    ]
    assert len(check_object_names(bank).warnings) == 2 and check_object_names(bank).ok


def test_the_noun_list_holds_the_nouns_v1_camera_blocks_named():
    found = object_nouns_in(
        "tweezers, a tub, a fence, a chain, a hinge, a chart, a graph, a histogram, a squat "
        "rack, a bulb, a spout, a basin, a receipt, a card reader, a presser foot, the "
        "windowsill, herbs, the headstock, a vehicle, the driver's seat"
    )
    assert found == [
        "tweezers",
        "tub",
        "fence",
        "chain",
        "hinge",
        "chart",
        "graph",
        "histogram",
        "rack",
        "bulb",
        "spout",
        "basin",
        "receipt",
        "card reader",
        "presser foot",
        "windowsill",
        "herb",
        "headstock",
        "vehicle",
        "seat",
    ]


def test_camera_blocks_are_two_to_four_sentences_and_never_narrate_an_absence():
    assert len(sentences("A rod reads 12.0 V. A hand holds it! Is it lit? Yes.")) == 4
    bank = load_bank()
    one = _with(bank, "sc-13", turn_1_image="A dark round vessel holds a pale liquid.")
    five = _with(bank, "sc-13", turn_2_image="One. Two. Three. Four. Five.")
    assert check_camera_blocks(one, shipped=True).problems == [
        "sc-13: field 'turn_1_image' has 1 sentence; a camera block has 2 to 4"
    ]
    assert check_camera_blocks(five, shipped=True).problems == [
        "sc-13: field 'turn_2_image' has 5 sentences; a camera block has 2 to 4"
    ]
    # v1's absent_referent blocks said what was not there
    for sid, text, phrase in (
        ("sc-41", "A steel basin with running water. Nothing from the garden is visible.", "Nothing from"),
        ("sc-38", "A sunny ledge of green sprigs. The burner and its vessel are out of frame.", "out of frame"),
        (
            "sc-39",
            "An open roll-up opening and a paved strip. The work area is behind the viewer.",
            "behind the viewer",
        ),
    ):
        problems = check_camera_blocks(_with(bank, sid, turn_2_image=text), shipped=True).problems
        assert problems == [
            f"{sid}: field 'turn_2_image' narrates an absence ({phrase!r}); describe what the camera shows"
        ]
    assert check_camera_blocks(one).ok and len(check_camera_blocks(one).warnings) == 1
    assert check_camera_blocks(bank, shipped=True).ok


def test_generic_answer_tokens_and_bare_numbers_are_rejected():
    for token in ("fine", "wait", "normal", "ready", "set", "water", "96", "8,400", "12.0", " Ready "):
        assert is_generic(token), token
    for token in ("ready to serve", "96 bpm", "12 volts", "water stain", "dry to the touch"):
        assert not is_generic(token), token
    assert {"fine", "wait", "normal", "ready", "set", "water"} <= GENERIC_TOKENS
    bank = load_bank()
    key = bank.get("sc-13").answers
    padded = dataclasses.replace(key, current_answers=key.current_answers + ("ready", "96"))
    problems = check_answer_lists(_with(bank, "sc-13", answers=padded), shipped=True).problems
    assert problems == [
        "sc-13: answer list 'current_answers' holds the generic token 'ready' (it fires on unrelated replies)",
        "sc-13: answer list 'current_answers' holds the generic token '96' (it fires on unrelated replies)",
    ]


def test_answer_lists_need_eight_entries_with_phrases_and_no_shared_entry():
    bank = load_bank()
    key = bank.get("sc-01").answers
    thin = dataclasses.replace(
        key,
        current_answers=("screwdriver", "phillips", "driver", "tip", "bit"),
        prior_answers=key.prior_answers + ("Screwdriver",),
    )
    problems = check_answer_lists(_with(bank, "sc-01", answers=thin), shipped=True).problems
    assert problems == [
        "sc-01: answer list 'current_answers' has 5 entries; at least 8 (object name, technique and state words)",
        "sc-01: answer list 'current_answers' has 0 multi-word phrases; at least 3",
        "sc-01: answer list 'prior_answers': 'Screwdriver' must be lower-case and trimmed",
        "sc-01: 'screwdriver' is in both current_answers and prior_answers",
    ]
    assert check_answer_lists(bank, shipped=True).ok


def test_clarify_and_abstain_lists_are_written_per_scenario():
    bank = load_bank()
    boilerplate = ("which one", "do you mean", "could you clarify", "which of", "not sure which")
    copied = dataclasses.replace(
        bank,
        scenarios=tuple(
            dataclasses.replace(s, answers=dataclasses.replace(s.answers, clarify_indicators=boilerplate))
            for s in bank.scenarios
        ),
    )
    problems = check_answer_lists(copied, shipped=True).problems
    assert len(problems) == len(bank.scenarios)
    assert problems[0] == (
        "sc-01: answer list 'clarify_indicators' has 0 entries of its own; at least 2 written for "
        "this scenario (not one list copied across the bank)"
    )
    # one scenario's list copied into another fails both
    copied_list = bank.get("sc-01").answers.abstain_indicators
    twin = dataclasses.replace(bank.get("sc-02").answers, abstain_indicators=copied_list)
    problems = check_answer_lists(_with(bank, "sc-02", answers=twin), shipped=True).problems
    assert [p.split(":")[0] for p in problems] == ["sc-01", "sc-02"]


def test_the_named_repair_anchor_names_the_intended_and_the_wrong_object():
    bank = load_bank()
    # v1's sc-40 anchor named only the note
    one_sided = _with(bank, "sc-40", turn_3_repair_anchor="I mean the sticky note on the laptop lid earlier.")
    assert check_repair_anchors(one_sided, shipped=True).problems == [
        "sc-40: field 'turn_3_repair_anchor' names nothing from 'current_answers'; it must name the intended and "
        "the wrong object"
    ]
    assert check_repair_anchors(one_sided).ok and len(check_repair_anchors(one_sided).warnings) == 1
    assert check_repair_anchors(bank, shipped=True).ok


def test_check_3_turn_3_target_context():
    bank = load_bank()
    assert check_structure(bank, shipped=True).ok
    problems = check_structure(_with(bank, "sc-13", turn_3_target_context="later"), shipped=False).problems
    assert problems == [
        "sc-13: field 'turn_3_target_context' is 'later'; allowed: current, prior, clarify, abstain or null"
    ]
    # a current item's repair cannot point elsewhere
    assert check_structure(_with(bank, "sc-13", turn_3_target_context="prior"), shipped=False).problems == [
        "sc-13: field 'turn_3_target_context' is 'prior' on a current item; a repair of a current or prior item "
        "points at the same context"
    ]
    assert check_structure(_with(bank, "sc-13", turn_3_target_context="current"), shipped=False).ok
    # a shipped clarify item says which context its named anchor resolves to
    assert check_structure(_with(bank, "sc-08", turn_3_target_context=None), shipped=True).problems == [
        "sc-08: field 'turn_3_target_context' must be current or prior on a shipped clarify item: its named repair "
        "anchor resolves the ambiguity"
    ]
    assert check_structure(_with(bank, "sc-08", turn_3_target_context=None), shipped=False).ok


def test_the_contrast_subset_is_checked_on_its_own():
    bank = load_bank()
    assert check_structure(bank, shipped=True).ok
    # a contrast item more (or fewer) leaves the bank subset's distribution alone but fails the contrast counts
    extra = dataclasses.replace(bank.get("ct-02"), scenario_id="ct-21")
    problems = check_structure(dataclasses.replace(bank, scenarios=bank.scenarios + (extra,)), shipped=True).problems
    assert problems[0].startswith("shipped bank: the contrast subset must be exactly ct-01 .. ct-20, got ct-01,")
    assert problems[1] == (
        "shipped bank: contrast subset target_context counts are {'prior': 6, 'current': 15}, "
        "expected {'current': 14, 'prior': 6}"
    )
    assert problems[2].startswith("shipped bank: contrast subset cue_type counts are") and len(problems) == 3
    assert not any(p.startswith("shipped bank: target_context") for p in problems)
    # moving a bank item into the contrast subset breaks the bank subset's exact counts
    moved = check_structure(_with(bank, "sc-02", subset="contrast"), shipped=True).problems
    assert "shipped bank: 49 scenarios, expected 50" in moved
    # a minimal pair names exactly one bank item
    assert check_structure(_with(bank, "ct-05", pair_id="pair-99"), shipped=True).problems == [
        "ct-05: field 'pair_id' 'pair-99' must name exactly one bank item (a minimal pair)"
    ]
    # `--subset contrast` validates the contrast subset alone, with its own counts
    contrast = bank.select("contrast")
    assert check_structure(contrast, shipped=True).ok and check_structure(bank.select("bank"), shipped=True).ok
    assert check_near_duplicates(bank).ok  # minimal pairs mirror their bank item and are not compared


def test_validate_subset_contrast_on_the_shipped_bank():
    out = wearsim("validate", "--json", "--subset", "contrast")
    report = json.loads(out.stdout)
    assert out.returncode == 0, report
    assert report["counts"]["scenarios"] == 20 and report["counts"]["subset"] == {"contrast": 20}
