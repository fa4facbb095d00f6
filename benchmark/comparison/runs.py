"""Compare two runs trial by trial (and more runs side by side: `compare_table`).

Trials are paired by (scenario, condition, trial); a pair counts only when
both trials are scored. Under the compared condition (default: the ranking
condition of run A) we report the difference in balanced accuracy (B - A)
with a paired bootstrap interval that resamples scenarios, and an exact
McNemar test on Turn 2 pass. Per-scenario flips are listed for every
condition. Each run's cost under the condition (its own trials, priced with
the prices its manifest recorded) goes beside it, and `accuracy_cost_points`
gives every run's conditions as accuracy against cost for the plot.
"""

from __future__ import annotations

from pathlib import Path

from benchmark import stats
from benchmark.scoring import metrics
from benchmark.scoring.summary import ranking_condition
from benchmark.scoring.summary_view import RunManifest
from benchmark.scoring.trials import TrialSet, load_trials
from core.records import TrialRecord


def _manifest_of(path: Path) -> RunManifest:
    from benchmark.report import read_manifest

    return RunManifest.from_json(read_manifest(path) if path.is_dir() else {})


def paired_trials(a: TrialSet, b: TrialSet) -> list[tuple[TrialRecord, TrialRecord]]:
    """Pairs of scored trials present in both runs, in cell order."""
    second = {t.cell: t for t in b.trials if t.scored}
    return [(t, second[t.cell]) for t in sorted(a.trials, key=lambda t: t.cell) if t.scored and t.cell in second]


def _cost(trials: TrialSet, condition: str, manifest: RunManifest) -> dict:
    """The cost of a run's trials under `condition`, priced with the prices its manifest recorded."""
    from benchmark.scoring.cost import group_cost

    return group_cost([t for t in trials.trials if t.condition == condition], manifest.price_table)


def accuracy_cost_points(runs: list[tuple[str, TrialSet, RunManifest]]) -> list[dict]:
    """Per run (label, trials, manifest) and condition: balanced Turn 2 accuracy and the candidate's cost."""
    points = []
    for label, trials, manifest in runs:
        for condition in sorted({t.condition for t in trials.trials}):
            chosen = [t for t in trials.trials if t.condition == condition]
            cost = _cost(trials, condition, manifest)
            scored = sum(t.scored for t in chosen)
            points.append(
                {
                    "run": str(trials.source),
                    "label": label,
                    "condition": condition,
                    "accuracy": metrics.balanced_accuracy(metrics.per_class(chosen)),
                    "measured": 2 * scored >= len(chosen) > 0,
                    "cost_per_trial": cost["candidate_usd_per_trial"],
                    "per_correct": cost["per_correct_turn2_usd"],
                    "unknown": cost["unknown"],
                }
            )
    return points


def compare_trial_sets(
    a: TrialSet,
    b: TrialSet,
    condition: str | None = None,
    manifest_a: RunManifest | None = None,
    manifest_b: RunManifest | None = None,
) -> dict:
    """`a` against `b` under `condition` (default: `a`'s ranking condition); each run's cost priced with
    the prices its manifest recorded (no manifest: the shipped table)."""
    manifest_a, manifest_b = manifest_a or RunManifest(), manifest_b or RunManifest()
    condition = condition or manifest_a.ranking_condition or ranking_condition(a.trials, {})[0]
    pairs = paired_trials(a, b)
    chosen = [(x, y) for x, y in pairs if x.condition == condition]
    first = [x for x, _ in chosen]
    second = [y for _, y in chosen]
    ba_a = metrics.balanced_accuracy(metrics.per_class(first))
    ba_b = metrics.balanced_accuracy(metrics.per_class(second))
    counts_a = metrics.scenario_counts(first)
    by_scenario_b = {c.scenario_id: c for c in metrics.scenario_counts(second)}
    counts_b = [by_scenario_b[c.scenario_id] for c in counts_a]
    low, high = stats.paired_bootstrap_difference(counts_a, counts_b)
    note = None
    if low is not None and low == high:  # every resample gives one value: no interval, and say why
        low = high = None
        note = (
            f"no interval: every resample of the {len(counts_a)} scenarios gives the same difference "
            "(too few scenarios, or none where the runs differ)"
        )
    only_a = sum(bool(x.passed and not y.passed) for x, y in chosen)
    only_b = sum(bool(y.passed and not x.passed) for x, y in chosen)
    flips: dict[str, dict] = {}
    for x, y in pairs:
        if x.passed == y.passed:
            continue
        row = flips.setdefault(
            f"{x.scenario_id} / {x.condition}",
            {
                "scenario_id": x.scenario_id,
                "condition": x.condition,
                "pass_to_fail": [],
                "fail_to_pass": [],
            },
        )
        row["pass_to_fail" if x.passed else "fail_to_pass"].append(x.trial)
    unpaired = len({t.cell for t in a.trials} ^ {t.cell for t in b.trials})
    agree = [x.turn_2_label == y.turn_2_label for x, y in pairs]
    return {
        "run_a": str(a.source),
        "run_b": str(b.source),
        "condition": condition,
        "pairs": len(chosen),
        "no_pairs_reason": no_pairs_reason(a, b, condition) if not chosen else None,
        "pairs_all_conditions": len(pairs),
        "unpaired_cells": unpaired,
        "balanced_accuracy_a": ba_a,
        "balanced_accuracy_b": ba_b,
        "difference": None if ba_a is None or ba_b is None else ba_b - ba_a,
        "ci_low": low,
        "ci_high": high,
        "interval_note": note,
        "bootstrap": {"resamples": "scenarios, paired", "draws": stats.BOOTSTRAP_DRAWS, "seed": stats.BOOTSTRAP_SEED},
        "mcnemar": {
            "a_pass_b_fail": only_a,
            "a_fail_b_pass": only_b,
            "p_value": stats.mcnemar_exact(only_a, only_b),
            "test": "exact, two-sided",
        },
        "flips": sorted(flips.values(), key=lambda r: (r["scenario_id"], r["condition"])),
        "label_agreement": {
            "agree": sum(agree),
            "pairs": len(agree),
            "rate": sum(agree) / len(agree) if agree else None,
        },
        "scored_in_one_run_only": {
            "a": sum(t.scored for t in a.trials if t.cell in only_cells(b, a)),
            "b": sum(t.scored for t in b.trials if t.cell in only_cells(a, b)),
        },
        "latency_a": metrics.latency(a.trials),
        "latency_b": metrics.latency(b.trials),
        # the frame policy sweep of either run, under the compared condition, side by side
        "frame_policies_a": metrics.frame_policies(t for t in a.trials if t.condition == condition),
        "frame_policies_b": metrics.frame_policies(t for t in b.trials if t.condition == condition),
        "cost_a": _cost(a, condition, manifest_a),
        "cost_b": _cost(b, condition, manifest_b),
    }


SWEEP_AXES = ("staleness_ms", "frame_policy", "impairment")  # what a cell carries beyond scenario, condition, trial


def _axes(trials: TrialSet, condition: str) -> str:
    names = sorted(
        {
            axis
            for t in trials.trials
            if t.condition == condition
            for axis, value in zip(SWEEP_AXES, t.sweep)
            if value is not None
        }
    )
    return " and ".join(names) if names else "no sweep axis"


def no_pairs_reason(a: TrialSet, b: TrialSet, condition: str, names: tuple[str, str] = ("A", "B")) -> str | None:
    """Why no trial of `condition` pairs between the runs (None when some do): a cell pairs only when
    scenario, condition, trial and every sweep axis match, and counts only when scored in both."""
    first, second = names
    cells_a = {t.cell for t in a.trials if t.condition == condition}
    cells_b = {t.cell for t in b.trials if t.condition == condition}
    for name, cells in ((first, cells_a), (second, cells_b)):
        if not cells:
            return f"{name} has no trial of condition {condition}"
    shared = cells_a & cells_b
    if not shared:
        axes_a, axes_b = _axes(a, condition), _axes(b, condition)
        if axes_a != axes_b:
            return (
                f"no cell is in both runs: a cell is (scenario, condition, trial) plus the sweep axes a run "
                f"sets, and {first}'s cells carry {axes_a}, {second}'s {axes_b} (e.g. a text-proxy run "
                "against a stream sweep)"
            )
        return "no cell is in both runs: they ran other scenarios or trials"
    scored_a = {t.cell for t in a.trials if t.scored}
    scored_b = {t.cell for t in b.trials if t.scored}
    if not shared & scored_a & scored_b:
        return (
            f"{len(shared)} {'cell is' if len(shared) == 1 else 'cells are'} in both runs, but none is scored in both"
        )
    return None


def only_cells(other: TrialSet, this: TrialSet) -> set:
    """Cells of `this` that `other` did not score (or does not have)."""
    scored = {t.cell for t in other.trials if t.scored}
    return {t.cell for t in this.trials} - scored


def against_first(sets: list[TrialSet], manifests: list[RunManifest], labels: list[str], condition: str) -> list[dict]:
    """Each run after the first, paired with it by cell: B - A in balanced accuracy with its paired
    bootstrap interval, and McNemar's p."""
    rows = []
    for label, trials, manifest in zip(labels[1:], sets[1:], manifests[1:]):
        paired = compare_trial_sets(sets[0], trials, condition, manifests[0], manifest)
        reason = (
            None
            if paired["pairs"]
            else no_pairs_reason(sets[0], trials, condition, (labels[0].partition(":")[0], label.partition(":")[0]))
        )
        rows.append(
            {
                "label": label,
                "pairs": paired["pairs"],
                "difference": paired["difference"],
                "ci_low": paired["ci_low"],
                "ci_high": paired["ci_high"],
                "p_value": paired["mcnemar"]["p_value"],
                "reason": reason,
                "interval_note": paired["interval_note"],
            }
        )
    return rows


def compare_runs(
    run_a: str | Path, run_b: str | Path, condition: str | None = None, more: tuple[str | Path, ...] = ()
) -> dict:
    """The paired comparison of A and B; over every run given (A, B and `more`), `runs` (one row each
    under the compared condition, `compare_table.run_row`), `against_first` (each run paired with A) and
    `points` (every run's conditions as accuracy against cost, the plot of `wearsim compare --html`).
    Proactive runs are compared apart (`compare_proactive`): with any among the runs, the result is
    `{"proactive": ..., "qa": the above over the question-and-answer runs when two or more, "kinds"}`."""
    from benchmark.comparison.proactive import compare_proactive, is_proactive_run

    paths = [Path(run_a), Path(run_b), *map(Path, more)]
    sets = [load_trials(path) for path in paths]
    manifests = [_manifest_of(path) for path in paths]
    names = [chr(ord("A") + i) if i < 26 else f"run {i + 1}" for i in range(len(paths))]
    labels = [f"{name}: {path.resolve().name}" for name, path in zip(names, paths)]
    proactive = [is_proactive_run(trials) for trials in sets]
    if not any(proactive):
        return _compare_qa(paths, sets, manifests, labels, condition)
    watched = [i for i, p in enumerate(proactive) if p]
    asked = [i for i, p in enumerate(proactive) if not p]
    pick = lambda items, chosen: [items[i] for i in chosen]  # noqa: E731
    return {
        "kinds": {"proactive": pick(labels, watched), "qa": pick(labels, asked)},
        "proactive": compare_proactive(pick(labels, watched), pick(sets, watched), pick(manifests, watched)),
        "qa": _compare_qa(pick(paths, asked), pick(sets, asked), pick(manifests, asked), pick(labels, asked), condition)
        if len(asked) >= 2
        else None,
    }


def _compare_qa(
    paths: list[Path], sets: list[TrialSet], manifests: list[RunManifest], labels: list[str], condition: str | None
) -> dict:
    from benchmark.comparison.table import run_row

    result = compare_trial_sets(sets[0], sets[1], condition, manifests[0], manifests[1])
    result["runs"] = [
        run_row(label, path, trials, manifest, result["condition"])
        for label, path, trials, manifest in zip(labels, paths, sets, manifests)
    ]
    result["against_first"] = against_first(sets, manifests, labels, result["condition"])
    result["leaderboard"] = [
        run_row(label, path, trials, manifest, condition)  # every run and condition
        for label, path, trials, manifest in zip(labels, paths, sets, manifests)
        for condition in sorted({t.condition for t in trials.trials})
    ]
    result["points"] = accuracy_cost_points(list(zip(labels, sets, manifests)))
    return result


def render_comparison(result: dict) -> str:
    if "proactive" in result:
        from benchmark.comparison.proactive import render_proactive
        from benchmark.report.compare_proactive_page import kinds_note

        lines = [kinds_note(result["kinds"]), "", *render_proactive(result["proactive"])]
        if result["qa"] is not None:
            lines += ["", render_comparison(result["qa"])]
        return "\n".join(lines)

    def pct(v):
        return "n/a" if v is None else f"{100 * v:.1f}%"

    def signed(v):
        return "n/a" if v is None else f"{100 * v:+.1f} pts"

    m = result["mcnemar"]
    from benchmark.comparison.table import render_runs_table

    lines = (
        [*render_runs_table(result.get("runs") or [], result.get("against_first") or []), "", "A against B, in detail:"]
        if result.get("runs")
        else []
    )
    lines += [
        f"A: {result['run_a']}",
        f"B: {result['run_b']}",
        f"condition {result['condition']}: {result['pairs']} paired scored trials "
        f"({result['pairs_all_conditions']} over all conditions; {result['unpaired_cells']} cells in only one run)"
        + (f"; no pairs: {result['no_pairs_reason']}" if result.get("no_pairs_reason") else ""),
        f"balanced accuracy A {pct(result['balanced_accuracy_a'])}, B {pct(result['balanced_accuracy_b'])}, "
        f"B - A {signed(result['difference'])}, "
        + (
            f"{result['interval_note']}"
            if result.get("interval_note")
            else f"95% CI [{signed(result['ci_low'])}, {signed(result['ci_high'])}] "
            f"(paired bootstrap over scenarios, {result['bootstrap']['draws']:,} draws, "
            f"seed {result['bootstrap']['seed']})"
        ),
        f"McNemar exact on Turn 2 pass: A-only passes {m['a_pass_b_fail']}, B-only passes {m['a_fail_b_pass']}, "
        f"p = {m['p_value']:.4g}",
    ]
    agreement = result["label_agreement"]
    lines.append(
        f"Turn 2 label agreement over {agreement['pairs']} pairs scored in both: {pct(agreement['rate'])}; "
        f"scored in only one run: A {result['scored_in_one_run_only']['a']}, "
        f"B {result['scored_in_one_run_only']['b']}"
    )

    def seconds(v):
        return "n/a" if v is None else f"{v:.2f} s"

    for key, name in (
        ("first_token_s", "first reply text"),
        ("first_audio_s", "first reply audio"),
        ("first_voice_s", "voice to voice"),
        ("reply_done_s", "reply done"),
    ):
        a, b = result["latency_a"].get(key) or {"n": 0}, result["latency_b"].get(key) or {"n": 0}
        if a["n"] or b["n"]:
            lines.append(
                f"latency, {name} p50/p95: A {seconds(a['p50'])} / {seconds(a['p95'])} "
                f"(from {result['latency_a']['measured_from']}), B {seconds(b['p50'])} / "
                f"{seconds(b['p95'])} (from {result['latency_b']['measured_from']})"
            )
    from benchmark.report.cost import per_correct, usd

    for side in ("a", "b"):
        cost = result.get(f"cost_{side}")
        if cost:
            unknown = f" (unknown: {'; '.join(cost['unknown'][:2])})" if cost["unknown"] else ""
            lines.append(
                f"cost ({result['condition']}), {side.upper()}: candidate {usd(cost['candidate_usd'])} over "
                f"{cost['trials']} trials, {usd(cost['candidate_usd_per_trial'])} per trial, "
                f"{per_correct(cost)} per correct Turn 2 answer; judge "
                f"{usd(cost['judge_usd'])}{unknown}"
            )
    if result.get("points"):
        lines.append("accuracy against the candidate's cost per trial (every run and condition):")
        lines += [
            f"  {p['label']} [{p['condition']}]: {pct(p['accuracy'])}"
            + ("" if p["measured"] else " (under half scored)")
            + f", {usd(p['cost_per_trial'])} per trial"
            for p in result["points"]
        ]
    starts = {result["latency_a"]["measured_from"], result["latency_b"]["measured_from"]}
    if len(starts) > 1 and any(line.startswith("latency,") for line in lines):
        lines.append(
            "note: the two runs' latencies start at different points ("
            + " and ".join(sorted(starts))
            + "): the end of speech comes after the speech itself, the request after transcription, "
            "so A and B are not comparable figure for figure"
        )
    lines += _policies_side_by_side(result, pct)
    if result["flips"]:
        lines.append("flips (trial indices):")
        for row in result["flips"]:
            parts = []
            if row["pass_to_fail"]:
                parts.append(f"pass->fail {row['pass_to_fail']}")
            if row["fail_to_pass"]:
                parts.append(f"fail->pass {row['fail_to_pass']}")
            lines.append(f"  {row['scenario_id']} [{row['condition']}]: {'; '.join(parts)}")
    else:
        lines.append("no flips")
    return "\n".join(lines)


def _policies_side_by_side(result: dict, pct) -> list[str]:
    """A line per frame policy either run swept: Turn 2 accuracy, the stale-frame rate and the
    frames sent a minute, A then B."""
    a, b = result.get("frame_policies_a") or {}, result.get("frame_policies_b") or {}
    if not a and not b:
        return []

    def figures(row: dict | None) -> str:
        if row is None:
            return "not run"
        stale = row.get("stale_frame_rate") or {}
        rate = row.get("frames_per_minute")
        return (
            f"Turn 2 accuracy {pct(row['accuracy']['rate'])}, stale frame {pct(stale.get('rate'))}, "
            f"{'n/a' if rate is None else f'{rate:.1f}'} frames/min"
        )

    lines = [f"frame policies, condition {result['condition']} (A | B):"]
    for policy in dict.fromkeys([*a, *b]):
        lines.append(f"  {policy}: {figures(a.get(policy))} | {figures(b.get(policy))}")
    return lines
