"""The scenario model and the two bank formats."""

import json
import shutil
from pathlib import Path

import pytest

from core.scenario import BankError, load_bank
from tests.paths import FIXTURES

FIXTURES = FIXTURES / "banks"


def test_shipped_bank_loads_with_its_conditions():
    bank = load_bank()
    assert len(bank.scenarios) == 70
    assert [s.scenario_id for s in bank.select("bank").scenarios] == [f"sc-{n:02d}" for n in range(1, 51)]
    assert [s.scenario_id for s in bank.select("contrast").scenarios] == [f"ct-{n:02d}" for n in range(1, 21)]
    assert bank.scenarios[0].scenario_id == "sc-01"
    assert {"baseline", "track_current_frame", "explicit_referent_check"} <= {c.name for c in bank.conditions}
    recall = [s for s in bank.select("bank").scenarios if s.cue_type == "pre_conversation_recall"]
    assert len(recall) == 4 and all(s.context_image for s in recall)


def test_scenarios_json_path_loads_the_same_bank():
    bank = load_bank(Path("benchmark/v1/scenarios.json"))
    assert len(bank.scenarios) == 70 and bank.format == "v1"
    assert bank.select("bank").subset == "bank" and bank.subset is None


def test_contrast_items_mirror_their_bank_pair():
    bank = load_bank()
    pairs = {}
    for s in bank.scenarios:
        if s.pair_id:
            pairs.setdefault(s.pair_id, []).append(s)
    assert len(pairs) == 6 and all(len(members) == 2 for members in pairs.values())
    for bank_item, contrast_item in pairs.values():
        assert (bank_item.subset, contrast_item.subset) == ("bank", "contrast")
        assert bank_item.cue_type == contrast_item.cue_type
        assert contrast_item.turn_1_image == bank_item.turn_1_image  # a minimal pair: Turn 1 is the same scene
        # ... and Turn 2 differs only by what it adds or by the question
        turn_2 = (contrast_item.turn_2_image, contrast_item.turn_2_user)
        assert turn_2 != (bank_item.turn_2_image, bank_item.turn_2_user)
    # the minimal pairs whose question points back flip the target
    flipped = {b.scenario_id: c.scenario_id for b, c in pairs.values() if b.target_context != c.target_context}
    assert flipped == {"sc-01": "ct-01", "sc-43": "ct-14"}


def test_jsonl_bank_maps_its_field_names():
    bank = load_bank(FIXTURES / "external.jsonl")
    assert bank.format == "jsonl" and len(bank.scenarios) == 4
    recall = bank.get("sc-03")
    assert recall.cue_type == "pre_conversation_recall" and recall.context_image
    assert recall.turn_3_repair_anchor.startswith("I mean")
    assert bank.get("sc-02").subset == "contrast" and bank.get("sc-02").pair_id == "pair-1"
    assert bank.get("sc-01").answers.current_answers[0] == "screwdriver"


def test_subset_selects():
    bank = load_bank(FIXTURES / "external.jsonl")
    assert [s.scenario_id for s in bank.select("contrast").scenarios] == ["sc-02", "sc-04"]
    assert [s.scenario_id for s in bank.select(limit=1).scenarios] == ["sc-01"]


def test_corrupt_jsonl_line_is_named(tmp_path):
    lines = (FIXTURES / "external.jsonl").read_text().splitlines()
    lines[2] = lines[2][:40]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(BankError) as info:
        load_bank(bad)
    assert any(f"{bad}: line 3: invalid JSON" in p for p in info.value.problems)


def test_every_problem_is_listed_with_file_and_field(tmp_path):
    rows = [json.loads(line) for line in (FIXTURES / "external.jsonl").read_text().splitlines()]
    del rows[0]["turn_2_user"]
    rows[1]["turn_1_image"] = 7
    rows[3]["gold"]["prior_answers"] = "not a list"
    bad = tmp_path / "bank.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    with pytest.raises(BankError) as info:
        load_bank(bad)
    problems = info.value.problems
    assert len(problems) == 3
    assert "line 1 (sc-01): field 'turn_2_user' is missing" in problems[0]
    assert "line 2 (sc-02): field 'turn_1_image' must be str or null, got int" in problems[1]
    assert "line 4 (sc-04): gold: field 'prior_answers' must be a list of strings" in problems[2]


def test_v1_answers_missing_for_a_scenario(tmp_path):
    bank_dir = tmp_path / "v1"
    shutil.copytree("benchmark/v1", bank_dir)
    answers = json.loads((bank_dir / "expected_answers.json").read_text())
    del answers["sc-07"]
    (bank_dir / "expected_answers.json").write_text(json.dumps(answers))
    with pytest.raises(BankError) as info:
        load_bank(bank_dir)
    assert info.value.problems == [f"{bank_dir / 'expected_answers.json'}: sc-07: no answer lists"]


def test_deictic_repair_falls_back_to_named():
    bank = load_bank()
    absent = bank.get("sc-38")
    assert absent.turn_3_repair_anchor_deictic is None
    assert absent.repair_anchor("deictic") == absent.turn_3_repair_anchor
    held = bank.get("sc-01")
    assert held.repair_anchor("deictic") == held.turn_3_repair_anchor_deictic != held.turn_3_repair_anchor


# Shapes other implementations publish (docs/schema.md, "Accepted variations").


def test_v1_trio_with_spec_shapes_loads():
    bank = load_bank(FIXTURES / "trio_spec_shapes")
    assert bank.format == "v1" and len(bank.scenarios) == 5
    # interventions.json is a list of {name, description, system_prompt, token_count}
    assert [c.name for c in bank.conditions] == ["baseline", "latest_view_first"]
    assert bank.condition("latest_view_first").description == "Points the model at the most recent camera block."
    assert bank.condition("baseline").system_prompt.startswith("You are the assistant in the user's smart glasses.")
    # optional fields: absent deictic anchor -> None, absent notes -> "", null or next_day time gap
    carving = bank.get("sc-01")
    assert carving.turn_3_repair_anchor_deictic is None and carving.notes == ""
    assert bank.get("sc-02").notes.startswith("Only this scenario carries notes")
    assert [s.time_gap_bucket for s in bank.scenarios] == ["seconds", None, "next_day", "hours", "minutes"]
    assert {s.cognitive_load for s in bank.scenarios} == {
        "single_referent",
        "multi_referent",
        "distractor_present",
        "absent_referent",
        "compound_shift",
    }
    # clarify and abstain items may leave the non-target lists empty
    assert bank.get("sc-03").answers.prior_answers == ()
    assert bank.get("sc-04").answers.clarify_indicators == ()


def test_missing_deictic_anchor_falls_back_to_the_named_one():
    scenario = load_bank(FIXTURES / "trio_spec_shapes").get("sc-01")
    assert (
        scenario.repair_anchor("deictic")
        == scenario.repair_anchor("named")
        == ("I mean the sandpaper on the cork block now, not the hook knife.")
    )


def test_jsonl_bank_with_spec_vocabulary_and_contrast_ids_loads():
    bank = load_bank(FIXTURES / "spec_vocab.jsonl")
    assert bank.format == "jsonl" and len(bank.scenarios) == 6
    assert [s.scenario_id for s in bank.select("contrast").scenarios] == ["adv-01", "adv-02", "adv-03"]
    assert bank.get("adv-01").pair_id == bank.get("sc-01").pair_id == "fish-1"
    assert bank.get("sc-02").cognitive_load == "distractor_present"  # from referent_complexity
    assert bank.get("sc-03").time_gap_bucket is None and bank.get("adv-03").time_gap_bucket == "next_day"
    # the deictic anchor and notes may be left out
    assert bank.get("adv-01").turn_3_repair_anchor_deictic is None and bank.get("adv-01").notes == ""
    assert bank.get("sc-01").repair_anchor("deictic").startswith("I mean this one I'm pinching")
    clarify, abstain = bank.get("sc-02").answers, bank.get("sc-03").answers
    assert clarify.current_answers == clarify.prior_answers == clarify.abstain_indicators == ()
    assert "which booklet" in clarify.clarify_indicators
    assert abstain.current_answers == abstain.prior_answers == abstain.clarify_indicators == ()


def test_bad_condition_list_names_file_entry_and_field(tmp_path):
    bank_dir = tmp_path / "trio"
    shutil.copytree(FIXTURES / "trio_spec_shapes", bank_dir)
    path = bank_dir / "interventions.json"
    path.write_text(
        json.dumps(
            [
                {"name": "calm", "description": "d", "system_prompt": "Be calm."},
                {"description": "no name", "system_prompt": "x"},
                {"name": "loud", "system_prompt": 5},
                {"name": "calm", "system_prompt": "again"},
            ]
        )
    )
    with pytest.raises(BankError) as info:
        load_bank(bank_dir)
    assert info.value.problems == [
        f"{path}: condition #2: field 'name' must be a non-empty string",
        f"{path}: condition #3: field 'system_prompt' must be a string",
        f"{path}: condition #4: condition name 'calm' used twice",
        f"{path}: no 'baseline' condition",
    ]


def test_optional_fields_still_have_types(tmp_path):
    bank_dir = tmp_path / "trio"
    shutil.copytree(FIXTURES / "trio_spec_shapes", bank_dir)
    scenarios = json.loads((bank_dir / "scenarios.json").read_text())
    scenarios[0]["time_gap_bucket"] = 3
    scenarios[1]["turn_3_repair_anchor_deictic"] = ["not", "text"]
    del scenarios[2]["turn_3_repair_anchor"]  # the named anchor stays required
    (bank_dir / "scenarios.json").write_text(json.dumps(scenarios))
    with pytest.raises(BankError) as info:
        load_bank(bank_dir)
    where = bank_dir / "scenarios.json"
    assert info.value.problems == [
        f"{where}: sc-01: field 'time_gap_bucket' must be str or null, got int",
        f"{where}: sc-02: field 'turn_3_repair_anchor_deictic' must be str or null, got list",
        f"{where}: sc-03: field 'turn_3_repair_anchor' is missing",
    ]


# turn_3_target_context: the context the repair (Turn 3) is judged against


def test_turn_3_target_context_is_optional_and_defaults_to_the_target():
    shipped = load_bank()
    clarify = [s for s in shipped.scenarios if s.target_context == "clarify"]
    assert {s.scenario_id: s.turn_3_target_context for s in clarify} == {
        "sc-08": "current",
        "sc-26": "current",
        "sc-35": "current",
    }
    assert all(s.repair_target == "current" for s in clarify)
    # every other item leaves it out, and its repair is judged against its target
    others = [s for s in shipped.scenarios if s.target_context != "clarify"]
    assert all(s.turn_3_target_context is None and s.repair_target == s.target_context for s in others)
    # banks without the field load (the published shapes have none)
    for path in (FIXTURES / "trio_spec_shapes", FIXTURES / "spec_vocab.jsonl", FIXTURES / "external.jsonl"):
        for s in load_bank(path).scenarios:
            assert s.turn_3_target_context is None and s.repair_target == s.target_context


def test_turn_3_target_context_loads_from_json_lines_and_is_type_checked(tmp_path):
    rows = [json.loads(line) for line in (FIXTURES / "spec_vocab.jsonl").read_text().splitlines()]
    rows[2]["turn_3_target_context"] = "current"  # sc-02, a clarify item
    rows[4]["turn_3_target_context"] = 3
    bad = tmp_path / "bank.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    with pytest.raises(BankError) as info:
        load_bank(bad)
    assert info.value.problems == [f"{bad}: line 5 (sc-03): field 'turn_3_target_context' must be str or null, got int"]
    del rows[4]["turn_3_target_context"]
    bad.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    bank = load_bank(bad)
    assert bank.get("sc-02").repair_target == "current" and bank.get("sc-02").target_context == "clarify"


def _scripted_trial(scenario, labels):
    import asyncio

    from benchmark.conversations.protocol import DirectConversation, run_trial
    from core.candidate import GenerationConfig, Reply
    from core.judge import Verdict

    class Candidate:
        model_id, family = "scripted", "scripted"

        async def respond(self, messages, system, config, on_delta=None):
            return Reply(text="a reply", model=self.model_id)

    class Judge:
        name, family = "scripted", "scripted"

        def __init__(self):
            self.labels = list(labels)

        async def label(self, case):
            return Verdict(label=self.labels.pop(0), rationale="scripted", judge=self.name)

    bank = load_bank()
    conversation = DirectConversation(scenario, bank.condition("baseline"), Candidate(), GenerationConfig())
    return asyncio.run(run_trial(conversation, scenario, Judge()))


def test_a_clarify_repair_passes_on_the_context_its_anchor_names():
    from core.records import TrialRecord

    sc08 = load_bank().get("sc-08")  # clarify; the named anchor picks the slotted turner (current)
    record = _scripted_trial(sc08, ["current", "current"])  # Turn 2 guessed: a miss; Turn 3 answers the turner
    assert record.passed is False and record.turn_3_repair_attempted
    assert record.repair_target_context == "current" and record.repair_passed is True
    assert _scripted_trial(sc08, ["prior", "clarify"]).repair_passed is False  # asking again is not a repair
    # the field survives the JSON form; a record without it (older runs) is judged against the target
    line = json.loads(record.to_line())
    assert line["turn_3_repair_passed"] is True and TrialRecord.from_json(line) == record
    del line["repair_target_context"]
    older = TrialRecord.from_json(line)
    assert older.repair_target_context is None and older.repair_passed is False  # "current" != "clarify"
    assert TrialRecord.from_json({**line, "turn_3_judge_label": "clarify"}).repair_passed is True
    # a current item's repair is still judged against "current"
    held = _scripted_trial(load_bank().get("sc-01"), ["prior", "current"])
    assert held.repair_target_context == "current" and held.repair_passed is True


def test_a_rescore_takes_the_repair_target_from_the_bank():
    import asyncio

    from benchmark.rescore import rejudge_record
    from core.judge import Verdict
    from core.records import TrialRecord

    class Current:
        name, family = "scripted", "scripted"

        async def label(self, case):
            return Verdict(label="current", rationale="scripted", judge=self.name)

    sc08 = load_bank().get("sc-08")
    line = json.loads(_scripted_trial(sc08, ["current", "clarify"]).to_line())
    del line["repair_target_context"]  # recorded before v1.1
    old = TrialRecord.from_json(line)
    assert old.repair_passed is True  # the old rule: Turn 3 had to be "clarify" again
    new = asyncio.run(rejudge_record(old, sc08, Current()))
    assert new.repair_target_context == "current" and new.turn_3_label == "current" and new.repair_passed is True
    assert new.turn_3_previous_judge_label == "clarify"
