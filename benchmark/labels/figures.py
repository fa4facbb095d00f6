"""A judge's labels against reference labels: coverage, agreement, Cohen's kappa, per-label precision and
recall, and the confusion matrix.

`figures(truth, guess)` takes one reference label (one of `core.judge.LABELS`) and one judge label (a
label, or None when the judge left the reply unscored) per item. Coverage counts every item; agreement,
kappa, precision and recall count only the items the judge labelled; the confusion matrix has one row per
reference label and one column per judge label plus `unscored`. `wearsim judge-check` and the offline
judge's scripts (`scripts/offline_judge_figures.py`) both measure with it; the kappa's interval over
scenarios is `benchmark.labels.agreement.cohen`'s (`kappa_interval`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from benchmark.labels.agreement import cohen
from benchmark.stats import cohen_kappa
from core.judge import LABELS

UNSCORED = "unscored"


@dataclass(frozen=True, kw_only=True)
class Figures:
    """Coverage over all items; agreement, kappa, per-label precision/recall over the labelled ones.
    `kappa` is 0.0 where it is undefined (no labelled item, or one label throughout on both sides)."""

    total: int
    labelled: int
    agreed: int
    kappa: float
    confusion: dict  # reference -> judge label -> count ("unscored" included)
    precision: dict  # label -> share of the judge's label that the reference shares (None: never said)
    recall: dict  # label -> share of the reference's label, among the labelled, the judge found (None: none)

    @property
    def coverage(self) -> float:
        return self.labelled / self.total if self.total else 0.0

    @property
    def agreement(self) -> float:
        return self.agreed / self.labelled if self.labelled else 0.0

    def line(self) -> str:
        return (
            f"coverage {self.labelled}/{self.total} ({self.coverage:.3f}), agreement {self.agreed}/{self.labelled} "
            f"({self.agreement:.3f}), Cohen's kappa {self.kappa:.3f}"
        )

    def said(self, label: str) -> int:
        """How many items the judge gave `label`."""
        return sum(row[label] for row in self.confusion.values())

    def found(self, label: str) -> int:
        """How many items of reference `label` the judge labelled (with any label)."""
        return sum(n for guess, n in self.confusion[label].items() if guess != UNSCORED)

    def as_dict(self) -> dict:
        return {
            "total": self.total,
            "labelled": self.labelled,
            "agreed": self.agreed,
            "coverage": self.coverage,
            "agreement": self.agreement,
            "kappa": self.kappa,
            "confusion": self.confusion,
            "precision": self.precision,
            "recall": self.recall,
        }


def figures(truth: Sequence[str], guess: Sequence[str | None]) -> Figures:
    """The figures of `guess` (None: unscored) against `truth`, item by item."""
    kept = [(t, g) for t, g in zip(truth, guess) if g is not None]
    confusion = {t: {g: 0 for g in (*LABELS, UNSCORED)} for t in LABELS}
    for t, g in zip(truth, guess):
        confusion[t][g or UNSCORED] += 1
    precision: dict[str, float | None] = {}
    recall: dict[str, float | None] = {}
    for label in LABELS:
        said = sum(1 for _, g in kept if g == label)
        true = sum(1 for t, _ in kept if t == label)
        hit = sum(1 for t, g in kept if t == g == label)
        precision[label] = hit / said if said else None
        recall[label] = hit / true if true else None
    kappa = cohen_kappa([t for t, _ in kept], [g for _, g in kept]) if kept else None
    return Figures(
        total=len(truth),
        labelled=len(kept),
        agreed=sum(t == g for t, g in kept),
        kappa=0.0 if kappa is None else kappa,
        confusion=confusion,
        precision=precision,
        recall=recall,
    )


def kappa_interval(scenarios: Sequence[str], truth: Sequence[str], guess: Sequence[str | None]) -> dict:
    """Kappa and agreement over the labelled items with their 95% intervals, resampling scenarios
    (`agreement.cohen`: a bootstrap from 10 scenarios on, else Wilson; `ci_method` says which). `kappa` is
    None where it is undefined."""
    rows = [(s, t, g) for s, t, g in zip(scenarios, truth, guess) if g is not None]
    return cohen(rows, LABELS)
