"""`wearsim agreement` on a run with two annotators' label files and two judges' rescore dirs,
its kappas checked against a hand computation; the sample; findings and the viewer's line.

Items i0..i5 (sc-01 ... sc-06, one trial each; the run holds 12 trials):
  ana      current current prior   prior  clarify abstain
  ben      current prior   prior   prior  clarify current
  run judge (lexical) current prior (unscored) clarify current abstain
  judge-a  current current prior   prior  clarify abstain   (ana's labels)
  judge-b  prior   prior   current prior  clarify abstain

ana vs ben: 4 of 6 agree. Marginals ana c2 p2 cl1 a1, ben c2 p3 cl1 a0: chance
(2*2 + 2*3 + 1*1 + 1*0) / 36 = 11/36, kappa (24/36 - 11/36) / (25/36) = 13/25.
ana vs judge-b: 3 of 6 (i3, i4, i5). b: c1 p3 cl1 a1: chance (2*1 + 2*3 + 1 + 1) / 36 =
10/36, kappa (18 - 10) / 26 = 4/13.
Fleiss over ana and ben: mean item agreement 4/6; label shares over 12 labels c 4, p 5,
cl 2, a 1: chance (16 + 25 + 4 + 1) / 144 = 46/144, kappa (96 - 46) / (144 - 46) = 50/98.
The people's majority (two people giving the item one label; a tie has none): i0 current, i2 prior, i3 prior,
i4 clarify. The run's judge against it: i2 unscored (left out), i0 agrees, i3 and i4 do not:
1 of 3; majority c1 p1 cl1, judge c2 cl1: chance (1*2 + 1*1) / 9 = 1/3, kappa 0.
judge-a against it: 4 of 4, kappa 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmark.cli import main
from benchmark.labels.agreement import cohen, majority
from benchmark.labels.measure import measure_agreement
from benchmark.labels.run import open_label_run
from benchmark.labels.sample import draw_sample
from benchmark.report import write_report
from benchmark.report.viewer import write_viewer
from tests.label_runs import build_run

RUN_JUDGE = [
    "current",
    "prior",
    None,
    "clarify",
    "current",
    "abstain",
    "current",
    "prior",
    "current",
    "current",
    "prior",
    "current",
]
ANA = ["current", "current", "prior", "prior", "clarify", "abstain"]
BEN = ["current", "prior", "prior", "prior", "clarify", "current"]
JUDGE_A = ANA + RUN_JUDGE[6:]
JUDGE_B = ["prior", "prior", "current", "prior", "clarify", "abstain"] + RUN_JUDGE[6:]


def write_labels(run_dir: Path, name: str, labels: list[str]) -> None:
    folder = run_dir / "labels"
    folder.mkdir(exist_ok=True)
    keys = [f"sc-{i + 1:02d}|baseline|0" for i in range(len(labels))]
    lines = [
        json.dumps({"trial_key": k, "what": "turn2", "label": v, "annotator": name, "note": ""})
        for k, v in zip(keys, labels)
    ]
    (folder / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def labelled(tmp_path):
    run_dir = build_run(tmp_path / "run", RUN_JUDGE)
    write_labels(run_dir, "ana", ANA)
    write_labels(run_dir, "ben", BEN)
    return (
        run_dir,
        build_run(tmp_path / "judge-a", JUDGE_A, judge="judge-a"),
        build_run(tmp_path / "judge-b", JUDGE_B, judge="judge-b"),
    )


def pair(result: dict, a: str, b: str) -> dict:
    return next(p for p in result["pairs"] if {p["a"], p["b"]} == {a, b})


def test_kappas_equal_the_hand_computation(labelled):
    run_dir, judge_a, judge_b = labelled
    result = measure_agreement(open_label_run(run_dir), "turn2", [judge_a, judge_b])
    assert result["annotators"] == ["ana", "ben"] and result["human_labels"] == 12
    assert [j["name"] for j in result["judges"]] == ["judge lexical", "judge judge-a", "judge judge-b"]
    people = pair(result, "ana", "ben")
    assert people["n"] == 6 and people["agreement"]["k"] == 4
    assert people["kappa"] == pytest.approx((24 / 36 - 11 / 36) / (25 / 36)) == pytest.approx(13 / 25)
    assert pair(result, "ana", "judge judge-b")["kappa"] == pytest.approx(4 / 13)
    assert pair(result, "ana", "judge judge-a")["kappa"] == pytest.approx(1.0)
    assert pair(result, "ben", "judge judge-a")["kappa"] == pytest.approx(13 / 25)
    assert result["fleiss"]["kappa"] == pytest.approx(50 / 98) and result["fleiss"]["n"] == 6
    run_judge, a, _ = result["against_people"]
    assert (run_judge["n"], run_judge["unscored"], run_judge["agreement"]["k"]) == (3, 1, 1)
    assert run_judge["kappa"] == pytest.approx(0.0)
    assert a["kappa"] == pytest.approx(1.0) and a["n"] == 4
    assert result["majority_items"] == 4 and result["no_majority"] == 2
    precision, recall = run_judge["per_label"]["current"]["precision"], run_judge["per_label"]["current"]["recall"]
    assert (precision["k"], precision["n"], recall["k"], recall["n"]) == (1, 2, 1, 1)
    assert run_judge["confusion"]["prior"] == {"current": 0, "prior": 0, "clarify": 1, "abstain": 0, "unscored": 1}
    # on six scenarios (anything with a person) an interval is the Wilson fallback; two judges share all 12
    # items, and resample them; no interval is zero-width
    rows = [*result["pairs"], *result["against_people"]]
    assert all(r["ci_method"] == ("wilson" if r["scenarios"] < 10 else "bootstrap") for r in rows)
    assert pair(result, "judge lexical", "judge judge-a")["ci_method"] == "bootstrap"
    for row in rows:
        if row["kappa"] is not None:
            assert row["kappa_ci_low"] < row["kappa_ci_high"]
            assert row["kappa_ci_low"] <= row["kappa"] <= row["kappa_ci_high"]
        assert row["agreement"]["ci_low"] < row["agreement"]["ci_high"]
    assert result["fleiss"]["ci_method"] == "wilson" and result["fleiss"]["ci_low"] < result["fleiss"]["ci_high"]
    disagreements = [d for d in result["disagreements"] if d["judge"] == "judge lexical"]
    assert [(d["scenario_id"], d["judge_label"], d["majority"]) for d in disagreements] == [
        ("sc-03", "unscored", "prior"),
        ("sc-04", "clarify", "prior"),
        ("sc-05", "current", "clarify"),
    ]
    assert disagreements[0]["people"] == {"ana": "prior", "ben": "prior"}


def test_the_command_writes_its_files_and_findings_and_the_viewer_name_the_check(labelled, capsys):
    run_dir, judge_a, judge_b = labelled
    write_report(run_dir)
    assert "has not been checked against people on this run" in (run_dir / "findings.md").read_text()
    assert (
        "`wearsim annotate RUN_DIR`, then measure with `wearsim agreement RUN_DIR`"
        in (run_dir / "findings.md").read_text()
    )
    write_viewer(run_dir)
    assert main(["agreement", str(run_dir), "--judges", str(judge_a), str(judge_b)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Too few items to say how well the judge (lexical) agrees with people: its kappa rests on 3")
    assert "judge judge-a: kappa 1.00" in out
    for name in ("agreement.json", "agreement.md", "agreement.png"):
        assert (run_dir / name).is_file()
    assert (run_dir / "agreement.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    line = "Judge checked against 12 human labels by 2 people: kappa 0.00 ["
    assert line in (run_dir / "findings.md").read_text()
    page = (run_dir / "index.html").read_text()
    assert line in page
    markdown = (run_dir / "agreement.md").read_text()
    anchor = next(d["link"] for d in json.loads((run_dir / "agreement.json").read_text())["disagreements"])
    assert f"]({anchor})" in markdown and f'id="{anchor.split("#")[1]}"' in page  # linked to its trial


def test_intervals_resample_scenarios_from_ten_on():
    rows = [(f"s{i}", "current", "current" if i % 3 else "prior") for i in range(12)]
    rows += [(f"s{i}", "prior", "prior") for i in range(12)]
    result = cohen(rows, ("current", "prior", "clarify", "abstain"))
    assert result["ci_method"] == "bootstrap" and result["kappa_ci_low"] < result["kappa"] < result["kappa_ci_high"]
    assert majority(["prior", "prior", "current"]) == "prior" and majority(["prior", "current"]) is None
    assert majority(["prior"], 2) is None and majority(["prior", "current", "prior"], 2) == "prior"


def test_the_sample_is_stratified_and_the_same_for_everyone(tmp_path):
    run = open_label_run(build_run(tmp_path / "run", RUN_JUDGE))
    items = run.items("turn2")
    first, again = draw_sample(items, 5, 47), draw_sample(list(reversed(items)), 5, 47)
    assert [i.key for i in first] == [i.key for i in again]
    assert {i.judge_label or "unscored" for i in first} == {"current", "prior", "clarify", "abstain", "unscored"}
    assert [i.key for i in draw_sample(items, 5, 48)] != [i.key for i in first] or len(items) <= 5
    assert len(draw_sample(items, None, 47)) == len(items) == 12


def proactive_run(path: Path) -> Path:
    """A proactive run dir: pa-01 once, three remarks (a false alarm, the hit, one not conveying the event)."""
    from core.proactive_scenario import load_proactive
    from core.records import TrialRecord
    from core.watching import Probe, Watching

    pasta = next(s for s in load_proactive(Path("benchmark/v1/proactive.json")) if s.scenario_id == "pa-01")
    probes = (
        Probe(
            n=1,
            asked_ms=5000,
            frame_ms=4800,
            text="The onions look good.",
            silent=False,
            spoke_ms=5400,
            scene=0,
            outcome="false_alarm",
        ),
        Probe(
            n=2,
            asked_ms=23000,
            frame_ms=22500,
            text="The water is boiling: add the pasta.",
            silent=False,
            spoke_ms=23500,
            scene=2,
            outcome="hit",
        ),
        Probe(
            n=3,
            asked_ms=25000,
            frame_ms=24500,
            text="Nice knife work.",
            silent=False,
            spoke_ms=25600,
            scene=2,
            outcome="false_alarm",
        ),
        Probe(n=4, asked_ms=26000, frame_ms=25500, text="[silent]", silent=True),
    )
    watching = Watching(
        strategy="change",
        kind="event",
        stream_ms=pasta.stream_ms,
        scene_starts_ms=pasta.scene_starts_ms,
        onset_ms=pasta.onset_ms,
        window_end_ms=pasta.onset_ms + 12000,
        expected=pasta.event.expected,
        probes=probes,
        outcome="hit",
    )
    record = TrialRecord(
        scenario_id="pa-01",
        condition="baseline",
        trial=0,
        target_context=pasta.target_context,
        cue_type=pasta.cue_type,
        subset=pasta.subset,
        proactive="change",
        watching=watching,
    )
    path.mkdir(parents=True)
    (path / "transcripts.jsonl").write_text(record.to_line(), encoding="utf-8")
    (path / "manifest.json").write_text(
        json.dumps({"judge_family": "lexical", "judge_model": "lexical", "ranking_condition": "baseline", "trials": 1})
    )
    return path


def test_turn3_and_remark_items_show_what_the_rubric_lets_a_judge_see(tmp_path):
    from core.scenario import load_bank

    run = open_label_run(build_run(tmp_path / "run", RUN_JUDGE, repaired=(1,)))
    [repair] = run.items("turn3")
    assert repair.key == "sc-02|baseline|0|turn3" and repair.judge_label == "current"
    titles = [title for _, title, _ in repair.view]
    assert "Turn 3: the user (the repair)" in titles and "The reply to label (Turn 3)" in titles
    bank = {s.scenario_id: s for s in load_bank(None).scenarios}
    for item in run.items("turn2"):
        text = json.dumps(item.page_json())
        scenario = bank[item.scenario_id]
        assert scenario.notes not in text and scenario.cue_type not in text and "target" not in text
        assert item.judge_label is None or f'"{item.judge_label}"' not in text

    proactive = open_label_run(proactive_run(tmp_path / "proactive"))
    remarks = proactive.items("remarks")
    assert [(i.key, i.judge_label) for i in remarks] == [
        ("pa-01|baseline|0|change|remark1", "false_alarm"),
        ("pa-01|baseline|0|change|remark2", "hit"),
        ("pa-01|baseline|0|change|remark3", "not_conveying"),
    ]
    shown = dict((title, text) for _, title, text in remarks[1].view)
    assert shown["The remark to label"] == "The water is boiling: add the pasta."
    assert "The event begins at 22.0 s" in shown["When the remark came"]
    assert proactive.bank["pa-01"].notes not in json.dumps(remarks[1].page_json())


def test_a_proactive_runs_remarks_checked_against_two_people(tmp_path, capsys):
    run_dir = proactive_run(tmp_path / "proactive")
    write_report(run_dir)
    assert "`wearsim annotate RUN_DIR --what remarks`" in (run_dir / "findings.md").read_text()
    (run_dir / "labels").mkdir()
    lines = [
        {"trial_key": f"pa-01|baseline|0|change|remark{n}", "what": "remarks", "label": label}
        for n, label in ((1, "false_alarm"), (2, "hit"), (3, "false_alarm"))
    ]
    (run_dir / "labels" / "ana.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert main(["agreement", str(run_dir), "--what", "remarks"]) == 0  # one person: no majority yet
    assert json.loads((run_dir / "agreement_remarks.json").read_text())["against_people"][0]["n"] == 0
    assert "no item yet has two people agreeing on its label" in (run_dir / "findings.md").read_text()
    (run_dir / "labels" / "ben.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert main(["agreement", str(run_dir), "--what", "remarks"]) == 0
    result = json.loads((run_dir / "agreement_remarks.json").read_text())
    judge = result["against_people"][0]
    assert (judge["n"], judge["agreement"]["k"]) == (3, 2)
    # majority f h f, judge f h n: chance (2*1 + 1*1 + 0*1) / 9 = 1/3, kappa (2/3 - 1/3) / (2/3) = 1/2
    assert judge["kappa"] == pytest.approx(0.5)
    assert "Judge checked against 6 human labels by 2 people: kappa 0.50 [" in (run_dir / "findings.md").read_text()
