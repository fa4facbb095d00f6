"""The verdict `wearsim agreement` opens with, by hand-computed figures; the people's majority needing two
people; the PNG's title counting what it draws.

Twenty labels by two people on ten items (run judge: J):
  item  0   1   2   3   4    5   6   7   8    9
  ana   c   c   p   p   cl   a   c   p   c    p
  ben   c   c   p   p   cl   c   p   p   ct   c        (ct: cannot tell)
  J     c   p   p   p   cl   a   c   -   c    p        (-: unscored)
Majority (two people alike): items 0-4 and 7 (6 items); 5, 6 and 9 split, 8 has one person's label and a
'cannot tell' (no majority: one person's label is nobody's majority). The judge against it, item 7
unscored: 5 items, 4 agree; majority c2 p2 cl1, judge c1 p3 cl1: chance (2 + 6 + 1) / 25 = 9/25, kappa
(20/25 - 9/25) / (16/25) = 11/16. Items for an interval 0.2 wide at that kappa (verdict.py): c = 2.4 -
0.4 x (0.6875 - 0.67) / 0.16 = 2.35625, (c / 0.2)^2 = 138.8 -> 139; 139 - 5 = 134 more.

A hundred items labelled alike by both people: majority current 50, prior 30, clarify 10, abstain 10;
the judge gives current 45 and prior 5 of the current ones, prior 27 and current 3 of the prior ones,
clarify 9 and abstain 1 of the clarify ones, abstain all 10 abstain ones. Agreement 91/100; judge
marginals c 48, p 32, cl 9, a 11: chance (50x48 + 30x32 + 10x9 + 10x11) / 10000 = 0.356, kappa
(0.91 - 0.356) / 0.644 = 277/322 = 0.860.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from benchmark.cli import main
from benchmark.labels.agreement import majority
from benchmark.labels.verdict import items_for_width, verdict, width_constant
from tests.label_runs import build_run

ANA = ["current", "current", "prior", "prior", "clarify", "abstain", "current", "prior", "current", "prior"]
BEN = ["current", "current", "prior", "prior", "clarify", "current", "prior", "prior", "cannot_tell", "current"]
JUDGE_20 = ["current", "prior", "prior", "prior", "clarify", "abstain", "current", None, "current", "prior"]


def write_labels(run_dir: Path, name: str, labels: list[str]) -> None:
    """`name`'s labels of the run's first len(labels) trials (their keys in the run's order)."""
    from benchmark.labels.run import open_label_run

    keys = [item.key for item in open_label_run(run_dir).items("turn2")]
    folder = run_dir / "labels"
    folder.mkdir(exist_ok=True)
    lines = [json.dumps({"trial_key": k, "what": "turn2", "label": v, "annotator": name}) for k, v in zip(keys, labels)]
    (folder / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_twenty_labels_are_too_few_to_say_and_the_verdict_says_how_many_more(tmp_path, capsys, monkeypatch):
    from benchmark.report import chart

    drawn: list[str] = []
    text = chart.Figure.text
    monkeypatch.setattr(chart.Figure, "text", lambda self, x, y, s, **kw: (drawn.append(s), text(self, x, y, s, **kw)))
    run_dir = build_run(tmp_path / "run", [*JUDGE_20, "current", "prior"])
    write_labels(run_dir, "ana", ANA)
    write_labels(run_dir, "ben", BEN)
    assert main(["agreement", str(run_dir)]) == 0
    out = capsys.readouterr().out.splitlines()
    kappa = 11 / 16
    assert items_for_width(kappa) == 139 and width_constant(kappa) == pytest.approx(2.35625)
    assert out[0].startswith(
        "Too few items to say how well the judge (lexical) agrees with people: its kappa rests on 5 items "
        f"(kappa {kappa:.2f} ["
    )
    assert out[0].endswith(
        "; about 134 more, each labelled alike by two people, would give a kappa interval about 0.2 wide."
    )
    result = json.loads((run_dir / "agreement.json").read_text())
    assert (result["human_labels"], result["cannot_tell"]) == (19, 1)
    assert (result["majority_items"], result["no_majority"], result["one_person"]) == (6, 4, 1)
    judge = result["against_people"][0]
    assert (judge["n"], judge["agreement"]["k"], judge["unscored"]) == (5, 4, 1)
    assert judge["kappa"] == pytest.approx(kappa)
    assert result["verdict"] == {"enough": False, "more": 134, "text": out[0]}
    assert out[0] in (run_dir / "agreement.md").read_text()
    # the PNG's title counts the items in the matrix (6), not the labels (19)
    title = next(s for s in drawn if s.startswith("People's majority"))
    assert title.endswith(", 6 items") and sum(sum(row.values()) for row in judge["confusion"].values()) == 6


def test_a_hundred_labelled_items_give_the_kappa_with_its_interval(tmp_path, capsys):
    people = ["current"] * 50 + ["prior"] * 30 + ["clarify"] * 10 + ["abstain"] * 10
    judge = ["current"] * 45 + ["prior"] * 5 + ["prior"] * 27 + ["current"] * 3 + ["clarify"] * 9 + ["abstain"] * 11
    run_dir = build_run(tmp_path / "run", judge)
    write_labels(run_dir, "ana", people)
    write_labels(run_dir, "ben", people)
    assert main(["agreement", str(run_dir)]) == 0
    out = capsys.readouterr().out.splitlines()
    result = json.loads((run_dir / "agreement.json").read_text())
    row = result["against_people"][0]
    assert (row["n"], row["agreement"]["k"], row["scenarios"], row["ci_method"]) == (100, 91, 70, "bootstrap")
    assert row["kappa"] == pytest.approx((0.91 - 0.356) / 0.644) == pytest.approx(277 / 322)
    low, high = row["kappa_ci_low"], row["kappa_ci_high"]
    assert low < 277 / 322 < high and 0.1 < high - low < 0.3  # about the width the simulation measured at 100
    assert out[0].startswith(
        f"The judge (lexical) agrees with people at kappa 0.86 [{low:.2f}, {high:.2f}] on 100 items. "
    )
    assert result["verdict"]["enough"] is True and out[0] == result["verdict"]["text"]
    expected = "labels much as a person would" if low >= 0.8 else "Substantial but short of a person"
    assert expected in out[0]
    findings_line = f"Judge checked against 200 human labels by 2 people: kappa 0.86 [{low:.2f}, {high:.2f}]"
    assert any(line.startswith(findings_line) and "too few" not in line for line in out)


def test_the_people_majority_needs_two_people_alike():
    assert majority(["prior"], 2) is None  # one person's label (a 'cannot tell' beside it is no vote)
    assert majority(["prior", "current"], 2) is None
    assert majority(["prior", "current", "prior"], 2) == "prior"
    assert majority(["prior", "prior", "current", "current"], 2) is None
    assert majority(["prior"]) == "prior"  # judge-check's reference keeps one label as enough


def row(kappa, low, high, n=100):
    return {
        "against_people": [{"judge": "judge x", "n": n, "kappa": kappa, "kappa_ci_low": low, "kappa_ci_high": high}]
    }


def test_the_verdict_in_words():
    assert "labels much as a person would" in verdict(row(0.9, 0.82, 0.96))["text"]
    assert "Substantial but short of a person" in verdict(row(0.75, 0.65, 0.84))["text"]
    low = verdict(row(0.55, 0.45, 0.64))["text"]
    assert "It may be as low as 0.45" in low and "wearsim agreement --judges DIR" in low
    wide = verdict(row(0.6, 0.3, 0.8, n=40))  # enough items, but an interval 0.5 wide: 40 x (0.5/0.2)^2 = 250
    assert wide["enough"] is False and wide["more"] == 210
    none = verdict(row(None, None, None, n=0))
    assert none["more"] == 144 and "rests on 0 items;" in none["text"]


def test_the_width_rule_follows_the_simulation_the_docs_quote():
    data = json.loads(Path("benchmarks/results/label_interval_width.json").read_text())
    for measured in data["rows"]:
        predicted = width_constant(measured["population_kappa"]) / math.sqrt(measured["labels"])
        assert predicted == pytest.approx(measured["median_kappa_width"], rel=0.06)
