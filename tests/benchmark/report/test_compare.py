"""`wearsim compare` on two small runs whose numbers are worked out by hand.

Baseline, Turn 2 pass (P) or fail (F) per trial, run A -> run B:
  sc1 current  t0 P->P  t1 F->P  t2 F->P  t3 F->P
  sc2 current  t0 F->P  t1 F->P  t2 P->F
  sc3 prior    t0 F->P  t1 P->P  t2 P->P  t3 P->unscored (not paired)
Discordant: A-only passes b = 1 (sc2 t2), B-only passes c = 6.
Exact McNemar: p = 2 * (C(7,0) + C(7,1)) / 2^7 = 16/128 = 0.125.
Balanced accuracy over paired trials:
  A: current 2/7, prior 2/3 -> (2/7 + 2/3)/2 = 10/21
  B: current 6/7, prior 3/3 -> (6/7 + 1)/2  = 13/14
  B - A = 39/42 - 20/42 = 19/42
Paired bootstrap over scenarios: in every scenario B >= A, the smallest possible
difference is 1/3 (draws of only sc2 or only sc3, and their mixtures; probability
>= 2/27 > 2.5%) and the largest 3/4 (sc1 three times, probability 1/27 > 2.5%),
so the 95% interval is exactly [1/3, 3/4].
An `explicit` condition adds one flip: sc1 t0 P->F.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from benchmark.cli import compare as compare_cli
from benchmark.comparison.runs import compare_runs
from tests.paths import FIXTURES

TARGETS = {"sc1": "current", "sc2": "current", "sc3": "prior"}
RUN_A = {("sc1", "baseline"): "PFFF", ("sc2", "baseline"): "FFP", ("sc3", "baseline"): "FPPP", ("sc1", "explicit"): "P"}
RUN_B = {("sc1", "baseline"): "PPPP", ("sc2", "baseline"): "PPF", ("sc3", "baseline"): "PPP-", ("sc1", "explicit"): "F"}


def write_run(directory: Path, outcomes: dict) -> Path:
    directory.mkdir()
    lines = []
    for (sid, condition), marks in outcomes.items():
        target = TARGETS[sid]
        other = "prior" if target == "current" else "current"
        for trial, mark in enumerate(marks):
            label = {"P": target, "F": other, "-": None}[mark]
            lines.append(
                json.dumps(
                    {
                        "scenario_id": sid,
                        "condition": condition,
                        "trial": trial,
                        "target_context": target,
                        "cue_type": "object_in_hand",
                        "turn_2_judge_label": label,
                    }
                )
            )
    (directory / "transcripts.jsonl").write_text("\n".join(lines) + "\n")
    (directory / "manifest.json").write_text(json.dumps({"ranking_condition": "baseline"}))
    return directory


@pytest.fixture()
def runs(tmp_path) -> tuple[Path, Path]:
    return write_run(tmp_path / "a", RUN_A), write_run(tmp_path / "b", RUN_B)


def test_compare_by_hand(runs):
    result = compare_runs(*runs)
    assert result["condition"] == "baseline"
    assert result["pairs"] == 10
    assert result["mcnemar"]["a_pass_b_fail"] == 1
    assert result["mcnemar"]["a_fail_b_pass"] == 6
    assert result["mcnemar"]["p_value"] == pytest.approx(0.125)
    assert result["balanced_accuracy_a"] == pytest.approx(10 / 21)
    assert result["balanced_accuracy_b"] == pytest.approx(13 / 14)
    assert result["difference"] == pytest.approx(19 / 42)
    assert result["ci_low"] == pytest.approx(1 / 3)
    assert result["ci_high"] == pytest.approx(3 / 4)
    flips = {(f["scenario_id"], f["condition"]): (f["pass_to_fail"], f["fail_to_pass"]) for f in result["flips"]}
    assert flips == {
        ("sc1", "baseline"): ([], [1, 2, 3]),
        ("sc2", "baseline"): ([2], [0, 1]),
        ("sc3", "baseline"): ([], [0]),
        ("sc1", "explicit"): ([0], []),
    }


def test_compare_other_condition(runs):
    result = compare_runs(*runs, condition="explicit")
    # one pair, A passes and B fails: b = 1, c = 0 -> p = 2 * 1/2 = 1.0; current 1/1 -> 0/1
    assert result["pairs"] == 1
    assert result["mcnemar"]["p_value"] == 1.0
    assert result["difference"] == pytest.approx(-1.0)


def run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="wearsim")
    compare_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["compare", *argv])
    return args.run(args)


def test_compare_cli_text_and_json(runs, capsys):
    assert run_cli([str(runs[0]), str(runs[1])]) == 0
    text = capsys.readouterr().out
    assert "B - A +45.2 pts" in text
    assert "p = 0.125" in text
    assert "sc2 [baseline]: pass->fail [2]; fail->pass [0, 1]" in text
    assert run_cli([str(runs[0]), str(runs[1]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mcnemar"]["a_fail_b_pass"] == 6
    assert run_cli([str(runs[0]), str(runs[0].parent / "nowhere")]) == 1
    assert "no such file" in capsys.readouterr().err


def test_compare_reports_label_agreement_and_cells_scored_in_one_run_only(runs):
    """Pairs scored in both, all conditions: 11; same label in 3 (sc1 t0, sc3 t1, sc3 t2).
    sc3 t3 is scored in A only."""
    result = compare_runs(*runs)
    assert result["label_agreement"] == {"agree": 3, "pairs": 11, "rate": 3 / 11}
    assert result["scored_in_one_run_only"] == {"a": 1, "b": 0}
    assert result["latency_a"]["reply_done_s"]["n"] == 0  # these records carry no turns


def test_compare_says_when_the_two_runs_measure_latency_from_different_points(capsys):
    """A text-proxy run measures from the request, a stream run from the end of speech: said beside them."""

    from benchmark.cli import main

    fixtures = FIXTURES / "transcripts"
    assert main(["compare", str(fixtures / "schema1_direct"), str(fixtures / "schema1_stream")]) == 0
    out = capsys.readouterr().out
    assert "latency," in out and "not comparable figure for figure" in out
