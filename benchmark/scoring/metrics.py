"""Turn trials into the metrics of `summary.json`.

Rules (also stated in findings.md):
- Errored trials and trials whose Turn 2 judge label is null (unscored) are
  left out of every accuracy and counted in `counts`.
- Per-class accuracy is passes / scored trials of that target context; a
  class with no trials has accuracy null, never 0.
- Balanced accuracy is the mean of per-class accuracy over `current` and
  `prior`, taken over the classes that have trials.
- The repair rate is Turn 3 passes / Turn 2 misses whose repair was sent and
  judged.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence

from benchmark import stats
from benchmark.scoring.signals import code_signal_label
from benchmark.scoring.trials import LABELS
from core.records import LATENCY_STAGES, TrialRecord

PRIMARY_CLASSES = ("current", "prior")


def rate_cell(k: int, n: int) -> dict:
    """A proportion as summary.json writes every one: {rate, k, n, ci_low, ci_high} (95% Wilson); rate and
    interval null when n == 0."""
    low, high = stats.wilson_interval(k, n)
    return {"rate": k / n if n else None, "k": k, "n": n, "ci_low": low, "ci_high": high}


def per_class(trials: Iterable[TrialRecord]) -> dict[str, dict]:
    """Turn 2 accuracy per target context over the scored trials."""
    k: dict[str, int] = defaultdict(int)
    n: dict[str, int] = defaultdict(int)
    for trial in trials:
        if trial.scored:
            n[trial.target_context] += 1
            k[trial.target_context] += int(trial.passed is True)
    return {label: rate_cell(k[label], n[label]) for label in LABELS}


def balanced_accuracy(classes: dict[str, dict], over: Sequence[str] = PRIMARY_CLASSES) -> float | None:
    return stats.balanced_from_counts([classes[c]["k"] for c in over], [classes[c]["n"] for c in over])


def scenario_counts(trials: Iterable[TrialRecord], over: Sequence[str] = PRIMARY_CLASSES) -> list[stats.ScenarioCounts]:
    """Per-scenario pass/total counts per balanced class, in scenario-id order."""
    k: dict[str, list[int]] = {}
    n: dict[str, list[int]] = {}
    for trial in trials:
        if not trial.scored or trial.target_context not in over:
            continue
        at = over.index(trial.target_context)
        k.setdefault(trial.scenario_id, [0] * len(over))[at] += int(trial.passed is True)
        n.setdefault(trial.scenario_id, [0] * len(over))[at] += 1
    return [stats.ScenarioCounts(scenario_id=sid, passes=tuple(k[sid]), totals=tuple(n[sid])) for sid in sorted(n)]


def repair_rate(trials: Iterable[TrialRecord]) -> dict:
    """Turn 3 passes over Turn 2 misses that were repaired and judged, with Wilson interval."""
    k = n = misses = unscored = not_attempted = 0
    for trial in trials:
        if trial.passed is not False:
            continue
        misses += 1
        if not trial.turn_3_repair_attempted:
            not_attempted += 1
        elif trial.repair_passed is None:
            unscored += 1
        else:
            n += 1
            k += int(trial.repair_passed)
    return {
        **rate_cell(k, n),
        "turn_2_misses": misses,
        "turn_3_unscored": unscored,
        "not_attempted": not_attempted,
    }


def breakdown(trials: Iterable[TrialRecord], key: str) -> dict[str, dict]:
    """Turn 2 accuracy (all target contexts pooled) per value of `key` ("cue_type", "difficulty_tier")."""
    k: dict[str, int] = defaultdict(int)
    n: dict[str, int] = defaultdict(int)
    seen: set[str] = set()
    for trial in trials:
        value = getattr(trial, key)
        seen.add(value)
        if trial.scored:
            n[value] += 1
            k[value] += int(trial.passed is True)
    return {value: rate_cell(k[value], n[value]) for value in sorted(seen)}


def staleness(trials: Iterable[TrialRecord]) -> dict[str, dict]:
    """The staleness sweep, per Turn 2 gap (ms): `frame_row` of the trials at that gap."""
    trials = [t for t in trials if t.staleness_ms is not None]
    return {
        str(gap): frame_row([t for t in trials if t.staleness_ms == gap])
        for gap in sorted({t.staleness_ms for t in trials if t.staleness_ms is not None})
    }


def frame_policies(trials: Iterable[TrialRecord]) -> dict[str, dict]:
    """The frame policy sweep, per policy: `frame_row` of its trials, and with a staleness
    sweep too, `by_gap` (the same row per Turn 2 gap)."""
    trials = [t for t in trials if t.frame_policy is not None]
    out: dict[str, dict] = {}
    for policy in dict.fromkeys(t.frame_policy for t in trials if t.frame_policy is not None):
        chosen = [t for t in trials if t.frame_policy == policy]
        out[policy] = frame_row(chosen)
        if any(t.staleness_ms is not None for t in chosen):
            out[policy]["by_gap"] = staleness(chosen)
    return out


def frame_row(trials: Sequence[TrialRecord]) -> dict:
    """What a set of stream trials' assistant saw of the camera, and how Turn 2 went:
    Turn 2 accuracy (target contexts pooled); `earlier_scene`, the scored replies judged
    `prior` among trials whose target is not `prior`; `stale_frame_rate`, the Turn 2
    questions whose newest frame sent by the end of speech showed an earlier scene,
    among the trials whose Turn 2 had frames; the age of that frame at p50 and p95;
    frames and bytes sent per turn (turns 1 and 2, where the camera is on) and frames
    sent per minute of stream time. `with_frames`: the trials whose Turn 2 had frames
    at all (without any, neither gap nor policy can change what the model saw)."""
    ran = [t for t in trials if not t.errored]
    scored = [t for t in ran if t.scored]
    not_prior = [t for t in scored if t.target_context != "prior"]
    turn_2 = [turn for t in ran for turn in t.turns if turn.turn == 2]
    framed = [turn for turn in turn_2 if turn.glasses.frames_sent]
    counted = [turn for turn in framed if turn.frames.newest_frame_scene is not None]
    ages = stats.percentiles(
        [turn.metrics.last_frame_age_s for turn in turn_2 if turn.metrics.last_frame_age_s is not None]
    )
    camera = [turn.frames for t in ran for turn in t.turns if turn.turn <= 2 and turn.frames.policy is not None]
    window_ms = sum(f.window_ms or 0 for f in camera)
    return {
        "accuracy": rate_cell(sum(bool(t.passed) for t in scored), len(scored)),
        "earlier_scene": rate_cell(sum(t.turn_2_label == "prior" for t in not_prior), len(not_prior)),
        "stale_frame_rate": rate_cell(sum(f.frames.newest_frame_scene == "earlier" for f in counted), len(counted))
        if counted
        else None,
        "frame_age_p50_s": ages["p50"],
        "frame_age_p95_s": ages["p95"],
        "frames_sent_per_turn": round(sum(f.sent or 0 for f in camera) / len(camera), 3) if camera else None,
        "bytes_sent_per_turn": round(sum(f.sent_bytes or 0 for f in camera) / len(camera)) if camera else None,
        "frames_per_minute": round(sum(f.sent or 0 for f in camera) * 60_000 / window_ms, 2) if window_ms else None,
        "trials": len(trials),
        "with_frames": sum(any(turn.turn == 2 and turn.glasses.frames_sent for turn in t.turns) for t in ran),
    }


def _pooled_counts(trials: Sequence[TrialRecord]) -> list[stats.ScenarioCounts]:
    """Per-scenario Turn 2 passes over all scored trials, as one pooled class."""
    k: dict[str, int] = defaultdict(int)
    n: dict[str, int] = defaultdict(int)
    for trial in trials:
        n[trial.scenario_id] += 1
        k[trial.scenario_id] += int(bool(trial.passed))
    return [stats.ScenarioCounts(scenario_id=sid, passes=(k[sid],), totals=(n[sid],)) for sid in sorted(n)]


def paired_accuracy(pairs: Sequence[tuple[TrialRecord, TrialRecord]]) -> dict:
    """Pooled Turn 2 accuracy on both sides of scored pairs, B - A with its paired bootstrap
    interval over scenarios, and an exact McNemar test."""
    n = len(pairs)
    pass_a = sum(bool(x.passed) for x, _ in pairs)
    pass_b = sum(bool(y.passed) for _, y in pairs)
    only_a = sum(bool(x.passed) and not y.passed for x, y in pairs)
    only_b = sum(bool(y.passed) and not x.passed for x, y in pairs)
    low, high = stats.paired_bootstrap_difference(
        _pooled_counts([x for x, _ in pairs]), _pooled_counts([y for _, y in pairs])
    )
    return {
        "pairs": n,
        "passes_a": pass_a,
        "passes_b": pass_b,
        "accuracy_a": pass_a / n if n else None,
        "accuracy_b": pass_b / n if n else None,
        "difference": (pass_b - pass_a) / n if n else None,
        "ci_low": low,
        "ci_high": high,
        "a_pass_b_fail": only_a,
        "a_fail_b_pass": only_b,
        "p_value": stats.mcnemar_exact(only_a, only_b),
    }


BASE_PROFILE = "clean"  # the profile each impaired one is paired against


def impairments(trials: Iterable[TrialRecord]) -> dict[str, dict]:
    """The impairment sweep, per profile: Turn 2 accuracy; `word_error_rate`, the mean over
    turns of the transcript against the line the glasses spoke; `camera_similarity`, the
    mean share of the authored camera text's words found in a described camera block;
    latency from the end of speech to the reply's end (p50, p95); audio chunks and frames
    the uplink lost, per trial; and, paired cell by cell against `clean` when it ran,
    the Turn 2 accuracy difference with its paired interval and McNemar."""
    from core.words import word_recall

    trials = [t for t in trials if t.impairment is not None]
    out: dict[str, dict] = {}
    base = {_unimpaired(t): t for t in trials if t.impairment == BASE_PROFILE and t.scored}
    paired = any(t.impairment == BASE_PROFILE for t in trials)
    for profile in dict.fromkeys(t.impairment for t in trials if t.impairment is not None):
        chosen = [t for t in trials if t.impairment == profile]
        ran = [t for t in chosen if not t.errored]
        scored = [t for t in ran if t.scored]
        turns = [turn for t in ran for turn in t.turns]
        rates = speech_error_rates(turns)
        recalls = [
            word_recall(turn.glasses.camera_script, turn.input.camera_block or "")
            for turn in turns
            if turn.glasses.camera_script and turn.input.camera_source == "perceived"
        ]
        similar = [s for s in recalls if s is not None]
        done = stats.percentiles([turn.metrics.reply_done for turn in turns if turn.metrics.reply_done is not None])
        row = {
            "trials": len(chosen),
            "accuracy": rate_cell(sum(bool(t.passed) for t in scored), len(scored)),
            "word_error_rate": round(statistics.fmean(rates), 3) if rates else None,
            "camera_similarity": round(statistics.fmean(similar), 3) if similar else None,
            "reply_done_p50_s": done["p50"],
            "reply_done_p95_s": done["p95"],
            "audio_chunks_lost_per_trial": round(sum(len(turn.glasses.audio_lost_ms) for turn in turns) / len(ran), 2)
            if ran
            else None,
            "frames_lost_per_trial": round(sum(len(turn.glasses.frames_lost_ms) for turn in turns) / len(ran), 2)
            if ran
            else None,
        }
        if profile != BASE_PROFILE and paired:
            pairs = [(base[_unimpaired(t)], t) for t in scored if _unimpaired(t) in base]
            row["against_clean"] = paired_accuracy(pairs)
        out[profile] = row
    return out


def _unimpaired(trial: TrialRecord) -> tuple:
    """The cell without its profile: where a clean trial and an impaired one pair."""
    return trial.scenario_id, trial.condition, trial.trial, trial.staleness_ms, trial.frame_policy


def confusion(trials: Iterable[TrialRecord]) -> dict[str, dict[str, int]]:
    """Target context (rows) against the Turn 2 judge label (columns); `unscored` column too."""
    table = {target: {label: 0 for label in (*LABELS, "unscored")} for target in LABELS}
    for trial in trials:
        if trial.errored:
            continue
        table[trial.target_context][trial.turn_2_label or "unscored"] += 1
    return table


def scenario_outcome(trial: TrialRecord) -> str:
    """pass, repair_pass, repair_fail, repair_missing, unscored or errored."""
    if trial.errored:
        return "errored"
    if trial.passed is None:
        return "unscored"
    if trial.passed:
        return "pass"
    if trial.repair_passed is None:
        return "repair_missing"
    return "repair_pass" if trial.repair_passed else "repair_fail"


OUTCOMES = ("pass", "repair_pass", "repair_fail", "repair_missing", "unscored", "errored")


def scenario_matrix(trials: Iterable[TrialRecord]) -> dict[str, dict]:
    """Per scenario: target context, shift type and outcome counts per condition."""
    matrix: dict[str, dict] = {}
    for trial in sorted(trials, key=lambda t: t.cell):
        row = matrix.setdefault(
            trial.scenario_id,
            {
                "target_context": trial.target_context,
                "cue_type": trial.cue_type,
                "conditions": {},
            },
        )
        cell = row["conditions"].setdefault(trial.condition, {name: 0 for name in OUTCOMES})
        cell[scenario_outcome(trial)] += 1
    return matrix


def code_signal_disagreement(trials: Iterable[TrialRecord]) -> dict:
    """How often the code-signal label differs from the Turn 2 judge label, per scenario."""
    per: dict[str, dict] = {}
    total = disagree = 0
    for trial in trials:
        code = code_signal_label(trial.turn_2_code_signals)
        if not trial.scored or code is None:
            continue
        row = per.setdefault(trial.scenario_id, {"n": 0, "disagree": 0})
        row["n"] += 1
        total += 1
        if code != trial.turn_2_label:
            row["disagree"] += 1
            disagree += 1
    for row in per.values():
        row["rate"] = row["disagree"] / row["n"]
    return {
        "n": total,
        "disagree": disagree,
        "rate": disagree / total if total else None,
        "by_scenario": dict(sorted(per.items())),
    }


def label_agreement(first: Sequence[str], second: Sequence[str]) -> dict:
    """Percent agreement, Cohen's kappa and the confusion (first rows, second columns)."""
    n = len(first)
    table = {a: {b: 0 for b in LABELS} for a in LABELS}
    for a, b in zip(first, second):
        table[a][b] += 1
    return {
        "agreement": sum(a == b for a, b in zip(first, second)) / n if n else None,
        "kappa": stats.cohen_kappa(first, second),
        "n": n,
        "confusion": table,
    }


def judge_agreement(trials: Sequence[TrialRecord]) -> dict | None:
    """Agreement of the Turn 2 judge with the recorded labels of a rescore, or with the ranking judge."""
    for other, between in (
        (lambda t: t.turn_2_previous_judge_label, "new judge (rows) vs recorded labels before the rescore (columns)"),
        (lambda t: t.ranking_label, "judge (rows) vs ranking judge (columns)"),
    ):
        pairs = [
            (t.turn_2_label, other(t))
            for t in trials
            if not t.errored and t.turn_2_label is not None and other(t) is not None
        ]
        if pairs:
            result = label_agreement([a for a, _ in pairs], [b for _, b in pairs])
            result["between"] = between
            return result
    return None


def counts(trials: Sequence[TrialRecord], superseded: int = 0) -> dict:
    by_condition: dict[str, dict] = {}
    for trial in trials:
        row = by_condition.setdefault(trial.condition, {"trials": 0, "scored": 0, "unscored": 0, "errored": 0})
        row["trials"] += 1
        if trial.errored:
            row["errored"] += 1
        elif trial.turn_2_label is None:
            row["unscored"] += 1
            reason = (trial.turn_2_judge.unscored_reason if trial.turn_2_judge else None) or "no judge verdict"
            reasons = row.setdefault("unscored_reasons", {})
            reasons[reason] = reasons.get(reason, 0) + 1
        else:
            row["scored"] += 1
    repaired = [t for t in trials if not t.errored and t.turn_3_repair_attempted]
    return {
        "trials": len(trials),
        "scored": sum(r["scored"] for r in by_condition.values()),
        "turn_2_unscored": sum(r["unscored"] for r in by_condition.values()),
        "errored": sum(r["errored"] for r in by_condition.values()),
        "turn_3_attempted": len(repaired),
        "turn_3_unscored": sum(t.turn_3_label is None for t in repaired),
        "superseded_records": superseded,
        "scenarios": len({t.scenario_id for t in trials}),
        "by_condition": dict(sorted(by_condition.items())),
    }


def latency(trials: Iterable[TrialRecord]) -> dict:
    """p50/p95 over every turn of every finished trial: first reply text, first
    reply audio and first audible speech in it (spoken replies: the
    voice-to-voice gap) and reply done, in seconds from the request (text
    proxy) or from the end of the user's speech (simulated glasses)."""
    replies = [turn.reply for trial in trials if not trial.errored for turn in trial.turns]
    return {
        "first_token_s": stats.percentiles([r.first_token_s for r in replies if r.first_token_s is not None]),
        "first_audio_s": stats.percentiles([r.first_audio_s for r in replies if r.first_audio_s is not None]),
        "first_voice_s": stats.percentiles([r.first_voice_s for r in replies if r.first_voice_s is not None]),
        "reply_done_s": stats.percentiles([r.latency_s for r in replies if r.latency_s]),
        "measured_from": "the end of the user's speech" if any(t.via == "stream" for t in trials) else "the request",
    }


def speech_error_rates(turns) -> list[float]:
    """Word error rate of each heard turn's transcript against the line the glasses spoke."""
    from core.words import word_error_rate

    return [
        word_error_rate(t.glasses.script, t.input.speech)
        for t in turns
        if t.glasses.script and t.input.speech_source in ("perceived", "media")
    ]


def perception(trials: Iterable[TrialRecord]) -> dict | None:
    """Simulated-glasses runs: where each channel's content came from, per turn
    played, the latency of each stage from the end of speech (p50/p95), and
    the word error rate of the transcript the assistant got against the
    scenario's line the glasses spoke (`glasses.script`; older records have
    none); `frames` counts the camera turns by where their frames came from (`frame_sources`)."""
    turns = [turn for trial in trials if not trial.errored for turn in trial.turns]
    if not any(turn.metrics.measured for turn in turns):
        return None
    channels = {}
    for channel in ("speech", "camera", "context"):
        counts: dict[str, int] = defaultdict(int)
        for turn in turns:
            counts[getattr(turn.input, f"{channel}_source") or "none"] += 1
        channels[channel] = dict(sorted(counts.items()))
    stages = {
        stage: stats.percentiles([s for t in turns if (s := t.metrics.stage(stage)) is not None])
        for stage in LATENCY_STAGES
    }
    stages["asr_decode_s"] = stats.percentiles(
        [t.input.timings["asr_decode_s"] for t in turns if t.input.timings.get("asr_decode_s") is not None]
    )
    rates = speech_error_rates(turns)
    wer = (
        {"mean": round(statistics.fmean(rates), 3), "median": round(statistics.median(rates), 3), "n": len(rates)}
        if rates
        else None
    )
    return {
        "turns": len(turns),
        "sources": channels,
        "stages_s": stages,
        "speech_wer": wer,
        "frames": frame_sources(turns),
    }


FRAME_SOURCE_NAMES = {"recording": "recorded", "synthetic": "synthetic", "pictograph": "pictograph"}


def frame_sources(turns) -> dict[str, int]:
    """Where the frames of the camera turns (Turns 1 and 2; the camera is off on Turn 3) came from, per
    turn: `recorded`, `synthetic`, `pictograph`, or `none` (no frame of its own: the camera block was
    the scenario's text, or a live camera's frames)."""
    counts: dict[str, int] = defaultdict(int)
    for turn in turns:
        if turn.turn in (1, 2):
            counts[FRAME_SOURCE_NAMES.get(turn.glasses.frames_source or "", "none")] += 1
    return dict(sorted(counts.items()))
