"""Statistics used by the scoring: percentiles, Wilson intervals, bootstraps that
resample scenarios, Cohen's kappa and the exact McNemar test.

Everything here works on plain numbers so it can be checked by hand.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np  # imported where used: `wearsim bench` loads this module before its cells run

Z_95 = 1.959963984540054  # two-sided 95% normal quantile
BOOTSTRAP_DRAWS = 10_000
BOOTSTRAP_SEED = 20240607  # fixed, so a report is reproducible bit for bit


def percentiles(values: Sequence[float], digits: int = 4) -> dict:
    """The median and 95th percentile (numpy's linear interpolation), rounded to `digits`, and how many
    values there were: the one form every latency and time in summary.json takes."""
    import numpy as np

    if not values:
        return {"p50": None, "p95": None, "n": 0}
    p50, p95 = np.percentile(np.asarray(values, dtype=float), [50, 95])
    return {"p50": round(float(p50), digits), "p95": round(float(p95), digits), "n": len(values)}


def wilson_interval(k: int, n: int, z: float = Z_95) -> tuple[float | None, float | None]:
    """95% Wilson score interval for k successes in n trials; (None, None) when n == 0."""
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"wilson_interval needs 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return None, None
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # exact at the ends: 0 of n has a low bound of 0, n of n a high bound of 1 (not a rounding away)
    return 0.0 if k == 0 else max(0.0, centre - half), 1.0 if k == n else min(1.0, centre + half)


def balanced_from_counts(passes: Sequence[int], totals: Sequence[int]) -> float | None:
    """Mean of per-class accuracy over the classes that have trials.

    A class with no trials has no accuracy and is left out of the mean (it is
    not counted as 0); with no trials in any class the result is None.
    """
    rates = [k / n for k, n in zip(passes, totals) if n > 0]
    return sum(rates) / len(rates) if rates else None


@dataclass(frozen=True, kw_only=True)
class ScenarioCounts:
    """Turn 2 passes and scored trials of one scenario, per scored class.

    `passes[i]` and `totals[i]` belong to class i of the classes being balanced
    (a scenario has one target context, so usually only one entry is non-zero).
    """

    scenario_id: str
    passes: tuple[int, ...]
    totals: tuple[int, ...]


def _draw_sums(picks: np.ndarray, scenarios: Sequence[ScenarioCounts]) -> tuple[np.ndarray, np.ndarray]:
    """Passes and totals per class of each draw (row of `picks`, scenario indices): `counts @ passes`,
    where counts[d, s] is how often draw d picked scenario s (exact: sums of whole numbers)."""
    import numpy as np

    draws, size = picks.shape
    flat = (picks + size * np.arange(draws)[:, None]).ravel()
    counts = np.bincount(flat, minlength=draws * size).reshape(draws, size).astype(float)
    k = np.array([s.passes for s in scenarios], dtype=float)
    n = np.array([s.totals for s in scenarios], dtype=float)
    return counts @ k, counts @ n


def _balanced_rows(k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Balanced accuracy per row of class-count arrays (rows = draws); NaN if no trials."""
    import numpy as np

    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.where(n > 0, k / np.where(n > 0, n, 1), np.nan)
    present = (n > 0).sum(axis=1)
    sums = np.nansum(rates, axis=1)
    return np.where(present > 0, sums / np.maximum(present, 1), np.nan)


def _interval(values: np.ndarray) -> tuple[float | None, float | None]:
    import numpy as np

    values = values[~np.isnan(values)]
    if values.size == 0:
        return None, None
    low, high = np.quantile(values, [0.025, 0.975])
    return float(low), float(high)


def bootstrap_balanced_accuracy(
    scenarios: Sequence[ScenarioCounts],
    *,
    draws: int = BOOTSTRAP_DRAWS,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float | None, float | None]:
    """95% percentile interval of balanced accuracy, resampling whole scenarios.

    The trials of one scenario are not independent, so each draw picks
    len(scenarios) scenarios with replacement and pools all their trials.
    Draws in which no class has trials are dropped.
    """
    if not scenarios:
        return None, None
    import numpy as np

    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(scenarios), size=(draws, len(scenarios)))
    return _interval(_balanced_rows(*_draw_sums(picks, scenarios)))


MIN_BOOTSTRAP_SCENARIOS = 10  # below this a scenario bootstrap is too narrow to trust (and often zero-width)


def wilson_balanced(scenarios: Sequence[ScenarioCounts]) -> tuple[float | None, float | None]:
    """The per-class 95% Wilson bounds combined: the mean, over the classes with trials, of each class's
    low bound and of its high bound. Conservative (each class at its worst at once) and honest at small n:
    3 of 3 passes never gives a low end of 100%, 0 of 7 never a high end of 0%."""
    if not scenarios:
        return None, None
    classes = len(scenarios[0].totals)
    intervals = [
        wilson_interval(sum(s.passes[c] for s in scenarios), total)
        for c in range(classes)
        if (total := sum(s.totals[c] for s in scenarios)) > 0
    ]
    bounds = [(low, high) for low, high in intervals if low is not None and high is not None]  # (n > 0: all)
    if not bounds:
        return None, None
    return sum(low for low, _ in bounds) / len(bounds), sum(high for _, high in bounds) / len(bounds)


def balanced_interval(scenarios: Sequence[ScenarioCounts]) -> tuple[float | None, float | None, str | None]:
    """The 95% interval of balanced accuracy and how it was made: `bootstrap` (scenarios resampled) over
    at least MIN_BOOTSTRAP_SCENARIOS scenarios when it has width; else `wilson` (`wilson_balanced`): a
    bootstrap over a handful of scenarios is degenerate ("[100.0%, 100.0%]" over 3 trials that passed).
    (None, None, None) with no scored trial."""
    low, high = bootstrap_balanced_accuracy(scenarios)
    if low is None or high is None:
        return None, None, None
    if len(scenarios) >= MIN_BOOTSTRAP_SCENARIOS and high > low:
        return low, high, "bootstrap"
    low, high = wilson_balanced(scenarios)
    return low, high, "wilson"


def paired_bootstrap_difference(
    first: Sequence[ScenarioCounts],
    second: Sequence[ScenarioCounts],
    *,
    draws: int = BOOTSTRAP_DRAWS,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float | None, float | None]:
    """95% interval of balanced accuracy (second - first) with paired scenario resampling.

    `first[i]` and `second[i]` must describe the same scenario; each draw picks
    the same scenario indices for both runs.
    """
    if len(first) != len(second):
        raise ValueError("paired bootstrap needs the same scenarios in both runs")
    for a, b in zip(first, second):
        if a.scenario_id != b.scenario_id:
            raise ValueError(f"paired bootstrap: scenario {a.scenario_id!r} paired with {b.scenario_id!r}")
    if not first:
        return None, None
    import numpy as np

    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(first), size=(draws, len(first)))
    rows = [_balanced_rows(*_draw_sums(picks, runs)) for runs in (first, second)]
    return _interval(rows[1] - rows[0])


def cohen_kappa(first: Sequence[str], second: Sequence[str]) -> float | None:
    """Cohen's kappa of two raters over the same items.

    None when it is undefined: no items, or chance agreement of 1 (both raters
    gave every item the same single label).
    """
    if len(first) != len(second):
        raise ValueError("cohen_kappa needs two label lists of the same length")
    n = len(first)
    if n == 0:
        return None
    observed = sum(a == b for a, b in zip(first, second)) / n
    labels = set(first) | set(second)
    expected = sum((list(first).count(c) / n) * (list(second).count(c) / n) for c in labels)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1 - expected)


def mcnemar_exact(only_first: int, only_second: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pair counts.

    `only_first` = pairs where the first run passed and the second failed,
    `only_second` the reverse. Under the null each discordant pair is a fair
    coin: p = min(1, 2 * P(X <= min(b, c))) with X ~ Binomial(b + c, 1/2).
    """
    if only_first < 0 or only_second < 0:
        raise ValueError("discordant counts must be >= 0")
    total = only_first + only_second
    if total == 0:
        return 1.0
    low = min(only_first, only_second)
    tail = sum(math.comb(total, i) for i in range(low + 1)) / 2**total
    return min(1.0, 2 * tail)
