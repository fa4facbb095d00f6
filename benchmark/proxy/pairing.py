"""Pair two runs and measure how far the Turn 2 score moved from A to B.

Trials are paired by their cell (scenario, condition, trial index). The
headline is `benchmark.comparison.runs.compare_trial_sets` (balanced Turn 2
accuracy over current and prior, the paired scenario-resampling bootstrap of
B - A, the exact McNemar test on the flips); the same is broken down by shift
type and by target class here. Before any pairing, the two runs must have
been made with the same bank: their manifests' bank hashes must agree.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmark.comparison.runs import compare_trial_sets, paired_trials
from benchmark.scoring.metrics import paired_accuracy as paired_cell
from benchmark.scoring.summary import ranking_condition
from benchmark.scoring.summary_view import RunManifest
from benchmark.scoring.trials import LABELS, TrialSet, load_trials
from core.records import TrialRecord

BANK_HASHES = ("scenarios_sha256", "expected_answers_sha256")


class ProxyReportError(ValueError):
    """A reason the report cannot be made, in one line."""


@dataclass(frozen=True, kw_only=True)
class Run:
    """One side of the comparison: its trials and its manifest (empty when it has none)."""

    label: str  # "A" or "B"
    path: Path
    trials: TrialSet
    manifest: dict

    @property
    def via(self) -> str:
        kinds = sorted({t.via for t in self.trials.trials if t.via})
        return self.manifest.get("via") or (", ".join(kinds) if kinds else "unknown")

    @property
    def model(self) -> str:
        models = sorted({t.candidate_model for t in self.trials.trials if t.candidate_model})
        return self.manifest.get("candidate_model") or (", ".join(models) if models else "unknown")

    def describe(self) -> dict:
        return {
            "label": self.label,
            "path": str(self.path),
            "via": self.via,
            "candidate_model": self.model,
            "trials": len(self.trials.trials),
            "judge_model": self.manifest.get("judge_model"),
            "frames": frames_drawn(self.manifest),
        }


def frames_drawn(manifest: dict) -> str | None:
    """What the glasses sent where no recording exists: "pictograph" (scene specs drawn as pictures),
    "synthetic" (the camera text drawn), or None (recordings only, or the text proxy)."""
    if manifest.get("pictograph_frames"):
        return "pictograph"
    return "synthetic" if manifest.get("synthetic_frames") else None


def _one_line(exc: Exception) -> str:
    problems = getattr(exc, "problems", None) or str(exc).splitlines() or [type(exc).__name__]
    more = len(problems) - 1
    return problems[0] + (f" (and {more} more problem{'s' * (more > 1)})" if more > 0 else "")


def load_run(label: str, path: str | Path) -> Run:
    """Read a run dir (or a transcripts file); raise `ProxyReportError` in one line."""
    from benchmark.report import read_manifest
    from benchmark.scoring.trials import TranscriptError

    path = Path(path)
    if not path.exists():
        raise ProxyReportError(f"run {label}: {path}: no such file or directory")
    try:
        trials = load_trials(path)
        manifest = read_manifest(path) if path.is_dir() else {}
    except (TranscriptError, ValueError, OSError) as exc:
        raise ProxyReportError(f"run {label}: {_one_line(exc)}") from exc
    return Run(label=label, path=path, trials=trials, manifest=manifest)


def check_bank_hashes(a: Run, b: Run) -> dict:
    """Refuse runs made with different banks; say what could not be checked."""
    checked, unchecked = {}, []
    for key in BANK_HASHES:
        first, second = a.manifest.get(key), b.manifest.get(key)
        if first and second and first != second:
            raise ProxyReportError(
                f"the runs used different banks: {key} differs "
                f"(A {a.path / 'manifest.json'}: {first}; B {b.path / 'manifest.json'}: {second})"
            )
        if first and second:
            checked[key] = first
        else:
            unchecked.append(key)
    note = (
        "both manifests carry the same bank hashes"
        if not unchecked
        else f"not checked ({', '.join(unchecked)} missing from a manifest): the runs may use different banks"
    )
    return {"checked": checked, "unchecked": unchecked, "note": note}


def choose_condition(a: Run, b: Run, wanted: str | None) -> tuple[str, str]:
    present = sorted({t.condition for t in a.trials.trials} | {t.condition for t in b.trials.trials})
    if wanted:
        if wanted not in present:
            raise ProxyReportError(
                f"--condition {wanted}: no trials of that condition in either run (present: {', '.join(present)})"
            )
        return wanted, "chosen with --condition"
    name, why = ranking_condition(a.trials.trials, a.manifest)
    if name not in present:
        raise ProxyReportError(
            f"condition {name} ({why} of run A) has no trials in either run; "
            f"pass --condition (present: {', '.join(present)})"
        )
    return name, f"{why}, run A"


def cell_counts(a: Run, b: Run, condition: str) -> dict:
    """How many cells of the condition exist, are paired, and are scored on both sides."""
    cells_a = {t.cell: t for t in a.trials.trials if t.condition == condition}
    cells_b = {t.cell: t for t in b.trials.trials if t.condition == condition}
    both = cells_a.keys() & cells_b.keys()
    return {
        "cells": len(cells_a.keys() | cells_b.keys()),
        "in_both": len(both),
        "only_a": len(cells_a.keys() - cells_b.keys()),
        "only_b": len(cells_b.keys() - cells_a.keys()),
        "scored_both": sum(cells_a[c].scored and cells_b[c].scored for c in both),
        "errored_a": sum(t.errored for t in cells_a.values()),
        "errored_b": sum(t.errored for t in cells_b.values()),
        "unscored_a": sum(not t.errored and not t.scored for t in cells_a.values()),
        "unscored_b": sum(not t.errored and not t.scored for t in cells_b.values()),
    }


def scored_pairs(a: Run, b: Run, condition: str) -> list[tuple[TrialRecord, TrialRecord]]:
    return [(x, y) for x, y in paired_trials(a.trials, b.trials) if x.condition == condition]


def breakdown(
    pairs: Sequence[tuple[TrialRecord, TrialRecord]], key: Callable[[TrialRecord], str], order: Sequence[str] = ()
) -> list[dict]:
    groups: dict[str, list] = defaultdict(list)
    for x, y in pairs:
        groups[key(x)].append((x, y))
    names = [g for g in order if g in groups] + sorted(g for g in groups if g not in order)
    return [{"group": name, **paired_cell(groups[name])} for name in names]


def headline(a: Run, b: Run, condition: str, counts: dict) -> dict:
    """The comparison of the condition, and the sentence that leads the report."""
    result = compare_trial_sets(a.trials, b.trials, condition, RunManifest.from_json(a.manifest))
    mcnemar = result["mcnemar"]
    cells, scored = counts["cells"], counts["scored_both"]
    measured = cells > 0 and 2 * scored >= cells
    ba_a, ba_b, diff = result["balanced_accuracy_a"], result["balanced_accuracy_b"], result["difference"]
    if cells == 0:
        text = f"No trials of condition {condition} in either run: nothing to compare."
    elif not measured:
        text = (
            f"{scored} of {cells} pairs scored on both sides: not a measurement. "
            f"Fewer than half of the pairs of condition {condition} have a Turn 2 verdict in both runs "
            "(the rest errored, were left unscored by the judge, or ran in one run only), so no accuracy "
            "difference is reported as the headline."
        )
    elif diff is None:
        text = (
            f"{scored} of {cells} pairs scored on both sides, but none has a current or prior target, "
            "so balanced accuracy is undefined."
        )
    else:
        text = (
            f"Balanced Turn 2 accuracy moved by {100 * diff:+.1f} points from A to B "
            f"(A {100 * ba_a:.1f}%, B {100 * ba_b:.1f}%; 95% interval {_pts(result['ci_low'])} to "
            f"{_pts(result['ci_high'])}) over {scored} of {cells} pairs of condition {condition}; "
            f"{mcnemar['a_pass_b_fail']} pairs passed only in A and {mcnemar['a_fail_b_pass']} only in B "
            f"(exact McNemar p = {mcnemar['p_value']:.3g})."
        )
    return {
        "text": text,
        "is_measurement": measured and diff is not None,
        "balanced_accuracy_a": ba_a,
        "balanced_accuracy_b": ba_b,
        "difference": diff,
        "ci_low": result["ci_low"],
        "ci_high": result["ci_high"],
        "balanced_over": ["current", "prior"],
        "bootstrap": result["bootstrap"],
        "mcnemar": mcnemar,
        "scored_pairs": result["pairs"],
    }


def _pts(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:+.1f}"


def class_order() -> tuple[str, ...]:
    return tuple(LABELS)
