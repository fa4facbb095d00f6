"""`wearsim compare A B C ...`: the runs side by side, and each against the first.

One row per run under the compared condition: balanced Turn 2 accuracy with
its bootstrap interval over scenarios (or "not a measurement" when under
half the condition's planned cells are scored), repair rate, first reply
text p50/p95 and voice to voice p50/p95 (spoken replies), the candidate's
cost per correct Turn 2 answer, and turns OK (cells with every turn
answered and Turn 2 labelled) over the condition's planned cells. Then every
run after the first against it: the paired difference in balanced accuracy
(B - A over the cells scored in both, paired bootstrap over scenarios) and
the exact McNemar p (`benchmark.comparison.runs.against_first`).
"""

from __future__ import annotations

from pathlib import Path

from benchmark import stats
from benchmark.faults import fault_of
from benchmark.scoring import metrics
from benchmark.scoring.summary_view import RunManifest
from benchmark.scoring.trials import TrialSet


def run_row(label: str, path: Path, trials: TrialSet, manifest: RunManifest, condition: str) -> dict:
    """One run's figures under `condition`."""
    from benchmark.scoring.cost import group_cost

    chosen = [t for t in trials.trials if t.condition == condition]
    classes = metrics.per_class(chosen)
    low, high, method = stats.balanced_interval(metrics.scenario_counts(chosen))
    planned = manifest.planned
    cells = max(len(chosen), sum(cell[0] == condition for cell in planned) if planned else 0)
    scored = sum(t.scored for t in chosen)
    latency = metrics.latency(chosen)
    repair = metrics.repair_rate(chosen)
    cost = group_cost(chosen, manifest.price_table)
    return {
        "label": label,
        "run": str(path),
        "model": manifest.candidate_model,
        "condition": condition,
        "balanced_accuracy": metrics.balanced_accuracy(classes),
        "ci_low": low,
        "ci_high": high,
        "ci_method": method,
        "measured": cells > 0 and 2 * scored >= cells,
        "scored": scored,
        "cells": cells,
        "repair_rate": repair["rate"],
        "repair_k": repair["k"],
        "repair_n": repair["n"],
        "first_token_s": latency["first_token_s"],
        "first_voice_s": latency["first_voice_s"],
        "measured_from": latency["measured_from"],
        "per_correct_usd": cost["per_correct_turn2_usd"],
        "cost_per_trial_usd": cost["candidate_usd_per_trial"],
        "cost_unknown": cost["unknown"],
        "turns_ok": sum(fault_of(t) is None for t in chosen),
    }


def _pct(value) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _points(value) -> str:
    return "n/a" if value is None else f"{100 * value:+.1f} pts"


def _seconds(row: dict | None) -> str:
    if not row or not row.get("n"):
        return "-"
    return f"{row['p50']:.2f} / {row['p95']:.2f} s"


def render_runs_table(rows: list[dict], pairs: list[dict]) -> list[str]:
    """The table as text lines (what `wearsim compare` prints first)."""
    from benchmark.report.cost import usd

    header = [
        "run",
        "balanced Turn 2 accuracy [95% CI]",
        "repair rate",
        "first text p50/p95",
        "voice to voice p50/p95",
        "cost per correct",
        "turns OK",
    ]
    body = []
    for row in rows:
        accuracy = (
            f"{_pct(row['balanced_accuracy'])} [{_pct(row['ci_low'])}, {_pct(row['ci_high'])}]"
            if row["measured"]
            else f"not a measurement ({row['scored']} of {row['cells']} scored)"
        )
        body.append(
            [
                row["label"],
                accuracy,
                f"{_pct(row['repair_rate'])} ({row['repair_k']}/{row['repair_n']})",
                _seconds(row["first_token_s"]),
                _seconds(row["first_voice_s"]),
                usd(row["per_correct_usd"]) if row["per_correct_usd"] is not None else "n/a",
                f"{row['turns_ok']} of {row['cells']}",
            ]
        )
    widths = [max(len(str(line[i])) for line in [header, *body]) for i in range(len(header))]
    condition = rows[0]["condition"] if rows else "?"
    lines = [f"runs, condition {condition} (latencies from {' / '.join(sorted({r['measured_from'] for r in rows}))}):"]
    lines += [
        "  " + "  ".join(str(cell).ljust(width) for cell, width in zip(line, widths)).rstrip()
        for line in [header, *body]
    ]
    if pairs:
        first = rows[0]["label"]
        lines.append(f"against {first} (paired by cell, scored in both; bootstrap over scenarios, McNemar exact):")
        lines += [
            f"  {p['label']}: no pairs: {p['reason']}"
            if not p["pairs"] and p.get("reason")
            else f"  {p['label']}: {_points(p['difference'])} "
            + (
                f"({p['interval_note']})"
                if p.get("interval_note")
                else f"[{_points(p['ci_low'])}, {_points(p['ci_high'])}]"
            )
            + f" over {p['pairs']} pairs, p = {p['p_value']:.4g}"
            for p in pairs
        ]
    return lines
