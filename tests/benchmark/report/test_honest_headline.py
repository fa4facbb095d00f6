"""The headline says "N of M scored: not a measurement" when fewer than half the
cells of the ranking condition are scored, in findings.md, the viewer and the
`wearsim report` line; otherwise it leads with the balanced accuracy."""

from __future__ import annotations

import argparse
import json

from benchmark.cli import report as report_cli
from benchmark.report import write_report
from benchmark.report.findings import headline, is_measurement, render_findings
from benchmark.report.viewer import write_viewer
from benchmark.scoring import build_summary
from benchmark.scoring.summary_view import RunSummary
from benchmark.scoring.trials import TrialSet
from core.judge import Verdict
from core.records import TrialRecord

IDS = [f"sc-{i:02d}" for i in range(1, 51)]


def trial(index: int, outcome: str, condition: str = "baseline") -> TrialRecord:
    """Scenario `index`: even ids target `current`, odd ones `prior`; outcome pass, miss, unscored or error."""
    target = "current" if index % 2 == 0 else "prior"
    other = "prior" if target == "current" else "current"
    verdict = {
        "pass": Verdict(label=target, rationale="names the right object", judge="lexical"),
        "miss": Verdict(label=other, rationale="names the other object", judge="lexical"),
        "unscored": Verdict(label=None, rationale="no signal", judge="lexical", unscored_reason="no signal"),
    }.get(outcome)
    return TrialRecord(
        scenario_id=IDS[index],
        condition=condition,
        trial=0,
        target_context=target,
        cue_type="object_in_hand",
        turn_2_judge=verdict,
        error="candidate timed out after 3 retries" if outcome == "error" else None,
    )


def outcomes(passes: int, misses: int, unscored: int, errors: int) -> list[str]:
    return ["pass"] * passes + ["miss"] * misses + ["unscored"] * unscored + ["error"] * errors


def manifest(conditions=("baseline",), ids=IDS) -> dict:
    return {
        "candidate_model": "replay:test",
        "judge_family": "lexical",
        "judge_model": "lexical",
        "trials": 1,
        "ranking_condition": "baseline",
        "conditions": list(conditions),
        "scenario_ids": list(ids),
    }


def write_run(path, trials: list[TrialRecord], run_manifest: dict):
    path.mkdir()
    (path / "manifest.json").write_text(json.dumps(run_manifest), encoding="utf-8")
    (path / "transcripts.jsonl").write_text("".join(t.to_line() for t in trials), encoding="utf-8")
    return path


def summary_of(trials: list[TrialRecord], run_manifest: dict) -> dict:
    return build_summary(TrialSet(trials=tuple(trials), source=None), run_manifest)


def report_line(run_dir, capsys) -> str:
    parser = argparse.ArgumentParser(prog="wearsim")
    report_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["report", str(run_dir)])
    assert args.run(args) == 0
    return capsys.readouterr().out.splitlines()[0]


def test_13_of_50_scored_is_not_a_measurement(tmp_path, capsys):
    # 13 scored (7 pass, 6 miss), 30 unscored, 7 errored
    trials = [trial(i, o) for i, o in enumerate(outcomes(7, 6, 30, 7))]
    run_dir = write_run(tmp_path / "run", trials, manifest())
    summary = write_report(run_dir)
    findings = (run_dir / "findings.md").read_text(encoding="utf-8").splitlines()
    # turns OK over every planned cell first, with each fault category (the errors timed out)
    assert findings[2].startswith("**Turns OK: 13 of 50 planned cells** (26.0%)")
    assert "7 timeout; 30 judge_unscored" in findings[2]
    assert findings[4].startswith("**7 of 50 cells errored** (14.0%)")  # then the errors, when any cell errored
    assert findings[6].startswith("**13 of 50 scored: not a measurement** (baseline: 30 unscored, 7 errored)")
    assert "Balanced Turn 2 accuracy (baseline)" not in "\n".join(findings)
    line = report_line(run_dir, capsys)
    assert line.startswith("13 of 50 scored: not a measurement (baseline: 30 unscored, 7 errored")
    assert line == headline(RunSummary.from_json(summary))
    page = write_viewer(run_dir).read_text(encoding="utf-8")
    assert '<p class="headline unmeasured" id="headline">13 of 50 scored: not a measurement' in page


def test_40_of_50_scored_leads_with_the_percentage(tmp_path, capsys):
    # 40 scored: even indexes target current, odd prior; 30 pass and 10 miss, then 6 unscored, 4 errored
    trials = [trial(i, o) for i, o in enumerate(outcomes(30, 10, 6, 4))]
    run_dir = write_run(tmp_path / "run", trials, manifest())
    summary = write_report(run_dir)
    current = [t for t in trials if t.scored and t.target_context == "current"]
    prior = [t for t in trials if t.scored and t.target_context == "prior"]
    expected = (sum(t.passed for t in current) / len(current) + sum(t.passed for t in prior) / len(prior)) / 2
    assert summary["primary"]["balanced_accuracy"] == expected
    findings = (run_dir / "findings.md").read_text(encoding="utf-8").splitlines()
    assert findings[2].startswith("**Turns OK: 40 of 50 planned cells** (80.0%)")
    assert findings[4].startswith("**4 of 50 cells errored** (8.0%)")
    assert findings[6].startswith(f"**Balanced Turn 2 accuracy (baseline): {100 * expected:.1f}%**, 95% CI [")
    assert "not a measurement" not in "\n".join(findings)
    line = report_line(run_dir, capsys)
    assert line.startswith(f"balanced Turn 2 accuracy (baseline): {100 * expected:.1f}% 95% CI [")
    assert line.endswith("40 of 50 scored)")


def test_half_is_the_threshold():
    half = summary_of([trial(i, o) for i, o in enumerate(outcomes(13, 12, 25, 0))], manifest())
    under = summary_of([trial(i, o) for i, o in enumerate(outcomes(12, 12, 25, 1))], manifest())
    assert is_measurement(RunSummary.from_json(half)) and headline(RunSummary.from_json(half)).startswith(
        "balanced Turn 2 accuracy (baseline): "
    )
    assert not is_measurement(RunSummary.from_json(under)) and headline(RunSummary.from_json(under)).startswith(
        "24 of 50 scored: not a measurement"
    )


def test_cells_never_played_count_as_not_scored():
    # the run stopped after 13 cells of the 50 the manifest planned; all 13 are scored
    summary = summary_of([trial(i, "pass") for i in range(13)], manifest())
    assert headline(RunSummary.from_json(summary)).startswith(
        "13 of 50 scored: not a measurement (baseline: 0 unscored, 0 errored, 37 not run"
    )
    # without a manifest the recorded trials are the cells
    assert headline(RunSummary.from_json(summary_of([trial(i, "pass") for i in range(13)], {}))).startswith(
        "balanced Turn 2 accuracy (baseline): 100.0%"
    )


def test_only_the_ranking_condition_counts():
    trials = [trial(i, o) for i, o in enumerate(outcomes(7, 6, 37, 0))]
    trials += [trial(i, "pass", condition="explicit") for i in range(50)]
    summary = summary_of(trials, manifest(conditions=("baseline", "explicit")))
    assert headline(RunSummary.from_json(summary)).startswith("13 of 50 scored: not a measurement")
    assert is_measurement(RunSummary.from_json(summary), "explicit")
    summary["manifest"]["ranking_condition"] = "explicit"
    summary = summary_of(trials, summary["manifest"])
    assert headline(RunSummary.from_json(summary)).startswith("balanced Turn 2 accuracy (explicit): 100.0%")


def _has_warning_red(png) -> bool:
    from PIL import Image

    from benchmark.report.plots import WARN

    red = tuple(int(WARN[i : i + 2], 16) for i in (1, 3, 5))
    with Image.open(png) as image:
        top = image.convert("RGB").crop((0, 0, image.width, image.height // 6))
        return any(abs(r - red[0]) + abs(g - red[1]) + abs(b - red[2]) < 60 for _, (r, g, b) in top.getcolors(1 << 20))


def test_every_plot_and_the_rescore_line_that_shows_a_score_shows_the_warning(tmp_path, capsys):
    """A 50% bar, a staleness point or the rescore line never stands without "not a measurement"."""
    from benchmark.report.plots import plot_balanced_accuracy, plot_staleness

    few = [trial(i, o) for i, o in enumerate(outcomes(10, 10, 30, 0))]
    unmeasured = summary_of(few, manifest())
    plot_balanced_accuracy(RunSummary.from_json(unmeasured), tmp_path / "few.png")
    measured = summary_of([trial(i, o) for i, o in enumerate(outcomes(30, 10, 10, 0))], manifest())
    plot_balanced_accuracy(RunSummary.from_json(measured), tmp_path / "many.png")
    assert _has_warning_red(tmp_path / "few.png") and not _has_warning_red(tmp_path / "many.png")
    sweep = {
        "baseline": {
            "0": {
                "accuracy": {"rate": 0.5, "k": 5, "n": 10, "ci_low": 0.2, "ci_high": 0.8},
                "earlier_scene": {"rate": 0.2, "k": 1, "n": 5, "ci_low": 0.0, "ci_high": 0.6},
                "frame_age_p50_s": None,
                "trials": 25,
                "with_frames": 0,
            }
        }
    }
    plot_staleness(
        RunSummary.from_json({**measured, "by_staleness": sweep}), tmp_path / "stale.png"
    )  # no Turn 2 frames: warned
    assert _has_warning_red(tmp_path / "stale.png")
    run = write_run(tmp_path / "run", few, manifest())
    from benchmark.cli import main

    assert main(["rescore", str(run), "--judge-family", "lexical", "--output-dir", str(tmp_path / "again")]) == 0
    out = capsys.readouterr().out
    assert "not a measurement" in out and "with the new judge" in out


def test_an_unmeasured_run_leads_with_what_happened_why_and_the_next_command():
    from benchmark.report.findings import render_findings

    records = [trial(i, o) for i, o in enumerate(outcomes(12, 12, 26, 0))]
    run_manifest = {**manifest(), "candidate_model": "local", "judge_model": "lexical"}
    text = render_findings(RunSummary.from_json(summary_of(records, run_manifest)))
    head = text[: text.index("## ")]  # everything before the first section
    assert "24 of 50 scored: not a measurement" in head
    assert "What happened: 50 of the 50 cells" in head and "labelled 24 of the Turn 2 replies" in head
    assert "Why 26 replies have no label (26 no signal)" in head and "bundled 135M-parameter stand-in" in head
    assert "wearsim rescore RUN_DIR --judge-family openai" in head and "--base-url" in head
    assert text.index("## Conditions") < text.index("## Manifest")  # the results first, the settings last


def test_the_progress_line_gives_no_eta_before_a_cell_has_finished(capsys, monkeypatch):
    import sys

    from benchmark.run.progress import Progress

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)  # the bar is drawn on a terminal
    Progress(50).tick()
    assert "eta    ?" in capsys.readouterr().err


def test_a_measured_run_of_the_bundled_stand_in_says_what_its_number_is_worth():
    from benchmark.report.findings import render_findings

    records = [trial(i, o) for i, o in enumerate(outcomes(20, 12, 18, 0))]
    text = render_findings(RunSummary.from_json(summary_of(records, {**manifest(), "candidate_model": "local"})))
    head = text[: text.index("## ")]
    assert head.startswith("# Findings\n\n**Turns OK: 32 of 50 planned cells** (64.0%)")  # then the headline:
    assert head.split("\n\n")[2].startswith("**Balanced Turn 2 accuracy (baseline)")
    assert "bundled 135M-parameter stand-in" in head and "not how an assistant keeps up" in head
    assert "wearsim rescore RUN_DIR" in head
    assert "stand-in" not in render_findings(
        RunSummary.from_json(summary_of(records, manifest()))
    )  # a real candidate: no such note


def test_few_scenarios_never_show_a_zero_width_interval(tmp_path, capsys):
    """Issue 34, item 2: three scored trials that all pass (and seven that all miss) resample to a
    zero-width bootstrap; the interval falls back to the per-class Wilson bounds, whose low end is below
    100% (high end above 0%), in summary.json, findings.md (saying how it was made) and `wearsim compare`."""
    from benchmark.cli import compare as compare_cli
    from benchmark.stats import wilson_interval

    passing = write_run(tmp_path / "three", [trial(i, "pass") for i in range(3)], manifest(ids=IDS[:3]))
    summary = write_report(passing)
    primary = summary["primary"]
    assert primary["balanced_accuracy"] == 1.0
    assert primary["ci_high"] == 1.0 and primary["ci_low"] < 1.0
    assert primary["interval_method"] == "wilson"
    # the mean over the classes of each class's Wilson bounds: current 1/1, prior 2/2
    assert abs(primary["ci_low"] - (wilson_interval(1, 1)[0] + wilson_interval(2, 2)[0]) / 2) < 1e-9
    assert summary["conditions"]["baseline"]["ci_low"] == primary["ci_low"]
    findings = (passing / "findings.md").read_text()
    assert "[100.0%, 100.0%]" not in findings
    assert "Wilson" in findings and "3 scenarios" in findings
    missing = summary_of([trial(i, "miss") for i in range(7)], manifest(ids=IDS[:7]))["primary"]
    assert missing["ci_low"] == 0.0 and missing["ci_high"] > 0.0
    # many scenarios, a spread of outcomes: still the bootstrap
    spread = summary_of([trial(i, "pass" if i % 3 else "miss") for i in range(50)], manifest())
    assert spread["primary"]["interval_method"] == "bootstrap"
    said = render_findings(RunSummary.from_json(spread))
    assert "resamples scenarios" in said and "10,000 draws" in said and "seed 20240607" in said

    other = write_run(tmp_path / "other", [trial(i, "pass") for i in range(3)], manifest(ids=IDS[:3]))
    write_report(other)
    parser = argparse.ArgumentParser(prog="wearsim")
    compare_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["compare", str(passing), str(other)])
    args.run(args)
    out = capsys.readouterr().out
    assert "100.0% [100.0%" not in out and "100.0% [" in out


def test_the_turns_ok_sentence_says_unscored_cells_are_not_ok_and_cells_are_called_cells(tmp_path):
    """Issue 34, item 11: "Turns OK: 28 of 50" counted judge-unscored cells as not OK without saying so in
    that sentence; "50 of the 50 scenario runs" meant cells."""
    from benchmark.report.faults import fault_lead

    trials = [trial(i, o) for i, o in enumerate(outcomes(13, 2, 30, 5))]
    summary = write_report(write_run(tmp_path / "run", trials, manifest()))
    findings = (tmp_path / "run" / "findings.md").read_text()
    turns_ok = findings.splitlines()[2]
    assert turns_ok.startswith("**Turns OK: 15 of 50 planned cells**")
    assert "unscored" in turns_ok.split("The others")[0] and "not OK" in turns_ok
    assert (
        "unscored" in fault_lead(RunSummary.from_json(summary).faults).split("); ")[0]
    )  # the line `wearsim bench` prints too
    assert "scenario runs" not in findings and "of the 50 cells" in findings


def test_the_scenario_table_and_the_repair_table_name_an_unjudged_repair_alike():
    """Issue 34, item 11: the repair table said "no repair recorded 0" where the scenario table said
    "1 repair missing" for the same trial (its Turn 3 was sent, and the judge left it unscored)."""
    miss = trial(2, "miss").replace(
        turn_3_repair_attempted=True,
        turn_3_judge=Verdict(label=None, rationale="no signal", judge="lexical", unscored_reason="no signal"),
    )
    findings = render_findings(RunSummary.from_json(summary_of([trial(0, "pass"), miss], manifest(ids=IDS[:3]))))
    assert "repair missing" not in findings and "no repair recorded" not in findings
    assert "1 fail->repair-unjudged" in findings
    repair = next(line for line in findings.splitlines() if "Turn 3 unscored" in line and "|" in line)
    assert "repair not sent" in repair
