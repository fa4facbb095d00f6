"""`wearsim rescore` with the lexical judge on a recorded run and a small bank of our own.

Bank (tests/fixtures/transcripts/bank): r_cur (target current: screwdriver now,
hammer before) and r_pri (target prior: dough before, loaf now).
Recorded run (rescore_run), labels from an earlier judge -> what the lexical
judge should say, since each response names only one answer-list item:
  r_cur t0 "That screwdriver ..."        recorded prior   -> current
  r_cur t1 "Swing the hammer ..."        recorded prior   -> prior  (repair: "the screwdriver" -> current)
  r_pri t0 "Let the dough rise ..."      recorded prior   -> prior
  r_pri t1 "The loaf should cool ..."    recorded current -> current
Agreement 3/4. New labels c,p,p,c; recorded p,p,p,c: chance = (1/2)(1/4) + (1/2)(3/4) = 1/2,
kappa = (3/4 - 1/2)/(1/2) = 0.5. New balanced accuracy: current 1/2, prior 1/2 -> 0.5.
Repair: r_cur t1 missed, Turn 3 names the screwdriver -> 1/1.
"""

from __future__ import annotations

import argparse
import json

import pytest

from benchmark.cli import rescore as rescore_cli
from benchmark.rescore import RescoreError, rescore
from tests.paths import FIXTURES

FIXTURES = FIXTURES / "transcripts"
BANK = FIXTURES / "bank"


def quiet(_text: str) -> None:
    pass


def test_rescore_run_dir_with_lexical_judge(tmp_path):
    out = tmp_path / "rescored"
    summary = rescore(FIXTURES / "rescore_run", judge_family="lexical", scenarios=BANK, output_dir=out, progress=quiet)
    records = [json.loads(line) for line in (out / "transcripts.jsonl").read_text().splitlines()]
    new = [(r["scenario_id"], r["trial"], r["turn_2_judge_label"], r["turn_2_previous_judge_label"]) for r in records]
    assert new == [
        ("r_cur", 0, "current", "prior"),
        ("r_cur", 1, "prior", "prior"),
        ("r_pri", 0, "prior", "prior"),
        ("r_pri", 1, "current", "current"),
    ]
    assert records[0]["turn_2_passed"] is True and records[1]["turn_2_passed"] is False
    assert records[1]["turn_3_judge_label"] == "current" and records[1]["turn_3_repair_passed"] is True
    assert records[1]["turn_3_previous_judge_label"] == "current"
    assert isinstance(records[0]["turn_2_code_signals"], dict)
    agreement = summary["judge_agreement"]
    assert agreement["n"] == 4
    assert agreement["agreement"] == 0.75
    assert agreement["kappa"] == pytest.approx(0.5)
    assert agreement["confusion"]["current"]["prior"] == 1
    assert agreement["confusion"]["prior"]["prior"] == 2
    assert summary["primary"]["balanced_accuracy"] == pytest.approx(0.5)
    repair = summary["conditions"]["baseline"]["repair_rate"]
    assert (repair["k"], repair["n"]) == (1, 1)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["judge_family"] == "lexical"
    assert manifest["candidate_model"] == "replay:fixture"
    assert manifest["rescore"]["previous_judge_model"] == "gemini-recorded"
    assert "not the publication judge" in (out / "findings.md").read_text()
    assert json.loads((out / "summary.json").read_text())["judge_agreement"]["kappa"] == pytest.approx(0.5)


def test_rescore_external_file_builds_the_turn_message_from_the_bank(tmp_path):
    # one record, no messages: the Turn 2 message is rebuilt as "[Camera: turn_2_image]\nturn_2_user"
    # new label prior vs recorded current: agreement 0/1; chance agreement 0 -> kappa 0
    out = tmp_path / "ext"
    summary = rescore(
        FIXTURES / "rescore_external.jsonl", judge_family="lexical", scenarios=BANK, output_dir=out, progress=quiet
    )
    record = json.loads((out / "transcripts.jsonl").read_text())
    assert record["turn_2_judge_label"] == "prior"
    assert "turn_2_judge_policy" not in record  # the old name is not left to shadow the new label
    assert record["cue_type"] == "object_state" and record["difficulty_tier"] == "medium"
    assert summary["judge_agreement"]["agreement"] == 0.0
    assert summary["judge_agreement"]["kappa"] == pytest.approx(0.0)
    assert summary["primary"]["balanced_accuracy"] == 1.0


def test_rescore_refuses_unknown_scenarios_and_existing_output(tmp_path):
    other = tmp_path / "t.jsonl"
    other.write_text(
        json.dumps(
            {
                "scenario_id": "nope",
                "condition": "baseline",
                "trial": 0,
                "target_context": "current",
                "cue_type": "location",
            }
        )
        + "\n"
    )
    with pytest.raises(RescoreError, match="scenario ids not in the bank .*: nope"):
        rescore(other, judge_family="lexical", scenarios=BANK, output_dir=tmp_path / "x", progress=quiet)
    out = tmp_path / "done"
    out.mkdir()
    (out / "transcripts.jsonl").write_text("")
    with pytest.raises(RescoreError, match="already exists"):
        rescore(FIXTURES / "rescore_run", judge_family="lexical", scenarios=BANK, output_dir=out, progress=quiet)


def test_rescore_cli(tmp_path, capsys):
    parser = argparse.ArgumentParser(prog="wearsim")
    rescore_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(
        [
            "rescore",
            str(FIXTURES / "rescore_run"),
            "--judge-family",
            "lexical",
            "--scenarios",
            str(BANK),
            "--output-dir",
            str(tmp_path / "cli"),
        ]
    )
    assert args.run(args) == 0
    out = capsys.readouterr().out
    assert "agreement with the recorded labels: 75.0% over 4 trials, kappa 0.500" in out
    with pytest.raises(SystemExit):
        parser.parse_args(["rescore", "--help"])
    assert "wearsim rescore runs/offline --judge-family lexical" in capsys.readouterr().out
