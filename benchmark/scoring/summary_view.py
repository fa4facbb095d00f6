"""summary.json and its manifest read as typed values: `RunSummary.from_json(summary)`,
`RunManifest.from_json(manifest)`.

`benchmark.scoring.summary.build_summary` writes the JSON (docs/schema.md pins it); these are how
findings.md, the viewer and `wearsim compare` read it back. They tolerate older and partial files: a
key that is missing, or holds a value of another type than today's writer puts there, reads as None
(or 0, or empty); nothing here raises on a summary's content. Each view keeps its JSON (`raw`) for the
readers that list every key (findings.md's manifest table) or hand a block on as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _count(value: Any) -> int:
    return _int(value) or 0


def _number(value: Any) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _shown(value: Any) -> int | str:
    """A count the readers only show: an integer as it is, anything else as its text (a crafted summary's
    value is still shown, escaped by the page, not silently made 0)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> tuple[str, ...] | None:
    """A list of strings as a tuple; None when it is not a list (a list's other items are left out)."""
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else None


@dataclass(frozen=True, kw_only=True)
class RunManifest:
    """The fields of manifest.json (`benchmark.run.manifest.build_manifest`) the readers use; `raw` is the
    whole manifest as written."""

    candidate_model: str | None = None
    candidate_endpoint: str | None = None  # host (and port) of a custom endpoint; None: the provider's own
    judge_family: str | None = None
    judge_model: str | None = None
    judge_endpoint: str | None = None
    judge_family_resolution: str | None = None
    via: str | None = None
    repair_style: str | None = None
    describer: str | None = None
    synthetic_frames: bool = False
    pictograph_frames: bool = False
    impairment_seed: int | None = None
    scenario_ids: tuple[str, ...] | None = None  # None: not recorded
    trials: int | None = None
    conditions: tuple[str, ...] | None = None
    ranking_condition: str | None = None
    frame_policies: tuple[str, ...] = ()
    proactive: tuple[str, ...] = ()
    bank_source: str | None = None
    raw: dict = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Any) -> RunManifest:
        data = _dict(data)
        return cls(
            candidate_model=_str(data.get("candidate_model")),
            candidate_endpoint=_str(data.get("candidate_endpoint")),
            judge_family=_str(data.get("judge_family")),
            judge_model=_str(data.get("judge_model")),
            judge_endpoint=_str(data.get("judge_endpoint")),
            judge_family_resolution=_str(data.get("judge_family_resolution")),
            via=_str(data.get("via")),
            repair_style=_str(data.get("repair_style")),
            describer=_str(data.get("describer")),
            synthetic_frames=bool(data.get("synthetic_frames")),
            pictograph_frames=bool(data.get("pictograph_frames")),
            impairment_seed=_int(data.get("impairment_seed")),
            scenario_ids=_strings(data.get("scenario_ids")),
            trials=_int(data.get("trials")),
            conditions=_strings(data.get("conditions")),
            ranking_condition=_str(data.get("ranking_condition")),
            frame_policies=_strings(data.get("frame_policies")) or (),
            proactive=_strings(data.get("proactive")) or (),
            bank_source=_str(data.get("bank_source")),
            raw=data,
        )

    @classmethod
    def of(cls, manifest: RunManifest | dict | None) -> RunManifest:
        """`manifest` typed: a RunManifest as it is, a manifest.json dict read, None as an empty manifest."""
        return manifest if isinstance(manifest, RunManifest) else cls.from_json(manifest)


@dataclass(frozen=True, kw_only=True)
class Primary:
    """The headline: balanced Turn 2 accuracy of the ranking condition (summary.json `primary`)."""

    balanced_accuracy: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    interval_method: str | None = None  # `bootstrap` or `wilson`; None with nothing scored (or not recorded)
    subset: str | None = None
    condition: str = ""
    condition_reason: str = ""
    classes: tuple[str, ...] = ()
    n: int = 0
    scenarios: int = 0
    raw: dict = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Any) -> Primary:
        data = _dict(data)
        return cls(
            balanced_accuracy=_number(data.get("balanced_accuracy")),
            ci_low=_number(data.get("ci_low")),
            ci_high=_number(data.get("ci_high")),
            interval_method=_str(data.get("interval_method")),
            subset=_str(data.get("subset")),
            condition=_str(data.get("condition")) or "",
            condition_reason=_str(data.get("condition_reason")) or "",
            classes=_strings(data.get("classes")) or (),
            n=_count(data.get("n")),
            scenarios=_count(data.get("scenarios")),
            raw=data,
        )


@dataclass(frozen=True, kw_only=True)
class Proportion:
    """A `{rate, k, n, ci_low, ci_high}` cell, and a repair rate's counts beside it."""

    rate: float | None = None
    k: int | str = 0  # shown only (`_shown`)
    n: int | str = 0
    ci_low: float | None = None
    ci_high: float | None = None
    turn_2_misses: int = 0  # the repair rate's: Turn 2 misses, their Turn 3 unscored, their repair not sent
    turn_3_unscored: int = 0
    not_attempted: int = 0

    @classmethod
    def from_json(cls, data: Any) -> Proportion:
        data = _dict(data)
        return cls(
            rate=_number(data.get("rate")),
            k=_shown(data.get("k", 0)),
            n=_shown(data.get("n", 0)),
            ci_low=_number(data.get("ci_low")),
            ci_high=_number(data.get("ci_high")),
            turn_2_misses=_count(data.get("turn_2_misses")),
            turn_3_unscored=_count(data.get("turn_3_unscored")),
            not_attempted=_count(data.get("not_attempted")),
        )


@dataclass(frozen=True, kw_only=True)
class ConditionResult:
    """One condition's scores (summary.json `conditions`); `per_class` holds the proportion cells as written."""

    balanced_accuracy: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    ci_method: str | None = None
    per_class: dict[str, dict] = field(default_factory=dict)
    repair_rate: Proportion = field(default_factory=Proportion)
    scored: int = 0

    @classmethod
    def from_json(cls, data: Any) -> ConditionResult:
        data = _dict(data)
        return cls(
            balanced_accuracy=_number(data.get("balanced_accuracy")),
            ci_low=_number(data.get("ci_low")),
            ci_high=_number(data.get("ci_high")),
            ci_method=_str(data.get("ci_method")),
            per_class=_dict(data.get("per_class")),
            repair_rate=Proportion.from_json(data.get("repair_rate")),
            scored=_count(data.get("scored")),
        )


@dataclass(frozen=True, kw_only=True)
class ConditionCounts:
    """The trials of one condition by outcome (summary.json `counts.by_condition`)."""

    trials: int = 0
    scored: int = 0
    unscored: int = 0
    errored: int = 0
    unscored_reasons: dict[str, int] = field(default_factory=dict)
    recorded: bool = False  # the condition has a row (else every count is 0)

    @classmethod
    def from_json(cls, data: Any) -> ConditionCounts:
        data = _dict(data)
        return cls(
            trials=_count(data.get("trials")),
            scored=_count(data.get("scored")),
            unscored=_count(data.get("unscored")),
            errored=_count(data.get("errored")),
            unscored_reasons=_dict(data.get("unscored_reasons")),
            recorded=bool(data),
        )


@dataclass(frozen=True, kw_only=True)
class Counts:
    trials: int = 0
    scored: int = 0
    turn_2_unscored: int = 0
    errored: int = 0
    turn_3_attempted: int = 0
    turn_3_unscored: int = 0
    superseded_records: int = 0
    by_condition: dict[str, ConditionCounts] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Any) -> Counts:
        data = _dict(data)
        return cls(
            trials=_count(data.get("trials")),
            scored=_count(data.get("scored")),
            turn_2_unscored=_count(data.get("turn_2_unscored")),
            errored=_count(data.get("errored")),
            turn_3_attempted=_count(data.get("turn_3_attempted")),
            turn_3_unscored=_count(data.get("turn_3_unscored")),
            superseded_records=_count(data.get("superseded_records")),
            by_condition={str(k): ConditionCounts.from_json(v) for k, v in _dict(data.get("by_condition")).items()},
        )

    def of(self, condition: str) -> ConditionCounts:
        return self.by_condition.get(condition) or ConditionCounts()


@dataclass(frozen=True, kw_only=True)
class Percentiles:
    p50: float | None = None
    p95: float | None = None
    n: int = 0

    @classmethod
    def from_json(cls, data: Any) -> Percentiles:
        data = _dict(data)
        return cls(p50=_number(data.get("p50")), p95=_number(data.get("p95")), n=_count(data.get("n")))


LATENCY_KEYS = ("first_token_s", "first_audio_s", "first_voice_s", "reply_done_s")


@dataclass(frozen=True, kw_only=True)
class Latency:
    """summary.json `latency`: each stage's percentiles (absent from older summaries: not in `stages`)."""

    measured_from: str | None = None
    stages: dict[str, Percentiles] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Any) -> Latency:
        data = _dict(data)
        return cls(
            measured_from=_str(data.get("measured_from")),
            stages={k: Percentiles.from_json(data[k]) for k in LATENCY_KEYS if isinstance(data.get(k), dict)},
        )

    def stage(self, key: str) -> Percentiles:
        return self.stages.get(key) or Percentiles()


@dataclass(frozen=True, kw_only=True)
class WordErrorRate:
    mean: float | None = None
    median: float | None = None
    n: int = 0


@dataclass(frozen=True, kw_only=True)
class Perception:
    """summary.json `perception` (a stream run's): where each channel's content came from, the stage
    latencies and the word error rate; `frames` (the camera turns per frame source) stays in `raw`."""

    turns: int = 0
    sources: dict[str, dict] = field(default_factory=dict)
    stages_s: dict[str, Percentiles] = field(default_factory=dict)
    speech_wer: WordErrorRate | None = None
    raw: dict = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Any) -> Perception | None:
        if not data or not isinstance(data, dict):
            return None
        wer = data.get("speech_wer")
        return cls(
            turns=_count(data.get("turns")),
            sources={str(k): _dict(v) for k, v in _dict(data.get("sources")).items()},
            stages_s={str(k): Percentiles.from_json(v) for k, v in _dict(data.get("stages_s")).items()},
            speech_wer=WordErrorRate(
                mean=_number(wer.get("mean")), median=_number(wer.get("median")), n=_count(wer.get("n"))
            )
            if isinstance(wer, dict) and wer
            else None,
            raw=data,
        )


@dataclass(frozen=True, kw_only=True)
class CodeSignals:
    """summary.json `code_signal_disagreement`: the code-signal label against the judge's."""

    n: int = 0
    disagree: int = 0
    rate: float | None = None
    by_scenario: dict[str, dict] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Any) -> CodeSignals:
        data = _dict(data)
        return cls(
            n=_count(data.get("n")),
            disagree=_count(data.get("disagree")),
            rate=_number(data.get("rate")),
            by_scenario=_dict(data.get("by_scenario")),
        )


@dataclass(frozen=True, kw_only=True)
class JudgeAgreement:
    between: str = ""
    agreement: float | None = None
    kappa: float | None = None
    n: int = 0

    @classmethod
    def from_json(cls, data: Any) -> JudgeAgreement | None:
        if not data or not isinstance(data, dict):
            return None
        return cls(
            between=str(data.get("between", "")),
            agreement=_number(data.get("agreement")),
            kappa=_number(data.get("kappa")),
            n=_count(data.get("n")),
        )


@dataclass(frozen=True, kw_only=True)
class RunSummary:
    """summary.json as the readers see it. The sweeps (`by_*`), `confusion`, `scenario_matrix`, `cost`,
    `proactive` and the rest stay dicts as written (their readers go through them cell by cell); `raw` is
    the whole summary, for the helpers that take it as it is."""

    summary_schema: int | None = None
    manifest: RunManifest = field(default_factory=RunManifest)
    primary: Primary = field(default_factory=Primary)
    conditions: dict[str, ConditionResult] = field(default_factory=dict)
    counts: Counts = field(default_factory=Counts)
    latency: Latency = field(default_factory=Latency)
    perception: Perception | None = None
    code_signals: CodeSignals = field(default_factory=CodeSignals)
    judge_agreement: JudgeAgreement | None = None
    by_cue_type: dict[str, dict] = field(default_factory=dict)
    by_difficulty: dict[str, dict] = field(default_factory=dict)
    by_staleness: dict[str, dict] = field(default_factory=dict)
    by_frame_policy: dict[str, dict] = field(default_factory=dict)
    by_impairment: dict[str, dict] = field(default_factory=dict)
    by_subset: dict[str, dict] = field(default_factory=dict)
    confusion: dict[str, dict] = field(default_factory=dict)
    scenario_matrix: dict[str, dict] = field(default_factory=dict)
    cost: dict = field(default_factory=dict)
    proactive: dict = field(default_factory=dict)
    raw: dict = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Any) -> RunSummary:
        data = _dict(data)
        return cls(
            summary_schema=_int(data.get("summary_schema")),
            manifest=RunManifest.from_json(data.get("manifest")),
            primary=Primary.from_json(data.get("primary")),
            conditions={str(k): ConditionResult.from_json(v) for k, v in _dict(data.get("conditions")).items()},
            counts=Counts.from_json(data.get("counts")),
            latency=Latency.from_json(data.get("latency")),
            perception=Perception.from_json(data.get("perception")),
            code_signals=CodeSignals.from_json(data.get("code_signal_disagreement")),
            judge_agreement=JudgeAgreement.from_json(data.get("judge_agreement")),
            **{
                name: _dict(data.get(name))
                for name in (
                    "by_cue_type",
                    "by_difficulty",
                    "by_staleness",
                    "by_frame_policy",
                    "by_impairment",
                    "by_subset",
                    "confusion",
                    "scenario_matrix",
                    "cost",
                    "proactive",
                )
            },
            raw=data,
        )

    @classmethod
    def of(cls, summary: RunSummary | dict) -> RunSummary:
        """`summary` typed: a RunSummary as it is, a summary.json dict read."""
        return summary if isinstance(summary, RunSummary) else cls.from_json(summary)
