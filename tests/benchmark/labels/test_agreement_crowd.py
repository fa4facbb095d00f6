"""Issue 57 row 13: `agreement` with many annotators stays linear: past MAX_PAIR_RATERS raters the
pairwise Cohen table is left out with a line saying so (Fleiss' kappa and each judge against the
majority stand for it), so 40 annotators take about what a few do."""

from __future__ import annotations

import time

from benchmark.labels.measure import MAX_PAIR_RATERS, measure_agreement
from benchmark.labels.run import open_label_run
from benchmark.labels.store import make_label, write_labels
from tests.label_runs import build_run

CHOICES = ["current", "prior", "clarify", "abstain"]


def test_forty_annotators_are_measured_in_bounded_time_and_the_pairs_left_out_said(tmp_path):
    run = open_label_run(build_run(tmp_path / "run", ["current"] * 12))
    keys = sorted(run.known)
    for n in range(40):
        labels = [make_label(k, CHOICES[(i + n // 10) % 4], f"p{n}", run.known, "test") for i, k in enumerate(keys)]
        write_labels(run.run_dir, f"p{n}", labels, run.known)
    started = time.monotonic()
    result = measure_agreement(run, "turn2")
    took = time.monotonic() - started
    assert len(result["annotators"]) == 40 and result["pairs"] == []
    assert result["pairs_left_out"].startswith("41 raters make 820 pairs")
    assert result["fleiss"]["raters"] == 40
    assert took < 20, took


def test_a_few_annotators_still_get_every_pair(tmp_path):
    run = open_label_run(build_run(tmp_path / "run", ["current"] * 6))
    for n in range(3):
        write_labels(
            run.run_dir, f"p{n}", [make_label(k, "current", f"p{n}", run.known, "t") for k in run.known], run.known
        )
    result = measure_agreement(run, "turn2")
    assert result["pairs_left_out"] is None and len(result["pairs"]) == 6  # 3 people and the judge
    assert MAX_PAIR_RATERS >= 4


def test_an_import_naming_more_annotators_than_a_run_holds_is_refused_before_a_file_is_written(tmp_path, capsys):
    """The attack created 25,005 label files in one import; past MAX_ANNOTATORS (counting those already there)
    the import is one line and labels/ is as it was."""
    from benchmark.cli import main
    from benchmark.labels.store import MAX_ANNOTATORS

    run = open_label_run(build_run(tmp_path / "run", ["current"] * 4))
    key = sorted(run.known)[0]
    write_labels(run.run_dir, "ana", [make_label(key, "current", "ana", run.known, "test")], run.known)
    crowd = tmp_path / "crowd.csv"
    rows = [f"{key},prior,p{n}" for n in range(MAX_ANNOTATORS)]  # with ana: one over
    crowd.write_text("trial_key,label,annotator\n" + "\n".join(rows) + "\n", encoding="utf-8")
    before = sorted(p.name for p in (run.run_dir / "labels").iterdir())
    capsys.readouterr()
    assert main(["labels", "import", str(run.run_dir), str(crowd)]) == 2
    err = capsys.readouterr().err
    assert f"{MAX_ANNOTATORS:,} new annotators" in err and f"over the {MAX_ANNOTATORS:,}" in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert sorted(p.name for p in (run.run_dir / "labels").iterdir()) == before
    crowd.write_text("trial_key,label,annotator\n" + "\n".join(rows[:-1]) + "\n", encoding="utf-8")
    assert main(["labels", "import", str(run.run_dir), str(crowd)]) == 0  # at the cap: taken
    assert len(list((run.run_dir / "labels").glob("*.jsonl"))) == MAX_ANNOTATORS
