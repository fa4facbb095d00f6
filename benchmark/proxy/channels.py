"""What each input channel of a run was made of, and how far it was from the authored text.

Per run (Turns 1 and 2 of the trials of the compared condition, the turns
that decide the Turn 2 score): how many turns sent perceived or authored
speech and camera blocks (and, on Turn 1, the context block); the word error
rate of perceived speech against the scenario's authored utterance; for
perceived camera blocks, the object nouns they name that the authored block
did not and a word-level similarity to it; the stream latencies. The flips
between the runs are attributed to the channels that were perceived in them.
"""

from __future__ import annotations

import difflib
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from benchmark.stats import percentiles
from core.nouns import object_nouns_in
from core.records import TrialRecord, TurnInput
from core.scenario import Bank, Scenario
from core.words import word_error_rate

TURNS = (1, 2)
CHANNELS = ("speech", "camera", "context")
SIMILARITY_MEASURE = (
    "difflib SequenceMatcher ratio over lower-cased word sequences: "
    "2 x matching words / total words of both blocks (1 = same words in the same order, "
    "0 = no word in common)"
)
ATTRIBUTION = ("speech", "scene", "both", "neither", "unknown")
LATENCY_STAGES = (
    ("asr", "speech recognition (Whisper decode, timings asr_decode_s)"),
    ("describer", "scene description (camera block ready minus transcript final; turns with a perceived block)"),
    ("transcript_final", "end of speech to final transcript"),
    ("camera_block", "end of speech to camera block"),
    ("first_token", "end of speech to first reply token"),
    ("reply_done", "end of speech to reply done"),
)
WORST = 10


def _inputs(trial: TrialRecord) -> list[TurnInput]:
    return [i for i in (trial.turn_input(n) for n in TURNS) if i is not None]


def _authored(scenario: Scenario | None, turn: int, channel: str) -> str | None:
    if scenario is None:
        return None
    if channel == "speech":
        return scenario.turn_1_user if turn == 1 else scenario.turn_2_user
    if channel == "context":
        return scenario.context_image or None
    return (scenario.turn_1_image if turn == 1 else scenario.turn_2_image) or None


def _source(turn_input: TurnInput, channel: str) -> str | None:
    return {
        "speech": turn_input.speech_source,
        "camera": turn_input.camera_source,
        "context": turn_input.context_source,
    }[channel]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def similarity(authored: str, perceived: str) -> float:
    return difflib.SequenceMatcher(None, _words(authored), _words(perceived), autojunk=False).ratio()


def _summary(values: Sequence[float]) -> dict:
    return {
        "n": len(values),
        "mean": statistics.fmean(values) if values else None,
        "median": statistics.median(values) if values else None,
    }


def provenance(trials: Iterable[TrialRecord]) -> dict:
    """Per channel: turns whose block was perceived, authored (fallback or text proxy), or not sent."""
    counts: dict[str, Counter[str]] = {channel: Counter() for channel in CHANNELS}
    turns = no_inputs = 0
    for trial in trials:
        inputs = _inputs(trial)
        no_inputs += not inputs
        for turn_input in inputs:
            turns += 1
            for channel in CHANNELS:
                if channel == "context" and turn_input.turn != 1:
                    continue
                counts[channel][_source(turn_input, channel) or "none"] += 1
    return {
        "turns": turns,
        "trials_without_turn_inputs": no_inputs,
        **{c: {k: counts[c][k] for k in ("perceived", "authored", "none")} for c in CHANNELS},
    }


def speech_quality(trials: Iterable[TrialRecord], bank: Bank | None) -> dict:
    """Word error rate of every perceived utterance against the authored one."""
    rows: list[dict[str, Any]] = []
    missing = 0
    for trial in trials:
        scenario = _scenario(bank, trial)
        for turn_input in _inputs(trial):
            if turn_input.speech_source != "perceived":
                continue
            authored = _authored(scenario, turn_input.turn, "speech")
            if authored is None:
                missing += 1
                continue
            rows.append(
                {
                    "scenario_id": trial.scenario_id,
                    "trial": trial.trial,
                    "turn": turn_input.turn,
                    "wer": word_error_rate(authored, turn_input.speech),
                    "authored": authored,
                    "perceived": turn_input.speech,
                }
            )
    worst = sorted(rows, key=lambda r: (-r["wer"], r["scenario_id"], r["trial"], r["turn"]))[:WORST]
    return {
        **_summary([r["wer"] for r in rows]),
        "no_authored_text": missing,
        "measure": "word error rate: (substitutions + deletions + insertions) / authored words, "
        "lower-cased words, punctuation ignored",
        "worst": worst,
        "rows": rows,
    }


def camera_quality(trials: Iterable[TrialRecord], bank: Bank | None) -> dict:
    """Perceived camera and context blocks against the authored block of the same turn."""
    rows: list[dict[str, Any]] = []
    missing = 0
    for trial in trials:
        scenario = _scenario(bank, trial)
        for turn_input in _inputs(trial):
            for channel, block in (("camera", turn_input.camera_block), ("context", turn_input.context_block)):
                if _source(turn_input, channel) != "perceived" or not block:
                    continue
                if scenario is None:
                    missing += 1
                    continue
                authored = _authored(scenario, turn_input.turn, channel)
                new = [n for n in object_nouns_in(block) if n not in object_nouns_in(authored)]
                rows.append(
                    {
                        "scenario_id": trial.scenario_id,
                        "trial": trial.trial,
                        "turn": turn_input.turn,
                        "channel": channel,
                        "authored": authored,
                        "perceived": block,
                        "new_nouns": new,
                        "similarity": similarity(authored, block) if authored else None,
                    }
                )
    sims = [r["similarity"] for r in rows if r["similarity"] is not None]
    named = [r for r in rows if r["new_nouns"]]
    nouns = Counter(n for r in named for n in r["new_nouns"])
    return {
        "n": len(rows),
        "no_bank_scenario": missing,
        "no_authored_block": sum(r["authored"] is None for r in rows),
        "with_new_object_nouns": len(named),
        "new_object_noun_rate": len(named) / len(rows) if rows else None,
        "new_nouns": dict(nouns.most_common()),
        "similarity": {**_summary(sims), "measure": SIMILARITY_MEASURE},
        "least_similar": sorted(
            (r for r in rows if r["similarity"] is not None),
            key=lambda r: (r["similarity"], r["scenario_id"], r["turn"]),
        )[:5],
        "rows": rows,
    }


def _scenario(bank: Bank | None, trial: TrialRecord) -> Scenario | None:
    if bank is None:
        return None
    try:
        return bank.get(trial.scenario_id)
    except KeyError:
        return None


def _perceived(trial: TrialRecord | None, channels: Sequence[str]) -> list[int]:
    if trial is None:
        return []
    return [i.turn for i in _inputs(trial) if any(_source(i, c) == "perceived" for c in channels)]


def attribute(pairs: Sequence[tuple[TrialRecord, TrialRecord]]) -> dict:
    """Each flip with the channels perceived on Turns 1-2 (in either run) and its category."""
    flips = []
    for x, y in pairs:
        if bool(x.passed) == bool(y.passed):
            continue
        speech = sorted(set(_perceived(x, ("speech",)) + _perceived(y, ("speech",))))
        scene = sorted(set(_perceived(x, ("camera", "context")) + _perceived(y, ("camera", "context"))))
        if not _inputs(x) and not _inputs(y):
            category = "unknown"
        else:
            category = "both" if speech and scene else "speech" if speech else "scene" if scene else "neither"
        flips.append(
            {
                "scenario_id": x.scenario_id,
                "trial": x.trial,
                "cue_type": x.cue_type,
                "target_context": x.target_context,
                "direction": "A pass, B fail" if x.passed else "A fail, B pass",
                "label_a": x.turn_2_label,
                "label_b": y.turn_2_label,
                "speech_perceived_turns": speech,
                "scene_perceived_turns": scene,
                "category": category,
            }
        )
    counts = Counter(f["category"] for f in flips)
    return {"flips": flips, "counts": {c: counts[c] for c in ATTRIBUTION}, "total": len(flips)}


def latency(trials: Iterable[TrialRecord]) -> dict:
    """p50/p95 of each stage over the played Turns 1-2 that recorded it."""
    values: dict[str, list[float]] = {name: [] for name, _ in LATENCY_STAGES}
    for trial in trials:
        for result in trial.turns:
            if result.turn not in TURNS:
                continue
            timings, metrics = result.input.timings, result.metrics
            if isinstance(timings.get("asr_decode_s"), (int, float)):
                values["asr"].append(float(timings["asr_decode_s"]))
            stage = {
                name: getattr(metrics, name)
                for name in ("transcript_final", "camera_block", "first_token", "reply_done")
            }
            for name, value in stage.items():
                if isinstance(value, (int, float)):
                    values[name].append(float(value))
            described = "perceived" in (result.input.camera_source, result.input.context_source)
            if described and all(isinstance(stage[k], (int, float)) for k in ("transcript_final", "camera_block")):
                values["describer"].append(max(0.0, stage["camera_block"] - stage["transcript_final"]))
    return {name: {"stage": text, **percentiles(values[name])} for name, text in LATENCY_STAGES}


def run_channels(trials: Sequence[TrialRecord], bank: Bank | None) -> dict:
    return {
        "provenance": provenance(trials),
        "speech": speech_quality(trials, bank),
        "camera": camera_quality(trials, bank),
        "latency": latency(trials),
    }
