"""How many human labels give how wide an interval on a judge's kappa (issue 47).

A simulation of `wearsim agreement`'s own intervals (`benchmark.labels.agreement.cohen`: the
scenario bootstrap from 10 scenarios on, else the Wilson fallback). Each replicate draws N items
over min(N, 70) scenarios (the shipped bank's 70, items spread evenly), a true label per item from
the shipped bank's target mix (current 0.6, prior 0.25, clarify 0.1, abstain 0.05), the people's
label equal to it, and the judge's equal to it with probability A (else one of the other three at
random). For each N and A it records the median kappa, the median width of its 95% interval and
of raw agreement's, and the share of replicates whose interval held the kappa of the whole
population (A's kappa, computed exactly). Writes `benchmarks/results/label_interval_width.json`.

    .venv/bin/python benchmarks/label_interval_width.py            # about 20 s on one core
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmark.labels.agreement import cohen  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
LABELS = ("current", "prior", "clarify", "abstain")
MIX = (0.6, 0.25, 0.1, 0.05)
SCENARIOS = 70


def true_kappa(accuracy: float) -> float:
    """Kappa of a judge right with probability `accuracy` (else a uniform other label) on the mix."""
    judge = [m * accuracy + (1 - m) * (1 - accuracy) / 3 for m in MIX]
    chance = sum(m * j for m, j in zip(MIX, judge))
    return (accuracy - chance) / (1 - chance)


def replicate(n: int, accuracy: float, rng: random.Random) -> dict:
    scenarios = min(n, SCENARIOS)
    rows = []
    for i in range(n):
        truth = rng.choices(LABELS, MIX)[0]
        judge = truth if rng.random() < accuracy else rng.choice([label for label in LABELS if label != truth])
        rows.append((f"s{i % scenarios}", truth, judge))
    return cohen(rows, LABELS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicates", type=int, default=100)
    parser.add_argument("--seed", type=int, default=47)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    rows = []
    for accuracy in (0.9, 0.8):
        target = true_kappa(accuracy)
        for n in (20, 50, 100, 200, 400):
            results = [replicate(n, accuracy, rng) for _ in range(args.replicates)]
            kept = [r for r in results if r["kappa"] is not None]
            held = sum(r["kappa_ci_low"] <= target <= r["kappa_ci_high"] for r in kept)
            row = {
                "labels": n,
                "judge_accuracy": accuracy,
                "population_kappa": round(target, 3),
                "median_kappa": round(statistics.median(r["kappa"] for r in kept), 3),
                "median_kappa_width": round(statistics.median(r["kappa_ci_high"] - r["kappa_ci_low"] for r in kept), 3),
                "median_agreement_width": round(
                    statistics.median(r["agreement"]["ci_high"] - r["agreement"]["ci_low"] for r in kept), 3
                ),
                "held_population_kappa": round(held / len(kept), 3),
                "methods": sorted({r["ci_method"] for r in kept}),
            }
            rows.append(row)
            print(
                f"A={accuracy} N={n:4d}: kappa {row['median_kappa']:.2f} (population {target:.2f}), 95% interval "
                f"width {row['median_kappa_width']:.2f}, agreement width {row['median_agreement_width']:.2f}, "
                f"held {row['held_population_kappa']:.0%}",
                flush=True,
            )
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = {
        "command": "python benchmarks/label_interval_width.py",
        "replicates": args.replicates,
        "seed": args.seed,
        "mix": dict(zip(LABELS, MIX)),
        "scenarios": SCENARIOS,
        "rows": rows,
    }
    (RESULTS / "label_interval_width.json").write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
