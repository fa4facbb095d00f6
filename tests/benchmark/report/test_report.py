"""`write_report` and `wearsim report` on our fixture and on the external transcript format."""

from __future__ import annotations

import argparse
import json
import shutil

import pytest

from benchmark.cli import report as report_cli
from benchmark.report import write_report
from benchmark.report.findings import render_findings
from benchmark.scoring.summary_view import RunSummary
from tests.paths import FIXTURES

FIXTURES = FIXTURES / "transcripts"


def run_cli(argv: list[str]) -> int:
    """Run `wearsim report` through its own parser (independent of the other subcommands)."""
    parser = argparse.ArgumentParser(prog="wearsim")
    report_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["report", *argv])
    return args.run(args)


def test_report_writes_summary_findings_and_plots(tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(FIXTURES / "ours_small", run_dir)
    summary = write_report(run_dir)
    on_disk = json.loads((run_dir / "summary.json").read_text())
    assert on_disk == json.loads(json.dumps(summary))
    assert set(on_disk) >= {
        "manifest",
        "primary",
        "conditions",
        "by_cue_type",
        "by_difficulty",
        "confusion",
        "judge_agreement",
        "counts",
    }
    assert on_disk["manifest"]["candidate_model"] == "replay:fixture"
    for name in ("balanced_accuracy.png", "accuracy_by_cue_type.png", "confusion.png"):
        data = (run_dir / "plots" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5_000
    findings = (run_dir / "findings.md").read_text()
    assert findings == render_findings(RunSummary.from_json(on_disk))  # rendered from summary.json alone


def test_findings_content(tmp_path):
    summary = write_report(FIXTURES / "ours_small", output_dir=tmp_path)
    findings = (tmp_path / "findings.md").read_text()
    # three scenarios: the per-class Wilson bounds combined, not a bootstrap over them (issue 34)
    assert "Balanced Turn 2 accuracy (baseline): 87.5%**, 95% CI [32.2%, 97.7%]" in findings
    assert "The interval is not a bootstrap: resampling only 3 scenarios (fewer than 10)" in findings
    assert "Wilson score bounds combined" in findings
    assert "a class with no trials is left out, not counted as 0" in findings
    assert "| abstain | auxiliary | n/a (0/0) n/a | n/a (0/0) n/a |" in findings
    assert "| baseline | 50.0% | 1/2 |" in findings  # repair table
    assert "| s_cur_a | current | object_in_hand | 2 pass, 1 fail->repair-pass, 0 fail->repair-fail |" in findings
    assert "It is not the publication judge" in findings  # judge_family is lexical
    assert "Turn 2 unscored (judge label null) 1; errored 1" in findings
    assert "Cohen's kappa 0.500" in findings
    assert "differs from the judge label in 1 of 3" in findings
    # a non-lexical judge gets no such flag
    summary["manifest"]["judge_family"] = "gemini"
    assert "publication judge" not in render_findings(RunSummary.from_json(summary))


def test_report_from_external_transcripts_reproduces_hand_balanced_accuracy(tmp_path, capsys):
    # external_small.jsonl (change_type, turn_2_judge_policy, turn_3_judge_policy), all baseline:
    #   x1 current: current current current prior current   -> 4/5
    #   x2 current: prior prior current current current     -> 3/5   current = 7/10
    #   x3 prior:   current prior prior prior prior         -> 4/5
    #   x4 prior:   prior current current prior (null)      -> 2/4   prior = 6/9
    #   x5 abstain: abstain abstain                         -> 2/2 (auxiliary)
    # balanced = (7/10 + 6/9) / 2 = 0.683333
    # repairs after the 6 misses: x1 t3 pass, x2 t0 pass, x2 t1 fail, x3 t0 pass,
    #   x4 t1 pass, x4 t2 fail -> 4/6
    out = tmp_path / "other"
    code = run_cli(["--from-transcripts", str(FIXTURES / "external_small.jsonl"), "--output-dir", str(out)])
    assert code == 0
    assert "balanced Turn 2 accuracy (baseline): 68.3%" in capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    assert summary["primary"]["balanced_accuracy"] == pytest.approx((7 / 10 + 6 / 9) / 2)
    baseline = summary["conditions"]["baseline"]
    assert (baseline["per_class"]["current"]["k"], baseline["per_class"]["current"]["n"]) == (7, 10)
    assert (baseline["per_class"]["prior"]["k"], baseline["per_class"]["prior"]["n"]) == (6, 9)
    assert (baseline["per_class"]["abstain"]["k"], baseline["per_class"]["abstain"]["n"]) == (2, 2)
    assert (baseline["repair_rate"]["k"], baseline["repair_rate"]["n"]) == (4, 6)
    assert summary["counts"]["turn_2_unscored"] == 1
    # change_type cross_session_reference is read as pre_conversation_recall
    assert "pre_conversation_recall" in summary["by_cue_type"]["baseline"]
    assert (out / "findings.md").exists() and (out / "plots" / "confusion.png").exists()


def test_report_errors_are_clear(tmp_path, capsys):
    assert run_cli([str(tmp_path / "missing")]) == 2
    assert "not a run dir" in capsys.readouterr().err
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "transcripts.jsonl").write_text('{"scenario_id": "s"}\n')
    assert run_cli([str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad / 'transcripts.jsonl'}: line 1: field 'condition' is missing" in err
    assert run_cli(["--from-transcripts", str(FIXTURES / "external_small.jsonl")]) == 2


def test_help_has_an_example(capsys):
    with pytest.raises(SystemExit):
        run_cli(["--help"])
    assert "wearsim report --from-transcripts" in capsys.readouterr().out


def _two_copies(tmp_path):
    for name in ("worker", "inline"):
        shutil.copytree(FIXTURES / "ours_small", tmp_path / name)
    return tmp_path / "worker", tmp_path / "inline"


def test_the_report_worker_writes_the_same_report_as_the_process_itself(tmp_path, monkeypatch):
    import benchmark.report as report

    worker_dir, inline_dir = _two_copies(tmp_path)
    report.start_worker(worker_dir)
    worker = report._WORKERS[worker_dir.resolve()]
    write_report(inline_dir)
    monkeypatch.setattr(report, "_write_report", lambda *a, **k: pytest.fail("the worker did not write it"))
    summary = write_report(worker_dir)
    assert worker.process.returncode == 0 and not report._WORKERS
    for name in ("summary.json", "findings.md"):
        assert (worker_dir / name).read_text() == (inline_dir / name).read_text()
    assert summary == json.loads((worker_dir / "summary.json").read_text())
    for name in ("balanced_accuracy.png", "accuracy_by_cue_type.png", "confusion.png"):
        assert (worker_dir / "plots" / name).read_bytes() == (inline_dir / "plots" / name).read_bytes()


def test_a_report_worker_that_died_leaves_the_report_to_the_process_itself(tmp_path):
    import benchmark.report as report

    worker_dir, inline_dir = _two_copies(tmp_path)
    report.start_worker(worker_dir)
    worker = report._WORKERS[worker_dir.resolve()]
    worker.process.kill()
    worker.process.wait()
    write_report(worker_dir)
    write_report(inline_dir)
    assert (worker_dir / "findings.md").read_text() == (inline_dir / "findings.md").read_text()
    assert (worker_dir / "plots" / "confusion.png").stat().st_size > 5_000


def test_plots_of_a_run_with_nothing_scored(tmp_path):
    """Every trial errored or unscored: the plots are drawn, with nothing to show in them."""
    from benchmark.report.plots import draw_plots

    summary = write_report(FIXTURES / "ours_small", output_dir=tmp_path / "report")
    for condition in summary["conditions"].values():
        condition.update(balanced_accuracy=None, ci_low=None, ci_high=None)
    summary.update(
        by_cue_type={name: {} for name in summary["conditions"]},
        confusion={},
        by_staleness={name: {} for name in summary["conditions"]},
    )
    paths = draw_plots(RunSummary.from_json(summary), tmp_path / "plots")
    assert [p.name for p in paths] == [
        "balanced_accuracy.png",
        "accuracy_by_cue_type.png",
        "confusion.png",
        "staleness.png",
    ]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in paths)


def test_thousands_of_shift_types_draw_a_plot_of_bounded_size(tmp_path):
    """3,000 distinct cue types once took the report to 1.2 GB: the plot keeps the most played ones."""
    from PIL import Image

    from benchmark.report.plots import MAX_ROWS, plot_accuracy_by_cue_type

    cell = {"rate": 0.5, "k": 1, "n": 2, "ci_low": 0.1, "ci_high": 0.9}
    summary = {"by_cue_type": {"baseline": {f"cue-{i:04d}": cell for i in range(3000)}}}
    plot_accuracy_by_cue_type(RunSummary.from_json(summary), tmp_path / "cues.png")
    with Image.open(tmp_path / "cues.png") as image:
        assert image.height < 40 * MAX_ROWS * 2  # pixels at the chart's double scale: about MAX_ROWS rows
