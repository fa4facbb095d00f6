"""Scoring proactive trials: did the assistant speak up inside the event's
window, and stay quiet when nothing needed saying?

The rule, per trial (docs/proactive.md says it in prose):
- In a quiet control every remark is a false alarm.
- In an event scenario, remarks are taken in the order they were heard
  (`spoke_ms`). A remark made before the event (the newest frame the
  assistant had showed an earlier scene; an unprompted remark: it came
  before the onset) is a false alarm. A remark conveys the event only through
  words it did not copy from what the user said in the trial or from the
  camera text it was given (runs of `core.words.COPY_RUN` words shared with
  either): one that only echoes (`echoes`) is a false alarm, not conveying
  it, without asking the judge; echoes are counted apart. Otherwise the judge decides whether it
  conveys the event (label `current` against the event's expected keys):
  one that does not is a false alarm (for the lexical judge: one that names
  none of the keys); one the judge cannot tell is unscored; the first that
  does inside the window is the hit, later ones are duplicates; one that
  does after the window, before any hit, is late (the event still counts as
  missed).
- The event is a hit or a miss.

Per condition and grid cell (strategy x frame policy x impairment),
`proactive_summary` gives recall (hits over events) and precision (hits over
hits plus false alarms), each with k, n and a 95% interval by bootstrap over
scenarios (the Wilson interval when there are fewer than
`stats.MIN_BOOTSTRAP_SCENARIOS` scenarios or the bootstrap has no width),
false alarms per minute of stream, the time from the onset to a hit's first
text or audio (p50, p95), duplicates, late remarks, and what the candidate
cost per hour of watching.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import cast

from benchmark import stats
from core.judge import Judge, JudgeCase, Verdict
from core.records import TrialRecord
from core.watching import Probe, Watching

RULE = (
    "A remark inside the event's window that conveys the event is a hit (the first per event; later ones "
    "are duplicates). A remark made before the event, one that does not convey it, or any remark in a "
    "quiet control is a false alarm. A remark conveys the event only through words it did not copy from "
    "what the user said in the trial or from the camera text it was given: one that only echoes them does "
    "not. An event without a hit in its window is a miss; a remark that conveys it after the window is "
    "recorded as late."
)


def before_event(probe: Probe, onset_ms: int) -> bool:
    """The remark was made before the event: the newest frame the assistant had (for an unprompted
    remark: the moment it came) is earlier than the onset."""
    at = probe.frame_ms if probe.asked_ms is not None and probe.frame_ms is not None else probe.spoke_ms
    return at is None or at < onset_ms


def names_nothing(verdict: Verdict) -> bool:
    """An offline judge (the lexical judge) found none of the event's keys (nor anything else) in the
    remark: it does not convey the event. (Its other unscored verdicts, a remark naming the event and
    something else in one breath, stay unscored.)"""
    from benchmark.judges.kinds import is_offline
    from benchmark.judges.rules import NO_SIGNAL

    return verdict.label is None and is_offline(verdict.judge) and (verdict.unscored_reason or "").startswith(NO_SIGNAL)


def echo_sources(probe: Probe, scenario, heard: tuple[str, ...] = ()) -> tuple[str | None, ...]:
    """What a remark may have copied: the user's opening line as written and as heard (`heard`: the
    trial's transcripts), the camera text the probe was given (when recorded) and the authored camera
    text of the scene its newest frame showed."""
    scene = probe.scene if probe.scene is not None and 0 <= probe.scene < len(scenario.scenes) else None
    return (scenario.opening_user, *heard, probe.camera, None if scene is None else scenario.scenes[scene].camera)


def echoes(probe: Probe, scenario, heard: tuple[str, ...] = ()) -> bool:
    """The remark only echoes: in an event scenario, every expected key it names lies in words copied
    from the user's line or the camera text (`core.words.uncopied_words`); otherwise, or when it names
    no key, nothing of 4 letters or more is left once the copied words are set aside."""
    from core.words import uncopied_words

    own = " ".join(uncopied_words(probe.text, echo_sources(probe, scenario, heard)))
    if scenario.event is not None:
        answers = scenario.judge_scenario().answers
        if _names_a_key(probe.text, answers):
            return not _names_a_key(own, answers)
    return not any(len(word) >= 4 for word in own.split())


def _names_a_key(text: str, answers) -> bool:
    from benchmark.judges.signals import code_signals

    signals = code_signals(text, answers)
    return bool(signals["word_boundary"]["current_answers"] or signals["fuzzy"]["current_answers"])


def mark_echoes(scenario, watching: Watching, heard: tuple[str, ...] = ()) -> Watching:
    """Each remark's `echo` flag (`echoes`)."""
    return watching.replace(
        probes=tuple(replace(p, echo=p.remark and echoes(p, scenario, heard)) for p in watching.probes)
    )


def needs_judging(watching: Watching) -> list[Probe]:
    """The remarks a judge must read: an event scenario's remarks made from the event on that do not
    only echo."""
    if watching.kind != "event" or watching.onset_ms is None:
        return []
    return [p for p in watching.remarks if not before_event(p, watching.onset_ms) and not p.echo]


def decide(watching: Watching, verdicts: dict[int, Verdict | None]) -> Watching:
    """Each probe's outcome and the event's, from the judge's verdicts on the remarks that
    `needs_judging` names (by probe number)."""
    if watching.kind == "quiet":
        probes = tuple(replace(p, outcome="false_alarm" if p.remark else None) for p in watching.probes)
        return watching.replace(probes=probes, outcome=None)
    onset, end = watching.onset_ms, watching.window_end_ms
    hit = late = False
    decided: dict[int, tuple[str | None, Verdict | None]] = {}
    for probe in sorted(watching.remarks, key=lambda p: (p.spoke_ms if p.spoke_ms is not None else 1 << 62, p.n)):
        if onset is None or end is None:  # (None only in a quiet control, decided above)
            raise ValueError("an event's watching without its onset_ms and window_end_ms cannot be decided")
        verdict = verdicts.get(probe.n)
        if before_event(probe, onset) or probe.echo:
            outcome = "false_alarm"
        elif verdict is not None and names_nothing(verdict):
            outcome = "false_alarm"
        elif verdict is None or verdict.label is None:
            outcome = "unscored"
        elif verdict.label != "current":
            outcome = "false_alarm"
        elif hit or late:
            outcome = "duplicate"
        elif probe.spoke_ms is not None and probe.spoke_ms <= end:
            outcome, hit = "hit", True
        else:
            outcome, late = "late", True
        decided[probe.n] = (outcome, verdict)
    probes = tuple(
        replace(p, outcome=decided[p.n][0], verdict=decided[p.n][1]) if p.n in decided else replace(p, outcome=None)
        for p in watching.probes
    )
    return watching.replace(probes=probes, outcome="hit" if hit else "miss")


async def judge_watching(
    scenario,
    watching: Watching,
    judge: Judge,
    label: Callable[[Judge, JudgeCase], Awaitable[Verdict]] | None = None,
    heard: tuple[str, ...] = (),
) -> Watching:
    """The trial's outcomes: echoes marked (`heard`: what the user was heard to say, the opening turn's
    transcript), the remarks that need it judged against the event (`scenario` a `ProactiveScenario`),
    then `decide`. `label` asks the judge (the runner's, which meters it)."""
    ask = label or (lambda by, case: by.label(case))
    verdicts: dict[int, Verdict | None] = {}
    watching = mark_echoes(scenario, watching, heard)
    judged = needs_judging(watching)
    if judged:
        case_scenario = scenario.judge_scenario()
        for probe in judged:
            case = JudgeCase(
                scenario=case_scenario,
                turn=2,
                user_message=probe_message(probe, scenario),
                response=probe.text,
                turn_1_speech=scenario.opening_user or "",
                context_sent=False,
            )
            verdicts[probe.n] = await ask(judge, case)
    return decide(watching, verdicts)


def probe_message(probe: Probe, scenario) -> str:
    """The user message the judge sees for a remark: the camera block of the scene the probe's newest
    frame showed (the event's, when unknown), as a probe carries it; the judge reads the scene there
    and sets the words the remark copied from it aside."""
    from core.records import build_probe_message

    index = probe.scene if probe.scene is not None and 0 <= probe.scene < len(scenario.scenes) else scenario.event.scene
    return build_probe_message(scenario.scenes[index].camera)


# ---------------------------------------------------------------- the summary


def _ratio(k: int, n: int, per_scenario: list[tuple[int, int]]) -> dict:
    """k of n with a 95% interval: a bootstrap over scenarios, or Wilson when too few or no width."""
    rate = round(k / n, 4) if n else None
    low = high = None
    method = None
    if n:
        rows = [(a, b) for a, b in per_scenario if b]
        if len(rows) >= stats.MIN_BOOTSTRAP_SCENARIOS:
            low, high = bootstrap_ratio(rows)
            method = "bootstrap"
        if low is None or high is None or high - low <= 0:
            low, high = stats.wilson_interval(k, n)
            method = "wilson"
        if low is not None and high is not None:  # (n > 0: the Wilson interval always has both)
            low, high = round(low, 4), round(high, 4)
    return {"rate": rate, "k": k, "n": n, "ci_low": low, "ci_high": high, "ci_method": method}


def bootstrap_ratio(rows: Sequence[tuple[float, float]]) -> tuple[float | None, float | None]:
    """95% percentile interval of sum(k) / sum(n) over `rows` (one (k, n) per scenario) resampled."""
    import numpy as np

    rng = np.random.default_rng(stats.BOOTSTRAP_SEED)
    k = np.array([a for a, _ in rows], dtype=float)
    n = np.array([b for _, b in rows], dtype=float)
    picks = rng.integers(0, len(rows), size=(stats.BOOTSTRAP_DRAWS, len(rows)))
    kk, nn = k[picks].sum(axis=1), n[picks].sum(axis=1)
    values = kk[nn > 0] / nn[nn > 0]
    if not len(values):
        return None, None
    return float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))


def cell_name(record: TrialRecord) -> str:
    """A grid cell's name: the strategy, and the frame policy and impairment profile when swept, joined
    by commas (`change, fps:1`; `change, change:0.02/2` names the strategy, then the policy)."""
    parts = [record.proactive or "?"]
    if record.frame_policy:
        parts.append(record.frame_policy)
    if record.impairment:
        parts.append(record.impairment)
    return ", ".join(parts)


def starved_reason(watching: Watching) -> str | None:
    """Why a trial that did not pass never had its chance, or None: the model was slower than the stream.
    No check-in was asked at all (its opening reply outlasted the stream); or none inside the event window
    while a reply to an earlier one ran past the window's end; or every reply to a check-in inside the
    window came after it. A starved trial is neither a hit nor a miss; `native` trials ask nothing."""
    if watching.strategy == "native" or watching.passed and watching.kind == "event":
        return None
    asked = [p for p in watching.probes if p.asked_ms is not None]
    if not asked:
        return "no check-in was asked during the stream"
    if watching.kind == "quiet" or watching.onset_ms is None or watching.window_end_ms is None:
        return None
    onset, end = watching.onset_ms, watching.window_end_ms
    inside = [p for p in asked if onset <= cast(int, p.asked_ms) <= end]
    before = [p for p in asked if cast(int, p.asked_ms) < onset]
    if not inside:
        busy = before and not before[-1].silent and (before[-1].spoke_ms or 0) > end
        return "the model was answering an earlier check-in through the whole event window" if busy else None
    if all(not p.silent and p.spoke_ms is not None and p.spoke_ms > end for p in inside):
        return "every reply to a check-in inside the window came after it"
    return None


def cell_metrics(records: list[TrialRecord], cost_usd: float | None, cost_unknown: list[str]) -> dict:
    """One grid cell's block (`records`: its finished proactive trials; `cost_usd`: the candidate's spend on
    them, None when unknown with the reasons in `cost_unknown`). Starved trials (`starved_reason`) are
    counted apart, with their reasons, and left out of the events, quiet controls and recall."""
    everything = [r.watching for r in records if r.watching is not None]
    reasons = [why for w in everything if (why := starved_reason(w))]
    watched = [w for w in everything if not starved_reason(w)]
    by_scenario: dict[str, list[Watching]] = {}
    for record in records:
        if record.watching is not None and not starved_reason(record.watching):
            by_scenario.setdefault(record.scenario_id, []).append(record.watching)
    events = [w for w in watched if w.kind == "event"]
    hits = sum(w.outcome == "hit" for w in events)
    false_alarms = sum(w.count("false_alarm") for w in watched)
    minutes = sum(w.stream_ms for w in watched) / 60_000
    recall_rows = [
        (sum(w.outcome == "hit" for w in ws), sum(w.kind == "event" for w in ws)) for ws in by_scenario.values()
    ]
    precision_rows = [
        (sum(w.count("hit") for w in ws), sum(w.count("hit") + w.count("false_alarm") for w in ws))
        for ws in by_scenario.values()
    ]
    to_speak = [_to_speak_s(p, w) for w in events for p in w.probes if p.outcome == "hit"]
    speak = stats.percentiles(to_speak, digits=3)
    hours = minutes / 60
    return {
        "strategy": records[0].proactive if records else None,
        "frame_policy": records[0].frame_policy if records else None,
        "impairment": records[0].impairment if records else None,
        "trials": len(everything),
        "starved": len(reasons),
        "starved_reasons": {why: reasons.count(why) for why in sorted(set(reasons))},
        "events": len(events),
        "quiet_controls": len(watched) - len(events),
        "hits": hits,
        "misses": len(events) - hits,
        "late": sum(w.count("late") for w in watched),
        "duplicates": sum(w.count("duplicate") for w in watched),
        "false_alarms": false_alarms,
        "false_alarms_in_quiet_controls": sum(w.count("false_alarm") for w in watched if w.kind == "quiet"),
        "unscored_remarks": sum(w.count("unscored") for w in watched),
        "echoes": sum(p.echo for w in watched for p in w.remarks),
        "probes": sum(w.asked for w in watched),
        "silent_probes": sum(p.silent for w in watched for p in w.probes),
        "probes_skipped": sum(w.skipped for w in everything),
        "remarks": sum(len(w.remarks) for w in watched),
        "recall": _ratio(hits, len(events), recall_rows),
        "precision": _ratio(sum(k for k, _ in precision_rows), sum(n for _, n in precision_rows), precision_rows),
        "false_alarms_per_min": round(false_alarms / minutes, 3) if minutes else None,
        "time_to_speak_p50_s": speak["p50"],
        "time_to_speak_p95_s": speak["p95"],
        "time_to_speak_n": speak["n"],
        "stream_minutes": round(minutes, 3),
        "cost_per_hour_usd": round(cost_usd / hours, 4) if cost_usd is not None and hours else None,
        "cost_unknown": cost_unknown if cost_usd is None else [],
        "scenarios": [
            _scenario_row(r) for r in sorted(records, key=lambda r: (r.scenario_id, r.trial)) if r.watching is not None
        ],
    }


def _to_speak_s(probe: Probe, watching: Watching) -> float:
    """Seconds from the event's onset to a hit remark (a hit has both times)."""
    if probe.spoke_ms is None or watching.onset_ms is None:
        raise ValueError(f"probe {probe.n}: a hit needs its time and the event's onset")
    return (probe.spoke_ms - watching.onset_ms) / 1000


def _scenario_row(record: TrialRecord) -> dict:
    """One trial as the findings' table shows it: outcome, and each remark's time and outcome."""
    w = record.watching
    if w is None:  # (the caller passes watched trials only)
        raise ValueError(f"{record.scenario_id}: not a proactive trial")
    hit = next((p for p in w.probes if p.outcome == "hit"), None)
    return {
        "scenario_id": record.scenario_id,
        "trial": record.trial,
        "kind": w.kind,
        "outcome": w.outcome,
        "starved": starved_reason(w),
        "onset_s": None if w.onset_ms is None else w.onset_ms / 1000,
        "window_end_s": None if w.window_end_ms is None else w.window_end_ms / 1000,
        "probes": w.asked,
        "false_alarms": w.count("false_alarm"),
        "time_to_speak_s": None if hit is None else round(_to_speak_s(hit, w), 3),
        "remarks": [
            {
                "at_s": None if p.spoke_ms is None else p.spoke_ms / 1000,
                "outcome": p.outcome,
                "echo": p.echo,
                "text": p.text[:160],
            }
            for p in w.remarks
        ],
    }


def proactive_summary(
    trials: Sequence[TrialRecord], cost_of: Callable[[TrialRecord], tuple[float | None, list[str]]]
) -> dict:
    """condition -> grid cell name -> `cell_metrics`, over the finished proactive trials; `cost_of` gives a
    trial's candidate spend (None and why when unknown)."""
    out: dict[str, dict] = {}
    for record in trials:
        if record.watching is None or record.errored:
            continue
        out.setdefault(record.condition, {}).setdefault(cell_name(record), []).append(record)
    summary: dict[str, dict] = {}
    for condition, cells in sorted(out.items()):
        summary[condition] = {}
        for name, records in sorted(cells.items()):
            total, unknown = 0.0, []
            for record in records:
                usd, why = cost_of(record)
                if usd is None:
                    unknown += [w for w in why if w not in unknown]
                else:
                    total += usd
            summary[condition][name] = cell_metrics(records, None if unknown else total, unknown)
    return summary
