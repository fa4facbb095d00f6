"""Measuring a run's judge against its people and bringing the run's report up to date with it.

findings.md and the viewer print the human-check line (`benchmark.report.human_check`), read from
the run's agreement file. `measure_and_report` is `wearsim agreement`'s work: measure, write
agreement.json, .md and .png, then, for the kind of item the report speaks of (Turn 2, or a proactive
run's remarks), write the report again (findings.md, summary.json, plots/) and the viewer when the run
has one. `refresh_human_check` is the same after labels change (`wearsim labels import`, the end of
`wearsim annotate`), with the rescore dirs the last measure compared (those still there), and the report
written again only where the run has one.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmark.labels.agreement_report import write_agreement
from benchmark.labels.measure import measure_agreement
from benchmark.labels.store import read_all_labels
from benchmark.report.human_check import MAX_AGREEMENT_BYTES, agreement_stem, human_check_line, read_human_check
from benchmark.scoring.summary_parts import HumanCheck
from benchmark.scoring.summary_view import RunSummary


@dataclass(kw_only=True)
class Measured:
    result: dict
    paths: list[Path]
    line: str | None  # the human-check line as findings.md prints it now (None: not the report's kind)
    dropped: list[str] = field(default_factory=list)  # rescore dirs of the last measure no longer found


def report_what(run) -> str:
    """The kind of item the run's report checks against people: a proactive run's remarks, else Turn 2."""
    return "remarks" if run.items("remarks") and not run.items("turn2") else "turn2"


def measure_and_report(
    run, what: str, judge_dirs: Sequence[Path] = (), *, report: bool = True, sample: str | None = None
) -> Measured:
    """Measure (the labels of one sample: `measure.which_sample`) and write the agreement files; for the
    report's kind, write the report again (`report`: always; else only when the run has one) and the
    viewer when it exists."""
    from benchmark.report import write_report
    from benchmark.report.viewer import write_viewer

    run_dir = Path(run.run_dir)
    result = measure_agreement(run, what, judge_dirs, sample)
    paths = write_agreement(result, run_dir)
    if what != report_what(run):
        return Measured(result=result, paths=paths, line=None)
    summary = None
    if report or (run_dir / "findings.md").is_file() or (run_dir / "summary.json").is_file():
        summary = RunSummary.from_json(write_report(run_dir))
        if (run_dir / "index.html").is_file():
            write_viewer(run_dir, summary=summary)
    check = summary.human_check if summary is not None else HumanCheck.from_json(read_human_check(run_dir, what))
    line = human_check_line(check)
    return Measured(result=result, paths=paths, line=line.replace("RUN_DIR", str(run_dir)))


def last_judges(run_dir: Path, what: str) -> tuple[list[Path], list[str]]:
    """The rescore dirs the last `wearsim agreement` compared (agreement.json's judges after the run's
    own): those still there, and those no longer found."""
    path = Path(run_dir) / f"{agreement_stem(what)}.json"
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_AGREEMENT_BYTES:
            return [], []
        sources = [str(j["source"]) for j in json.loads(path.read_bytes())["judges"][1:]]
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return [], []
    kept = [Path(s) for s in sources if Path(s).is_dir()]
    return kept, [s for s in sources if not Path(s).is_dir()]


def refresh_human_check(run, kinds: Collection[str], sample: str | None = None) -> Measured | None:
    """After labels of `kinds` (of `sample`, when it is known) changed: measure the report's kind again
    when it is among them (None when it is not, or when nobody has labelled an item of it yet)."""
    what = report_what(run)
    if what not in kinds:
        return None
    people = read_all_labels(run.run_dir, run.known)
    if not any(label.what == what for given in people.values() for label in given.values()):
        return None
    judges, dropped = last_judges(run.run_dir, what)
    measured = measure_and_report(run, what, judges, report=False, sample=sample)
    measured.dropped = dropped
    return measured
