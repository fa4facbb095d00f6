"""wearsim validate: each check catches a scenario that must fail."""

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

from benchmark.card import card_path, render_card
from benchmark.scenario import load_bank
from benchmark.validate import (
    check_lockfile, check_near_duplicates, check_object_names, check_structure, check_token_leakage, write_lock,
)
from benchmark.nouns import load_nouns, object_nouns_in

FIXTURES = Path(__file__).parent / "fixtures" / "banks"


def wearsim(*args):
    return subprocess.run([sys.executable, "-m", "benchmark", *args], capture_output=True, text=True, timeout=120)


def _with(bank, target_id, **changes):
    scenarios = tuple(dataclasses.replace(s, **changes) if s.scenario_id == target_id else s
                      for s in bank.scenarios)
    return dataclasses.replace(bank, scenarios=scenarios)


def test_shipped_bank_passes_with_exact_counts():
    out = wearsim("validate", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert report["ok"] is True
    assert report["counts"]["scenarios"] == 50
    assert report["counts"]["target_context"] == {"current": 33, "prior": 12, "clarify": 3, "abstain": 2}
    assert report["counts"]["cue_type"] == {
        "object_in_hand": 12, "object_state": 8, "sequential_task": 6, "location": 6, "object_in_view": 5,
        "absent_referent": 5, "screen_content": 4, "pre_conversation_recall": 4}
    assert report["counts"]["difficulty_tier"] == {"easy": 15, "medium": 20, "hard": 15}
    assert {c["name"] for c in report["checks"]} == {
        "token_leakage", "object_names", "schema_and_structure", "near_duplicates", "lockfile"}


def test_check_1_token_in_speech_fails_but_named_anchor_is_exempt():
    bank = load_bank()
    leaked = _with(bank, "sc-01", turn_2_user="Will this screwdriver fit?")
    assert check_token_leakage(leaked).problems == ["sc-01: field 'turn_2_user' contains answer token 'screwdriver'"]
    assert check_token_leakage(bank).ok  # sc-01's named anchor says "screwdriver" and is exempt


def test_check_2_object_noun_in_camera_block_fails():
    bank = _with(load_bank(), "sc-05", turn_2_image="Two knives and a frying pan lie on the left.")
    problems = check_object_names(bank).problems
    assert problems == ["sc-05: field 'turn_2_image' names an object: 'knife'",
                        "sc-05: field 'turn_2_image' names an object: 'frying pan'"]


def test_noun_list_size_and_word_boundaries():
    assert len(load_nouns()) >= 300
    assert object_nouns_in("a panel of brushes") == ["brush"]
    assert object_nouns_in("a tomato-like vine") == ["tomato"]
    assert object_nouns_in("the panel is flat") == []


def test_check_3_structure_and_distribution():
    bank = load_bank()
    broken = _with(bank, "sc-02", context_image="a grey shape", target_context="maybe")
    broken = _with(broken, "sc-03", scenario_id="sc-02")
    problems = check_structure(broken, shipped=True).problems
    assert "sc-02: scenario_id used 2 times" in problems
    assert any("field 'target_context' is 'maybe'" in p for p in problems)
    assert "sc-02: field 'context_image' is only allowed on pre_conversation_recall" in problems
    assert any(p.startswith("shipped bank: target_context counts are") for p in problems)
    assert check_structure(bank, shipped=True).ok


def test_check_6_near_duplicate_pair_is_reported():
    bank = load_bank()
    source = bank.get("sc-13")
    copy = dataclasses.replace(source, scenario_id="sc-51", turn_2_user=source.turn_2_user + " Really?")
    dup = dataclasses.replace(bank, scenarios=bank.scenarios + (copy,))
    problems = check_near_duplicates(dup).problems
    assert len(problems) == 1 and problems[0].startswith("sc-13 ~ sc-51: text similarity")
    assert check_near_duplicates(bank).ok


def test_lockfile_drift_fails_until_relocked(tmp_path):
    bank_dir = tmp_path / "v1"
    shutil.copytree("benchmark/v1", bank_dir)
    assert check_lockfile(bank_dir).ok
    scenarios = json.loads((bank_dir / "scenarios.json").read_text())
    scenarios[0]["notes"] += " Edited."
    (bank_dir / "scenarios.json").write_text(json.dumps(scenarios))
    problems = check_lockfile(bank_dir).problems
    assert len(problems) == 1 and "scenarios_sha256 drifted" in problems[0]
    write_lock(bank_dir)
    assert check_lockfile(bank_dir).ok


def test_unreadable_input_exits_2(tmp_path):
    bad = tmp_path / "bank.jsonl"
    bad.write_text('{"scenario_id": "sc-01"\n')
    out = wearsim("validate", "--json", "--scenarios", str(bad))
    assert out.returncode == 2
    assert "line 1: invalid JSON" in json.loads(out.stdout)["problems"][0]


def test_jsonl_bank_validates_and_reports_its_own_counts():
    out = wearsim("validate", "--json", "--scenarios", str(FIXTURES / "external.jsonl"))
    report = json.loads(out.stdout)
    assert out.returncode == 0, report
    assert report["counts"]["scenarios"] == 4
    assert report["counts"]["cue_type"] == {"object_in_hand": 1, "object_state": 1,
                                            "pre_conversation_recall": 1, "absent_referent": 1}
    contrast = json.loads(wearsim("validate", "--json", "--scenarios", str(FIXTURES / "external.jsonl"),
                                  "--subset", "contrast").stdout)
    assert contrast["counts"]["scenarios"] == 2


def test_failing_check_exits_1(tmp_path):
    bank_dir = tmp_path / "v1"
    shutil.copytree("benchmark/v1", bank_dir)
    scenarios = json.loads((bank_dir / "scenarios.json").read_text())
    scenarios[3]["turn_1_image"] = "A hammer on the left."
    (bank_dir / "scenarios.json").write_text(json.dumps(scenarios))
    out = wearsim("validate", "--scenarios", str(bank_dir))
    assert out.returncode == 1
    assert "sc-04: field 'turn_1_image' names an object: 'hammer'" in out.stdout


def test_dataset_card_matches_the_bank():
    bank = load_bank()
    text = card_path(bank).read_text(encoding="utf-8")
    assert render_card(text, bank) == text, "run `wearsim card --write`"
