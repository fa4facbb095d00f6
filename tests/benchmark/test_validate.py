"""wearsim validate: each check catches a scenario that must fail."""

import dataclasses
import json
import shutil
import subprocess
import sys

import pytest

from benchmark.bank.card import card_path, render_card
from benchmark.bank.lockfile import write_lock
from benchmark.bank.validate import (
    check_lockfile,
    check_near_duplicates,
    check_object_names,
    check_structure,
    check_token_leakage,
)
from core.nouns import load_nouns, object_nouns_in
from core.scenario import SHIPPED_BANK, BankError, load_bank
from tests.paths import FIXTURES

FIXTURES = FIXTURES / "banks"


def wearsim(*args):
    return subprocess.run([sys.executable, "-m", "benchmark", *args], capture_output=True, text=True, timeout=120)


def _with(bank, target_id, **changes):
    scenarios = tuple(dataclasses.replace(s, **changes) if s.scenario_id == target_id else s for s in bank.scenarios)
    return dataclasses.replace(bank, scenarios=scenarios)


def test_shipped_bank_passes_with_exact_counts():
    out = wearsim("validate", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert report["ok"] is True
    counts = report["counts"]
    assert counts["scenarios"] == 70 and counts["subset"] == {"bank": 50, "contrast": 20}
    # the bank subset keeps v1's distribution; the contrast subset is counted on its own
    assert counts["bank:scenarios"] == 50
    assert counts["bank:target_context"] == {"current": 33, "prior": 12, "clarify": 3, "abstain": 2}
    assert counts["bank:cue_type"] == {
        "object_in_hand": 12,
        "object_state": 8,
        "sequential_task": 6,
        "location": 6,
        "object_in_view": 5,
        "absent_referent": 5,
        "screen_content": 4,
        "pre_conversation_recall": 4,
    }
    assert counts["bank:difficulty_tier"] == {"easy": 15, "medium": 20, "hard": 15}
    assert counts["contrast:scenarios"] == 20
    assert counts["contrast:target_context"] == {"current": 14, "prior": 6}
    assert counts["contrast:cue_type"] == {
        "object_in_hand": 4,
        "object_state": 2,
        "sequential_task": 2,
        "location": 2,
        "object_in_view": 3,
        "absent_referent": 2,
        "screen_content": 3,
        "pre_conversation_recall": 2,
    }
    assert {c["name"] for c in report["checks"]} == {
        "token_leakage",
        "object_names",
        "camera_blocks",
        "answer_lists",
        "repair_anchors",
        "schema_and_structure",
        "near_duplicates",
        "scene_specs",
        "proactive",
        "lockfile",
    }
    # the shipped bank follows every authoring rule: not even a warning
    assert [w for c in report["checks"] for w in c["warnings"]] == []


def test_check_1_token_in_speech_fails_but_named_anchor_is_exempt():
    bank = load_bank()
    leaked = _with(bank, "sc-01", turn_2_user="Will this screwdriver fit?")
    assert check_token_leakage(leaked).problems == ["sc-01: field 'turn_2_user' contains answer token 'screwdriver'"]
    assert check_token_leakage(bank).ok  # sc-01's named anchor says "screwdriver" and is exempt


def test_check_2_answer_token_in_camera_block_fails():
    # sc-05's prior answers include "brush": naming it in a camera block is a real leak
    bank = _with(load_bank(), "sc-05", turn_1_image="Right hand holds a wide brush loaded with cream paint.")
    result = check_object_names(bank)
    assert not result.ok
    assert result.problems == ["sc-05: field 'turn_1_image' names an object: 'brush' (an answer token)"]
    assert result.warnings == []


def test_check_2_other_object_nouns_are_warnings_only():
    bank = _with(load_bank(), "sc-05", turn_2_image="Two knives and a frying pan lie on the left.")
    result = check_object_names(bank)
    assert result.ok and result.problems == []
    assert result.warnings == [
        "sc-05: field 'turn_2_image' names an object: 'knife' (not an answer token)",
        "sc-05: field 'turn_2_image' names an object: 'frying pan' (not an answer token)",
    ]


def test_check_2_framing_and_part_words_are_not_leaks():
    # "Camera view of" talks about the camera, not an object in the scene
    assert object_nouns_in("Camera view of a lap; the camera shows wood curls. Camera: a bench.") == []
    assert object_nouns_in("A camera on a tripod.") == ["camera", "tripod"]
    # the fixture's sc-01 says "blade" for a knife whose answers are "knife", "hook knife", ...
    bank = load_bank(FIXTURES / "trio_spec_shapes")
    result = check_object_names(bank)
    assert result.ok
    assert [w for w in result.warnings if "names an object" in w] == [
        "sc-01: field 'turn_1_image' names an object: 'blade' (not an answer token)",
        "sc-04: field 'turn_2_image' names an object: 'seat' (not an answer token)",
    ]  # v1.1 lists "seat"
    leaked = _with(bank, "sc-01", turn_1_image="The right hand holds a hook knife over a block of lime wood.")
    assert check_object_names(leaked).problems == [
        "sc-01: field 'turn_1_image' names an object: 'knife' (an answer token)"
    ]


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


def test_a_scene_spec_changed_without_a_version_bump_drifts(tmp_path):
    """The pictographs are drawn from the scene specs, proactive timelines among them: they are locked too."""
    bank_dir = tmp_path / "v1"
    shutil.copytree("benchmark/v1", bank_dir)
    assert check_lockfile(bank_dir).ok
    timeline = bank_dir / "scenes" / "proactive" / "pa-08.json"
    timeline.write_text(timeline.read_text().replace('"grapes"', '"beans"', 1))
    problems = check_lockfile(bank_dir).problems
    assert len(problems) == 1 and "scene_specs_sha256 drifted" in problems[0]
    write_lock(bank_dir)
    assert check_lockfile(bank_dir).ok
    (bank_dir / "scenes" / "sc-99.json").symlink_to("/etc/hostname")  # a link is named, never read
    assert "scene_specs_sha256 drifted" in check_lockfile(bank_dir).problems[0]


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
    assert report["counts"]["cue_type"] == {
        "object_in_hand": 1,
        "object_state": 1,
        "pre_conversation_recall": 1,
        "absent_referent": 1,
    }
    contrast = json.loads(
        wearsim("validate", "--json", "--scenarios", str(FIXTURES / "external.jsonl"), "--subset", "contrast").stdout
    )
    assert contrast["counts"]["scenarios"] == 2


def test_failing_check_exits_1(tmp_path):
    bank_dir = tmp_path / "v1"
    shutil.copytree("benchmark/v1", bank_dir)
    scenarios = json.loads((bank_dir / "scenarios.json").read_text())
    scenarios[3]["turn_1_image"] = "A small pump on the rim."  # "pump" is one of sc-04's answers
    (bank_dir / "scenarios.json").write_text(json.dumps(scenarios))
    out = wearsim("validate", "--scenarios", str(bank_dir))
    assert out.returncode == 1
    assert "sc-04: field 'turn_1_image' names an object: 'pump' (an answer token)" in out.stdout


def test_dataset_card_matches_the_bank():
    bank = load_bank()
    text = card_path(bank).read_text(encoding="utf-8")
    assert render_card(text, bank) == text, "run `wearsim card --write`"


# Banks in the shapes other implementations publish

NEW_FIXTURES = ("trio_spec_shapes", "spec_vocab.jsonl")


def test_new_fixtures_validate_with_warnings_and_report_counts():
    for name in NEW_FIXTURES:
        out = wearsim("validate", "--json", str(FIXTURES / name))
        report = json.loads(out.stdout)
        assert out.returncode == 0, report
        assert report["ok"] is True and report["shipped"] is False
        checks = {c["name"]: c for c in report["checks"]}
        assert checks["lockfile"]["ok"] and len(checks["lockfile"]["warnings"]) == 1
        assert report["counts"]["cognitive_load"] == {
            "single_referent": 2 if name.endswith(".jsonl") else 1,
            "multi_referent": 1,
            "distractor_present": 1,
            "absent_referent": 1,
            "compound_shift": 1,
        }
    trio = json.loads(wearsim("validate", "--json", str(FIXTURES / "trio_spec_shapes")).stdout)["counts"]
    assert trio["scenarios"] == 5
    assert trio["target_context"] == {"current": 1, "prior": 2, "clarify": 1, "abstain": 1}
    assert trio["time_gap_bucket"] == {"seconds": 1, "null": 1, "next_day": 1, "hours": 1, "minutes": 1}
    jsonl = json.loads(wearsim("validate", "--json", str(FIXTURES / "spec_vocab.jsonl")).stdout)["counts"]
    assert jsonl["subset"] == {"bank": 3, "contrast": 3}


def test_human_report_lists_counts_and_warnings():
    out = wearsim("validate", str(FIXTURES / "trio_spec_shapes"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "5 scenarios" in out.stdout and "counts reported, not enforced" in out.stdout
    assert "  target_context: prior 2, current 1, clarify 1, abstain 1" in out.stdout
    assert "warning: sc-01: field 'turn_1_image' names an object: 'blade'" in out.stdout
    assert "MANIFEST.lock.json: missing" in out.stdout


def test_strict_fails_without_a_lockfile(tmp_path):
    for name in NEW_FIXTURES:
        out = wearsim("validate", "--strict", str(FIXTURES / name))
        assert out.returncode == 1, name
        assert "FAIL lockfile" in out.stdout
    bank_dir = tmp_path / "trio"
    shutil.copytree(FIXTURES / "trio_spec_shapes", bank_dir)
    assert wearsim("validate", "--write-lock", str(bank_dir)).returncode == 0
    assert check_lockfile(bank_dir).ok and check_lockfile(bank_dir).warnings == []


def test_shipped_bank_without_lockfile_fails(tmp_path):
    assert check_lockfile(tmp_path, required=True).problems == [
        f"{tmp_path / 'MANIFEST.lock.json'}: missing; run `wearsim validate --scenarios {tmp_path} --write-lock` "
        "to lock this bank"
    ]
    assert check_lockfile(tmp_path).ok


def test_unknown_enum_values_still_fail_naming_the_field(tmp_path):
    bank_dir = tmp_path / "trio"
    shutil.copytree(FIXTURES / "trio_spec_shapes", bank_dir)
    scenarios = json.loads((bank_dir / "scenarios.json").read_text())
    scenarios[1]["time_gap_bucket"] = "fortnight"
    scenarios[2]["cognitive_load"] = "extreme"
    (bank_dir / "scenarios.json").write_text(json.dumps(scenarios))
    out = wearsim("validate", str(bank_dir))
    assert out.returncode == 1
    assert (
        "sc-02: field 'time_gap_bucket' is 'fortnight'; allowed: seconds, minutes, hours, next_day or null"
        in out.stdout
    )
    assert "sc-03: field 'cognitive_load' is 'extreme'; allowed: low, medium, high, single_referent" in out.stdout

    rows = [json.loads(line) for line in (FIXTURES / "spec_vocab.jsonl").read_text().splitlines()]
    rows[0]["referent_complexity"] = "tangled"
    bad = tmp_path / "bank.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = wearsim("validate", str(bad))
    assert out.returncode == 1
    assert "sc-01: field 'cognitive_load' (JSONL 'referent_complexity') is 'tangled'" in out.stdout


def test_check_3_answer_lists_and_ids_by_target_and_subset():
    bank = load_bank(FIXTURES / "spec_vocab.jsonl")
    assert check_structure(bank, shipped=False).ok
    # the shipped distribution is not enforced on another bank, but would fail it
    assert any(
        p.startswith("shipped bank: target_context counts are") for p in check_structure(bank, shipped=True).problems
    )
    # a current item still needs both current and prior answers; adv- ids only in the contrast subset
    empty = dataclasses.replace(bank.get("sc-01").answers, prior_answers=())
    broken = _with(bank, "sc-01", answers=empty)
    broken = _with(broken, "adv-02", subset="bank")
    assert check_structure(broken, shipped=False).problems == [
        "sc-01: answer list 'prior_answers' is empty on a current item",
        "adv-02: field 'scenario_id' must look like sc-01",
    ]
    # a clarify item needs its clarify indicators
    no_indicators = dataclasses.replace(bank.get("sc-02").answers, clarify_indicators=())
    assert check_structure(_with(bank, "sc-02", answers=no_indicators), shipped=False).problems == [
        "sc-02: answer list 'clarify_indicators' is empty on a clarify item"
    ]


def test_check_6_skips_a_contrast_item_and_its_pair_only():
    bank = load_bank(FIXTURES / "spec_vocab.jsonl")
    assert check_near_duplicates(bank).ok  # sc-01 and adv-01 differ only in the Turn 2 question
    unpaired = _with(bank, "adv-01", pair_id=None)
    problems = check_near_duplicates(unpaired).problems
    assert len(problems) == 1 and problems[0].startswith("sc-01 ~ adv-01: text similarity")


def test_big_and_hostile_banks_fail_fast_and_clearly(tmp_path):
    """A 100 KB camera block is a clear error (it took minutes of comparison before);
    JSON nested 100,000 deep is an invalid file, not a crash; a bank of 350 with
    copies still finds the copies."""
    from benchmark.bank.validate import MAX_TEXT_CHARS

    bank = load_bank()
    huge = _with(bank, "sc-01", turn_1_image="a grey wall " * 9000)
    problems = check_structure(huge, shipped=False).problems
    assert any(p.startswith("sc-01: field 'turn_1_image' is 108,000 characters; the limit is 2,000") for p in problems)
    assert check_near_duplicates(huge).ok  # the long text is cut at the limit for the comparison
    assert MAX_TEXT_CHARS == 2000
    nested = tmp_path / "nested"
    nested.mkdir()
    for name in ("expected_answers.json", "interventions.json"):
        (nested / name).write_text((SHIPPED_BANK / name).read_text())
    (nested / "scenarios.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(BankError, match="nested too deeply"):
        load_bank(nested)
    many = dataclasses.replace(
        bank,
        scenarios=tuple(
            dataclasses.replace(s, scenario_id=f"x-{i:03d}", turn_2_user=f"{s.turn_2_user} ({i})")
            for i, s in enumerate(bank.scenarios * 5)
        ),
    )
    problems = check_near_duplicates(many).problems
    assert any(p.startswith("x-000 ~ x-070: text similarity") for p in problems)  # a copy is found


def test_the_near_duplicate_prefix_filter_misses_no_pair_that_brute_force_finds():
    """Check 6 compares only the pairs its prefix filter keeps: on random texts with many near copies, every
    earlier sequence whose ratio with a later one reaches the threshold is among its candidates."""
    import difflib
    import random

    from benchmark.bank.duplicates import _PrefixIndex

    rng = random.Random(7)
    words = "red cup blue mug left right table hand shelf pan lid knife green tall small".split()
    base = [tuple(rng.choice(words) for _ in range(rng.randint(0, 14))) for _ in range(40)]
    sequences = base + [tuple(w if rng.random() > 0.15 else rng.choice(words) for w in seq) for seq in base]
    for threshold in (0.75, 0.9):
        index, kept = _PrefixIndex(sequences, threshold), 0
        for i in range(len(sequences)):
            candidates = index.candidates(i)
            kept += len(candidates)
            for j in range(i):
                ratio = difflib.SequenceMatcher(None, sequences[j], sequences[i], autojunk=False).ratio()
                if sequences[i] and sequences[j] and ratio >= threshold:
                    assert j in candidates, (sequences[j], sequences[i], ratio)
            index.add(i)
        assert kept < len(sequences) * (len(sequences) - 1) // 2  # it does rule pairs out


def test_near_copies_are_reported_once_each_against_the_first_of_their_group():
    import dataclasses

    bank = load_bank()
    first = bank.scenarios[0]
    copies = [dataclasses.replace(first, scenario_id=f"copy-{n}", pair_id=None) for n in range(3)]
    grown = dataclasses.replace(bank, scenarios=(*bank.scenarios, *copies))
    from benchmark.bank.validate import check_near_duplicates

    problems = check_near_duplicates(grown).problems
    assert problems == [f"{first.scenario_id} ~ copy-{n}: text similarity 1.00" for n in range(3)]
