"""`wearsim compare` on proactive runs: each run's cells side by side, and each run against the first.

A run is proactive when every trial in it is a proactive one (`TrialRecord.watching`). Per run and
cell (condition, strategy and the frame policy or impairment swept): recall and precision with their
95% interval and n (`benchmark.scoring.proactive.cell_metrics`), false alarms per minute with a
bootstrap interval over scenarios and the minutes and trials behind it, the time to speak (p50, p95,
n hits) and the candidate's cost per hour watched (with the hours).

Against the first run, cell by cell (the same condition and cell name; when the two runs have one
cell each under a condition, those two), trials paired by scenario and trial index: the difference
in recall (B - A over the event trials in both) with a paired bootstrap over scenarios, the exact
McNemar p on hits, and the difference in false alarms per minute with its paired bootstrap.
"""

from __future__ import annotations

from benchmark import stats
from benchmark.scoring.summary_view import RunManifest
from benchmark.scoring.trials import TrialSet
from core.records import PROACTIVE_TARGETS, TrialRecord


def is_proactive_run(trials: TrialSet) -> bool:
    """Every trial of the run is a proactive one (and it has one)."""
    return bool(trials.trials) and all(
        t.watching is not None or t.target_context in PROACTIVE_TARGETS for t in trials.trials
    )


def _cells(trials: TrialSet) -> dict[tuple[str, str], list[TrialRecord]]:
    from benchmark.scoring.proactive import cell_name

    cells: dict[tuple[str, str], list[TrialRecord]] = {}
    for record in trials.trials:
        if record.watching is not None and not record.errored:
            cells.setdefault((record.condition, cell_name(record)), []).append(record)
    return dict(sorted(cells.items()))


def _per_minute(records: list[TrialRecord]) -> dict:
    """False alarms per minute of stream, with a bootstrap interval over scenarios (Wilson-free: a rate)."""
    from benchmark.scoring.proactive import bootstrap_ratio

    rows = _scenario_rows(records, lambda w: (w.count("false_alarm"), w.stream_ms / 60_000))
    alarms, minutes = sum(a for a, _ in rows.values()), sum(m for _, m in rows.values())
    low = high = None
    if len(rows) >= 2 and minutes:
        low, high = bootstrap_ratio(list(rows.values()))
    return {
        "rate": round(alarms / minutes, 3) if minutes else None,
        "false_alarms": alarms,
        "minutes": round(minutes, 3),
        "trials": len(records),
        "scenarios": len(rows),
        "ci_low": None if low is None else round(low, 3),
        "ci_high": None if high is None else round(high, 3),
    }


def _scenario_rows(records: list[TrialRecord], of) -> dict[str, tuple[float, float]]:
    rows: dict[str, tuple[float, float]] = {}
    for record in records:
        a, b = of(record.watching)
        old = rows.get(record.scenario_id, (0, 0))
        rows[record.scenario_id] = (old[0] + a, old[1] + b)
    return rows


def cell_rows(label: str, trials: TrialSet, manifest: RunManifest) -> list[dict]:
    """One row per condition and cell of a proactive run."""
    from benchmark.scoring.cost import candidate_cost
    from benchmark.scoring.proactive import cell_metrics

    table = manifest.price_table
    rows = []
    for (condition, name), records in _cells(trials).items():
        total, unknown = 0.0, []
        for record in records:
            cost = candidate_cost(record, table)
            if cost.usd is None:
                unknown += [w for w in cost.why if w not in unknown]
            else:
                total += cost.usd
        cell = cell_metrics(records, None if unknown else total, unknown)
        cell.pop("scenarios")
        rows.append(
            {
                "label": label,
                "run": str(trials.source),
                "model": manifest.candidate_model,
                "condition": condition,
                "cell": name,
                "metrics": cell,
                "false_alarms_per_min": _per_minute(records),
                "hours": round(cell["stream_minutes"] / 60, 4),
            }
        )
    return rows


def _paired_cells(a: TrialSet, b: TrialSet) -> list[tuple[str, str, str, list, list]]:
    """(condition, A's cell, B's cell, A's records, B's records) for each cell both runs have."""
    first, second = _cells(a), _cells(b)
    pairs = [(c, n, n, first[(c, n)], second[(c, n)]) for c, n in first if (c, n) in second]
    for condition in sorted({c for c, _ in first} & {c for c, _ in second}):
        mine = [n for c, n in first if c == condition]
        theirs = [n for c, n in second if c == condition]
        if len(mine) == len(theirs) == 1 and mine != theirs:
            pairs.append((condition, mine[0], theirs[0], first[(condition, mine[0])], second[(condition, theirs[0])]))
    return pairs


def _paired_bootstrap(rows: list[tuple[tuple[float, float], tuple[float, float]]]) -> tuple[float | None, float | None]:
    """95% interval of sum(kb)/sum(nb) - sum(ka)/sum(na), the same scenarios drawn for both."""
    import numpy as np

    if len(rows) < 2:
        return None, None
    rng = np.random.default_rng(stats.BOOTSTRAP_SEED)
    ka, na, kb, nb = (np.array([r[i][j] for r in rows], dtype=float) for i, j in ((0, 0), (0, 1), (1, 0), (1, 1)))
    picks = rng.integers(0, len(rows), size=(stats.BOOTSTRAP_DRAWS, len(rows)))
    sa, sb = na[picks].sum(axis=1), nb[picks].sum(axis=1)
    keep = (sa > 0) & (sb > 0)
    if not keep.any():
        return None, None
    diff = kb[picks].sum(axis=1)[keep] / sb[keep] - ka[picks].sum(axis=1)[keep] / sa[keep]
    low, high = float(np.percentile(diff, 2.5)), float(np.percentile(diff, 97.5))
    return (None, None) if high - low <= 0 else (round(low, 4), round(high, 4))


def paired_difference(condition: str, cell_a: str, cell_b: str, records_a: list, records_b: list) -> dict:
    """B against A in one cell, trials paired by (scenario, trial)."""
    second = {(r.scenario_id, r.trial): r for r in records_b}
    pairs = [(r, second[(r.scenario_id, r.trial)]) for r in records_a if (r.scenario_id, r.trial) in second]
    events = [(x, y) for x, y in pairs if x.watching.kind == "event"]
    by_scenario: dict[str, list] = {}
    alarms: dict[str, list] = {}
    for x, y in pairs:
        wa, wb = x.watching, y.watching
        alarm = alarms.setdefault(x.scenario_id, [0, 0.0, 0, 0.0])
        alarm[0] += wa.count("false_alarm")
        alarm[1] += wa.stream_ms / 60_000
        alarm[2] += wb.count("false_alarm")
        alarm[3] += wb.stream_ms / 60_000
        if wa.kind == "event":
            row = by_scenario.setdefault(x.scenario_id, [0, 0, 0])
            row[0] += wa.outcome == "hit"
            row[1] += wb.outcome == "hit"
            row[2] += 1
    hits_a = sum(x.watching.outcome == "hit" for x, _ in events)
    hits_b = sum(y.watching.outcome == "hit" for _, y in events)
    only_a = sum(x.watching.outcome == "hit" and y.watching.outcome != "hit" for x, y in events)
    only_b = sum(y.watching.outcome == "hit" and x.watching.outcome != "hit" for x, y in events)
    low, high = _paired_bootstrap([((a, n), (b, n)) for a, b, n in by_scenario.values()])
    fa_a, min_a = sum(v[0] for v in alarms.values()), sum(v[1] for v in alarms.values())
    fa_b, min_b = sum(v[2] for v in alarms.values()), sum(v[3] for v in alarms.values())
    fa_low, fa_high = _paired_bootstrap([((v[0], v[1]), (v[2], v[3])) for v in alarms.values()])
    return {
        "condition": condition,
        "cell_a": cell_a,
        "cell_b": cell_b,
        "pairs": len(pairs),
        "events": len(events),
        "scenarios": len(by_scenario),
        "recall_a": round(hits_a / len(events), 4) if events else None,
        "recall_b": round(hits_b / len(events), 4) if events else None,
        "recall_difference": round((hits_b - hits_a) / len(events), 4) if events else None,
        "recall_ci_low": low,
        "recall_ci_high": high,
        "mcnemar": {
            "a_hit_b_miss": only_a,
            "a_miss_b_hit": only_b,
            "p_value": stats.mcnemar_exact(only_a, only_b),
            "test": "exact, two-sided",
        },
        "false_alarms_per_min_a": round(fa_a / min_a, 3) if min_a else None,
        "false_alarms_per_min_b": round(fa_b / min_b, 3) if min_b else None,
        "false_alarms_per_min_difference": round(fa_b / min_b - fa_a / min_a, 3) if min_a and min_b else None,
        "false_alarms_ci_low": fa_low,
        "false_alarms_ci_high": fa_high,
    }


def compare_proactive(labels: list[str], sets: list[TrialSet], manifests: list[RunManifest]) -> dict:
    """The proactive runs' rows, each later run against the first, and the plot's points."""
    rows = [
        row for label, trials, manifest in zip(labels, sets, manifests) for row in cell_rows(label, trials, manifest)
    ]
    against = []
    for label, trials in zip(labels[1:], sets[1:]):
        cells = _paired_cells(sets[0], trials)
        against.append(
            {
                "label": label,
                "cells": [paired_difference(*cell) for cell in cells],
                "reason": None if cells else "no condition and cell in both runs",
            }
        )
    return {"runs": labels, "rows": rows, "against_first": against}


def _pct(value) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _signed(value, unit: str = "pts", scale: float = 100) -> str:
    return "n/a" if value is None else f"{scale * value:+.1f} {unit}" if unit == "pts" else f"{value:+.2f} {unit}"


def rate_text(block: dict) -> str:
    if not block["n"]:
        return "n/a (none)"
    return f"{_pct(block['rate'])} [{_pct(block['ci_low'])}, {_pct(block['ci_high'])}] ({block['k']}/{block['n']})"


def per_minute_text(block: dict) -> str:
    if block["rate"] is None:
        return "n/a"
    interval = (
        f" [{block['ci_low']:.2f}, {block['ci_high']:.2f}]"
        if block["ci_low"] is not None
        else " (no interval: under 2 scenarios)"
    )
    return (
        f"{block['rate']:.2f}{interval} "
        f"({block['false_alarms']} in {block['minutes']:.1f} min, {block['trials']} trials)"
    )


def render_proactive(result: dict) -> list[str]:
    """The text lines `wearsim compare` prints for the proactive runs."""
    from benchmark.report.proactive_findings import cost_text, speak_text

    lines = ["proactive runs, one row per run and cell (intervals: 95%, bootstrap over scenarios or Wilson):"]
    header = [
        "run",
        "condition",
        "cell",
        "recall [95%] (k/n)",
        "precision [95%] (k/n)",
        "false alarms/min [95%] (n)",
        "time to speak p50 / p95",
        "cost per hour watched",
    ]
    body = [
        [
            row["label"],
            row["condition"],
            row["cell"],
            rate_text(row["metrics"]["recall"]),
            rate_text(row["metrics"]["precision"]),
            per_minute_text(row["false_alarms_per_min"]),
            speak_text(row["metrics"]),
            cost_text(row["metrics"], row["model"], row["hours"]),
        ]
        for row in result["rows"]
    ]
    widths = [max(len(str(line[i])) for line in [header, *body]) for i in range(len(header))]
    lines += ["  " + "  ".join(str(c).ljust(w) for c, w in zip(line, widths)).rstrip() for line in [header, *body]]
    if result["against_first"]:
        first = result["runs"][0]
        lines.append(
            f"against {first} (trials paired by scenario and trial; paired bootstrap over scenarios, "
            "McNemar exact on hits):"
        )
    for pair in result["against_first"]:
        if not pair["cells"]:
            lines.append(f"  {pair['label']}: no pairs: {pair['reason']}")
        for cell in pair["cells"]:
            lines.append("  " + difference_text(pair["label"], cell))
    return lines


def difference_text(label: str, cell: dict) -> str:
    names = cell["cell_a"] if cell["cell_a"] == cell["cell_b"] else f"{cell['cell_b']} against {cell['cell_a']}"
    recall = (
        f"recall {_signed(cell['recall_difference'])} "
        + (
            f"[{_signed(cell['recall_ci_low'])}, {_signed(cell['recall_ci_high'])}]"
            if cell["recall_ci_low"] is not None
            else "(no interval)"
        )
        + f" over {cell['events']} event trials in {cell['scenarios']} scenarios, "
        f"McNemar p = {cell['mcnemar']['p_value']:.4g} ({cell['mcnemar']['a_hit_b_miss']} hit only in the "
        f"first, {cell['mcnemar']['a_miss_b_hit']} only here)"
    )
    alarms = (
        f"false alarms/min {_signed(cell['false_alarms_per_min_difference'], '/min')} "
        + (
            f"[{cell['false_alarms_ci_low']:+.2f}, {cell['false_alarms_ci_high']:+.2f}]"
            if cell["false_alarms_ci_low"] is not None
            else "(no interval)"
        )
        + f" over {cell['pairs']} paired trials"
    )
    return f"{label} [{cell['condition']}, {names}]: {recall}; {alarms}"
