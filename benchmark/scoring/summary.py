"""Build the `summary.json` dict from a set of trials and the run manifest."""

from __future__ import annotations

from benchmark import stats
from benchmark.faults import fault_summary
from benchmark.scoring import metrics
from benchmark.scoring.cost import cost_summary
from benchmark.scoring.trials import TrialSet
from benchmark.shards import planned_cells
from core.records import PROACTIVE_TARGETS, TrialRecord

# 2: every proportion is {rate, k, n, ci_low, ci_high} (1 wrote a rate cell's rate as `accuracy`)
SUMMARY_SCHEMA = 2
BALANCE_RULE = (
    "balanced accuracy = mean of per-class Turn 2 accuracy over current and prior, "
    "taken over the classes that have scored trials (a class with no trials is left out, not counted as 0)"
)


def upgrade_summary(summary: dict) -> dict:
    """A summary.json of any schema in today's form: schema 1 wrote a proportion's rate as `accuracy`
    ({accuracy, k, n, ci_low, ci_high}); every such cell, wherever it sits, reads as {rate, ...}."""
    if not isinstance(summary.get("summary_schema"), int) or summary["summary_schema"] >= SUMMARY_SCHEMA:
        return summary

    def upgrade(value):
        if isinstance(value, dict):
            if set(value) == {"accuracy", "k", "n", "ci_low", "ci_high"}:
                value = {("rate" if key == "accuracy" else key): item for key, item in value.items()}
            return {key: upgrade(item) for key, item in value.items()}
        if isinstance(value, list):
            return [upgrade(item) for item in value]
        return value

    return {**upgrade(summary), "summary_schema": SUMMARY_SCHEMA}


def ranking_condition(trials: tuple[TrialRecord, ...], manifest: dict) -> tuple[str, str]:
    """The condition of the headline number and why it was chosen."""
    present = sorted({t.condition for t in trials})
    wanted = manifest.get("ranking_condition")
    if isinstance(wanted, str) and wanted:
        return wanted, "ranking_condition from the manifest"
    if "baseline" in present:
        return "baseline", "default ranking condition"
    return present[0], "no baseline condition in the transcripts; first condition by name"


def build_summary(trial_set: TrialSet, manifest: dict | None = None, budget: dict | None = None) -> dict:
    """`budget`: the run dir's budget.json as `benchmark.cost.budget.read_budget` reads it (a `--budget` run).
    Proactive trials are scored in their own block (`proactive`); every other block reads the
    question-and-answer trials."""
    from benchmark.cost.prices import table_from_manifest
    from benchmark.scoring.blind import blind_camera
    from benchmark.scoring.cost import candidate_cost
    from benchmark.scoring.proactive import RULE, proactive_summary

    manifest = dict(manifest or {})
    watched = tuple(t for t in trial_set.trials if t.watching is not None or t.target_context in PROACTIVE_TARGETS)
    trials = tuple(t for t in trial_set.trials if t not in watched)
    table = table_from_manifest(manifest)[0]

    def cost_of(record: TrialRecord) -> tuple[float | None, list[str]]:
        cost = candidate_cost(record, table)
        return cost.usd, list(cost.why)

    ranking, why = ranking_condition(trials or watched, manifest)
    conditions: dict[str, dict] = {}
    by_cue: dict[str, dict] = {}
    by_difficulty: dict[str, dict] = {}
    by_staleness: dict[str, dict] = {}
    by_frame_policy: dict[str, dict] = {}
    by_impairment: dict[str, dict] = {}
    confusion: dict[str, dict] = {}
    for name in sorted({t.condition for t in trials}):
        chosen = [t for t in trials if t.condition == name]
        classes = metrics.per_class(chosen)
        low, high, method = stats.balanced_interval(metrics.scenario_counts(chosen))
        conditions[name] = {
            "balanced_accuracy": metrics.balanced_accuracy(classes),
            "ci_low": low,
            "ci_high": high,
            "ci_method": method,
            "per_class": classes,
            "repair_rate": metrics.repair_rate(chosen),
            "scored": sum(t.scored for t in chosen),
        }
        by_cue[name] = metrics.breakdown(chosen, "cue_type")
        by_difficulty[name] = metrics.breakdown(chosen, "difficulty_tier")
        if any(t.frame_policy is not None for t in chosen):  # with a staleness sweep too: its gaps per policy
            by_frame_policy[name] = metrics.frame_policies(chosen)
        elif any(t.staleness_ms is not None for t in chosen):
            by_staleness[name] = metrics.staleness(chosen)
        if any(t.impairment is not None for t in chosen):
            by_impairment[name] = metrics.impairments(chosen)
        confusion[name] = metrics.confusion(chosen)
    ranked = [t for t in trials if t.condition == ranking]
    subsets = sorted({t.subset for t in trials})
    by_subset = {}
    if len(subsets) > 1:  # the headline is the bank subset's; each subset gets its own row
        for subset in subsets:
            chosen = [t for t in ranked if t.subset == subset]
            low, high, method = stats.balanced_interval(metrics.scenario_counts(chosen))
            by_subset[subset] = {
                "balanced_accuracy": metrics.balanced_accuracy(metrics.per_class(chosen)),
                "ci_low": low,
                "ci_high": high,
                "ci_method": method,
                "scored": sum(t.scored for t in chosen),
                "trials": len(chosen),
                "scenarios": len({t.scenario_id for t in chosen}),
            }
        if "bank" in subsets:
            ranked = [t for t in ranked if t.subset == "bank"]
    per_scenario = metrics.scenario_counts(ranked)
    headline = by_subset.get("bank") or conditions.get(ranking, {})
    primary = {
        "balanced_accuracy": headline.get("balanced_accuracy"),
        "ci_low": headline.get("ci_low"),
        "ci_high": headline.get("ci_high"),
        # `bootstrap` (below), or `wilson`: the per-class Wilson bounds combined, when the scenarios are too
        # few for a bootstrap (`stats.MIN_BOOTSTRAP_SCENARIOS`) or it has no width; null with nothing scored
        "interval_method": headline.get("ci_method"),
        "subset": "bank" if "bank" in by_subset else None,
        "condition": ranking,
        "condition_reason": why,
        "classes": list(metrics.PRIMARY_CLASSES),
        "n": sum(t.scored and t.target_context in metrics.PRIMARY_CLASSES for t in ranked),
        "scenarios": len(per_scenario),
        "rule": BALANCE_RULE,
        "bootstrap": {
            "resamples": "scenarios",
            "draws": stats.BOOTSTRAP_DRAWS,
            "seed": stats.BOOTSTRAP_SEED,
            "interval": "percentile, 2.5% and 97.5%",
        },
    }
    return {
        "summary_schema": SUMMARY_SCHEMA,
        "manifest": manifest,
        "primary": primary,
        "conditions": conditions,
        "by_cue_type": by_cue,
        "by_difficulty": by_difficulty,
        "by_staleness": by_staleness,
        "by_frame_policy": by_frame_policy,
        "by_impairment": by_impairment,
        "by_subset": by_subset,
        "confusion": confusion,
        "scenario_matrix": metrics.scenario_matrix(trials),
        "code_signal_disagreement": metrics.code_signal_disagreement(trials),
        "judge_agreement": metrics.judge_agreement(trials),
        "counts": metrics.counts(trials, trial_set.superseded),
        "latency": metrics.latency(trials),
        "perception": metrics.perception(trials),
        "blind_camera": blind_camera(trial_set.trials, manifest),
        "proactive": proactive_summary(watched, cost_of),
        "proactive_rule": RULE if watched else None,
        "cost": cost_summary(trial_set.trials, manifest, budget),
        "faults": fault_summary(
            trial_set.trials, None if (planned := planned_cells(manifest)) is None else len(planned)
        ),
    }
