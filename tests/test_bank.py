"""The scenario model and the two bank formats."""

import json
import shutil
from pathlib import Path

import pytest

from benchmark.scenario import BankError, load_bank

FIXTURES = Path(__file__).parent / "fixtures" / "banks"


def test_shipped_bank_loads_with_its_conditions():
    bank = load_bank()
    assert len(bank.scenarios) == 50
    assert bank.scenarios[0].scenario_id == "sc-01"
    assert {"baseline", "track_current_frame", "explicit_referent_check"} <= {c.name for c in bank.conditions}
    recall = [s for s in bank.scenarios if s.cue_type == "pre_conversation_recall"]
    assert len(recall) == 4 and all(s.context_image for s in recall)


def test_scenarios_json_path_loads_the_same_bank():
    bank = load_bank(Path("benchmark/v1/scenarios.json"))
    assert len(bank.scenarios) == 50 and bank.format == "v1"


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
