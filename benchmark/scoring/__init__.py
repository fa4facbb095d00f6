"""Scoring: load trials, compute the metrics and statistics of a run."""

from benchmark.scoring.summary import build_summary
from benchmark.scoring.trials import TranscriptError, TrialSet, load_trials
from benchmark.stats import (
    BOOTSTRAP_DRAWS,
    BOOTSTRAP_SEED,
    ScenarioCounts,
    bootstrap_balanced_accuracy,
    cohen_kappa,
    mcnemar_exact,
    paired_bootstrap_difference,
    wilson_interval,
)

__all__ = [
    "BOOTSTRAP_DRAWS",
    "BOOTSTRAP_SEED",
    "ScenarioCounts",
    "TranscriptError",
    "TrialSet",
    "bootstrap_balanced_accuracy",
    "build_summary",
    "cohen_kappa",
    "load_trials",
    "mcnemar_exact",
    "paired_bootstrap_difference",
    "wilson_interval",
]
