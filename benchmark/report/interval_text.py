"""How the headline's interval was made, in one sentence of findings.md.

Over many scenarios it is a bootstrap that resamples them. Over a handful
(fewer than `stats.MIN_BOOTSTRAP_SCENARIOS`), or when every draw gives the
same value, a bootstrap says "[100.0%, 100.0%]" after three passes: the
interval is then the per-class Wilson bounds combined (`stats.balanced_interval`),
and the sentence says so and why.
"""

from __future__ import annotations

from benchmark.scoring.summary_view import Primary
from benchmark.stats import MIN_BOOTSTRAP_SCENARIOS


def interval_sentence(primary: Primary) -> str:
    boot = primary.bootstrap
    method = primary.interval_method
    if method is None:
        return "No interval: no trial of the headline's classes was scored."
    if method == "wilson":
        scenarios = primary.scenarios
        plural = "" if scenarios == 1 else "s"
        why = (
            f"resampling only {scenarios} scenario{plural} (fewer than {MIN_BOOTSTRAP_SCENARIOS}) gives too narrow "
            "an interval (three that all pass give one of zero width)"
            if scenarios < MIN_BOOTSTRAP_SCENARIOS
            else f"every resample of the {scenarios} scenarios gave the same value"
        )
        return (
            f"The interval is not a bootstrap: {why}. It is the per-class 95% Wilson score bounds combined: "
            "the mean over the classes of each class's low bound, and of its high bound (conservative). "
            + ("With so few scored trials it says little. " if primary.n < 5 else "")
            + f"Rule: {primary.rule}."
        )
    return (
        f"The interval is a bootstrap that resamples {boot.resamples} (the trials of one scenario are "
        f"not independent), {boot.draws:,} draws, seed {boot.seed}, {boot.interval}. "
        f"Rule: {primary.rule}."
    )
