"""What a run cost, from its records and the prices its manifest recorded.

Per condition: the candidate's and the judges' spend over its trials (errored
trials left out: their replies are not recorded), per trial, and the
candidate's spend per correct Turn 2 answer. The candidate's spend includes
a realtime API's input transcription, billed apart from its replies and
priced by the transcription model's entry; `transcription_usd` is that part
of it, shown apart. Replies served from the
response cache are priced like the rest: the cost of a trial does not depend
on whether the cache was warm. A cost that cannot be known (a model with no
price, a kind of token with none, usage not reported) is null with the
reasons, never 0. Rules of the pricing: `benchmark.cost.prices`.
"""

from __future__ import annotations

from collections.abc import Iterable

from benchmark.cost.prices import NOTHING, Cost, PriceTable, reply_cost, table_from_manifest, transcription_cost
from core.candidate import TranscriptionUsage, Usage
from core.judge import Verdict
from core.records import TrialRecord


def candidate_cost(trial: TrialRecord, table: PriceTable) -> Cost:
    """The candidate's replies and their input transcriptions."""
    total = NOTHING
    for turn in trial.turns:
        model = trial.candidate_model or turn.reply.model
        total += reply_cost(turn.reply.usage, table.get(model), model)
    for probe in trial.watching.probes if trial.watching is not None else ():  # a proactive trial's probes
        model = trial.candidate_model or "?"
        total += reply_cost(probe.usage or Usage(), table.get(model), model)  # no usage: unknown, never 0
    return total + transcriptions_cost(trial, table)


def transcriptions_cost(trial: TrialRecord, table: PriceTable) -> Cost:
    """What transcribing the trial's speech cost, apart from the replies (a realtime API's input transcription)."""
    total = NOTHING
    for turn in trial.turns:
        usage = turn.reply.transcription
        if usage is not None:
            total += transcription_cost(usage, table.get(usage.model), usage.model)
    return total


def verdict_cost(verdict: Verdict | None, table: PriceTable) -> Cost:
    """A judge's verdict: its model's tokens priced; no model asked (an offline judge, a reply that
    was never judged) costs nothing; a model's reply recorded without usage (an older record) is unknown."""
    if verdict is None:
        return NOTHING
    if verdict.usage is None:
        return (
            Cost(usd=None, why=(f"{verdict.judge}: the judge's usage is not recorded (an older record)",))
            if verdict.raw
            else NOTHING
        )
    return reply_cost(verdict.usage, table.get(verdict.judge), verdict.judge)


def judge_cost(trial: TrialRecord, table: PriceTable) -> Cost:
    total = NOTHING
    remarks = tuple(p.verdict for p in trial.watching.probes) if trial.watching is not None else ()
    for verdict in (trial.turn_2_judge, trial.turn_2_ranking_judge, trial.turn_3_judge, *remarks):
        total += verdict_cost(verdict, table)
    return total


def _tokens(usages: Iterable[Usage]) -> dict | None:
    """The replies' usage summed (None: no reply); the totals are null when a reply's usage was not
    reported, as every part left unknown by any reply is."""
    total, unreported = None, False
    for usage in usages:
        unreported = unreported or not usage.reported
        total = usage if total is None else total + usage
    if total is None:
        return None
    return {**total.to_json(), **({"input_tokens": None, "output_tokens": None} if unreported else {})}


def _transcribed(trials: list[TrialRecord]) -> dict | None:
    """The transcriptions' usage summed, by model (None: nothing was transcribed apart)."""
    by_model: dict[str, TranscriptionUsage] = {}
    turns: dict[str, int] = {}
    for trial in trials:
        for turn in trial.turns:
            usage = turn.reply.transcription
            if usage is not None:
                by_model[usage.model] = usage if usage.model not in by_model else by_model[usage.model] + usage
                turns[usage.model] = turns.get(usage.model, 0) + 1
    return {model: {**usage.to_json(), "turns": turns[model]} for model, usage in by_model.items()} or None


def _share(cost: Cost, count: int) -> float | None:
    return None if cost.usd is None or not count else cost.usd / count


def group_cost(trials: list[TrialRecord], table: PriceTable) -> dict:
    """The cost block of a group of trials (a condition, a whole run)."""
    finished = [t for t in trials if not t.errored]
    candidate, judge, transcribed = NOTHING, NOTHING, NOTHING
    for trial in finished:
        candidate += candidate_cost(trial, table)
        judge += judge_cost(trial, table)
        transcribed += transcriptions_cost(trial, table)
    correct = sum(t.passed is True for t in finished)
    judged = [
        v.usage
        for t in finished
        for v in (t.turn_2_judge, t.turn_2_ranking_judge, t.turn_3_judge)
        if v is not None and v.usage is not None
    ]
    return {
        "candidate_usd": candidate.usd,
        "transcription_usd": transcribed.usd,
        "judge_usd": judge.usd,
        "total_usd": (candidate + judge).usd,
        "trials": len(finished),
        "errored_trials": len(trials) - len(finished),
        "correct_turn2": correct,
        "candidate_usd_per_trial": _share(candidate, len(finished)),
        "judge_usd_per_trial": _share(judge, len(finished)),
        "per_correct_turn2_usd": _share(candidate, correct),
        "unknown": list((candidate + judge).why),
        "candidate_unknown": list(candidate.why),  # why `candidate_usd` is null, and `judge_usd`
        "judge_unknown": list(judge.why),
        "upper_bound": list((candidate + judge).notes),  # how a figure is at most what was spent
        "candidate_tokens": _tokens(
            [
                *(turn.reply.usage for t in finished for turn in t.turns),
                *(p.usage or Usage() for t in finished if t.watching for p in t.watching.probes),
            ]
        ),
        "judge_tokens": _tokens(judged),
        "transcription": _transcribed(finished),
    }


def cost_summary(trials: tuple[TrialRecord, ...], manifest: dict, budget: dict | None = None) -> dict:
    """summary.json's `cost` block."""
    table, problems = table_from_manifest(manifest)
    conditions = {
        name: group_cost([t for t in trials if t.condition == name], table)
        for name in sorted({t.condition for t in trials})
    }
    run = group_cost(list(trials), table)
    by_staleness = {}  # a staleness sweep: what each Turn 2 gap cost (a cell axis, like the condition)
    for name in conditions:
        gaps = sorted({t.staleness_ms for t in trials if t.condition == name and t.staleness_ms is not None})
        if gaps:
            by_staleness[name] = {
                str(gap): group_cost([t for t in trials if t.condition == name and t.staleness_ms == gap], table)
                for gap in gaps
            }
    by_frame_policy = {}  # a frame policy sweep: what each policy cost
    for name in conditions:
        policies = list(dict.fromkeys(t.frame_policy for t in trials if t.condition == name and t.frame_policy))
        if policies:
            by_frame_policy[name] = {
                policy: group_cost([t for t in trials if t.condition == name and t.frame_policy == policy], table)
                for policy in policies
            }
    return {
        "currency": "USD",
        "prices_from": table.origin,
        "price_problems": problems,
        "per_correct_turn2_rule": "the candidate's spend over the condition's finished trials / its correct "
        "Turn 2 answers (null when the spend is unknown or none was correct)",
        "conditions": conditions,
        "by_staleness": by_staleness,
        "by_frame_policy": by_frame_policy,
        "run": run,
        "budget": budget,
    }
