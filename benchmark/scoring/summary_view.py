"""summary.json and its manifest read as typed values: `RunSummary.from_json(summary)`,
`RunManifest.from_json(manifest)`.

`benchmark.scoring.summary.build_summary` writes the JSON (docs/schema.md pins it); these are how
findings.md, the plots, the viewer and `wearsim compare` read it back, built once per summary. They
tolerate older and partial files: a key that is missing, or holds a value of another type than today's
writer puts there, reads as None (or 0, or empty); nothing here raises on a summary's content. The
blocks' records are in `summary_parts`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchmark.cost.prices import PriceTable, price_table, table_from_manifest
from benchmark.scoring.summary_parts import (
    CodeSignals,
    ConditionResult,
    Counts,
    Faults,
    HumanCheck,
    JudgeAgreement,
    Latency,
    Perception,
    as_count,
    as_dict,
    as_int,
    as_number,
    as_text,
    as_texts,
)
from benchmark.shards import planned_cells


@dataclass(frozen=True, kw_only=True)
class ManifestField:
    """One key of the manifest as written, for findings.md's Manifest table: a JSON scalar as it is; a
    dict or a list (`nested`) only pointed to."""

    key: str
    value: str | int | float | bool | None = None
    nested: bool = False


def _fields(data: dict) -> tuple[ManifestField, ...]:
    return tuple(
        ManifestField(key=str(key), nested=True)
        if isinstance(value, (dict, list))
        else ManifestField(key=str(key), value=value)
        for key, value in data.items()
    )


@dataclass(frozen=True, kw_only=True)
class RunManifest:
    """The fields of manifest.json (`benchmark.run.manifest.build_manifest`) the readers use; `fields`:
    every key as written, in order; `planned`: the cells it planned (`benchmark.shards.planned_cells`, a
    shard's own; None when it does not say); `price_table`: the prices it recorded, else the shipped table."""

    candidate_model: str | None = None
    candidate_endpoint: str | None = None  # host (and port) of a custom endpoint; None: the provider's own
    judge_family: str | None = None
    judge_model: str | None = None
    judge_endpoint: str | None = None
    judge_family_resolution: str | None = None
    judge_prompt_version: str | None = None
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
    frame_policies: tuple[str, ...] | None = None  # None: not recorded (the server's default)
    proactive: tuple[str, ...] | None = None  # the proactive strategies; None: not recorded
    bank_source: str | None = None
    wearsim_version: str | None = None
    benchmark_version: str | None = None  # the bank's version
    bank_lock_sha256: str | None = None
    timestamp_utc: str | None = None
    runner_git_commit: str | None = None
    fields: tuple[ManifestField, ...] = ()
    planned: tuple[tuple, ...] | None = None
    price_table: PriceTable = field(default_factory=price_table, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Any) -> RunManifest:
        data = as_dict(data)
        planned = planned_cells(data)
        return cls(
            candidate_model=as_text(data.get("candidate_model")),
            candidate_endpoint=as_text(data.get("candidate_endpoint")),
            judge_family=as_text(data.get("judge_family")),
            judge_model=as_text(data.get("judge_model")),
            judge_endpoint=as_text(data.get("judge_endpoint")),
            judge_family_resolution=as_text(data.get("judge_family_resolution")),
            judge_prompt_version=as_text(data.get("judge_prompt_version")),
            via=as_text(data.get("via")),
            repair_style=as_text(data.get("repair_style")),
            describer=as_text(data.get("describer")),
            synthetic_frames=bool(data.get("synthetic_frames")),
            pictograph_frames=bool(data.get("pictograph_frames")),
            impairment_seed=as_int(data.get("impairment_seed")),
            scenario_ids=as_texts(data.get("scenario_ids")),
            trials=as_int(data.get("trials")),
            conditions=as_texts(data.get("conditions")),
            ranking_condition=as_text(data.get("ranking_condition")),
            frame_policies=as_texts(data.get("frame_policies")),
            proactive=as_texts(data.get("proactive")),
            bank_source=as_text(data.get("bank_source")),
            wearsim_version=as_text(data.get("wearsim_version")),
            benchmark_version=as_text(data.get("benchmark_version")),
            bank_lock_sha256=as_text(data.get("bank_lock_sha256")),
            timestamp_utc=as_text(data.get("timestamp_utc")),
            runner_git_commit=as_text(data.get("runner_git_commit")),
            fields=_fields(data),
            planned=None if planned is None else tuple(planned),
            price_table=table_from_manifest(data)[0],
        )


@dataclass(frozen=True, kw_only=True)
class Bootstrap:
    """How the headline's bootstrap interval was drawn (summary.json `primary.bootstrap`)."""

    resamples: str = ""
    draws: int = 0
    seed: int = 0
    interval: str = ""

    @classmethod
    def from_json(cls, data: Any) -> Bootstrap:
        data = as_dict(data)
        return cls(
            resamples=str(data.get("resamples", "")),
            draws=as_count(data.get("draws")),
            seed=as_count(data.get("seed")),
            interval=str(data.get("interval", "")),
        )


@dataclass(frozen=True, kw_only=True)
class Primary:
    """The headline: balanced Turn 2 accuracy of the ranking condition (summary.json `primary`)."""

    balanced_accuracy: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    # `bootstrap` or `wilson`; None with nothing scored; an older summary (no key) had only the bootstrap
    interval_method: str | None = None
    subset: str | None = None
    condition: str = ""
    condition_reason: str = ""
    classes: tuple[str, ...] = ()
    n: int = 0
    scenarios: int = 0
    rule: str = ""  # how the balanced accuracy and its interval are made, in words
    bootstrap: Bootstrap = field(default_factory=Bootstrap)

    @classmethod
    def from_json(cls, data: Any) -> Primary:
        data = as_dict(data)
        return cls(
            balanced_accuracy=as_number(data.get("balanced_accuracy")),
            ci_low=as_number(data.get("ci_low")),
            ci_high=as_number(data.get("ci_high")),
            interval_method=as_text(data.get("interval_method", "bootstrap")),
            subset=as_text(data.get("subset")),
            condition=as_text(data.get("condition")) or "",
            condition_reason=as_text(data.get("condition_reason")) or "",
            classes=as_texts(data.get("classes")) or (),
            n=as_count(data.get("n")),
            scenarios=as_count(data.get("scenarios")),
            rule=str(data.get("rule", "")),
            bootstrap=Bootstrap.from_json(data.get("bootstrap")),
        )


SWEEPS = (
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


@dataclass(frozen=True, kw_only=True)
class RunSummary:
    """summary.json as the readers see it. The sweeps (`by_*`), `confusion`, `scenario_matrix`, `cost`,
    `proactive` and `blind_camera` stay dicts as written (their readers go through them cell by cell)."""

    summary_schema: int | None = None
    manifest: RunManifest = field(default_factory=RunManifest)
    primary: Primary = field(default_factory=Primary)
    conditions: dict[str, ConditionResult] = field(default_factory=dict)
    counts: Counts = field(default_factory=Counts)
    latency: Latency = field(default_factory=Latency)
    perception: Perception | None = None
    code_signals: CodeSignals = field(default_factory=CodeSignals)
    judge_agreement: JudgeAgreement | None = None
    faults: Faults | None = None  # None: a summary written before faults were counted
    human_check: HumanCheck = field(default_factory=HumanCheck)
    blind_camera: dict | None = None  # `benchmark.scoring.blind.blind_camera`'s block; None: the camera saw
    proactive_rule: str = ""  # how a proactive run's remarks are scored, in words
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

    @classmethod
    def from_json(cls, data: Any) -> RunSummary:
        data = as_dict(data)
        blind = data.get("blind_camera")
        return cls(
            summary_schema=as_int(data.get("summary_schema")),
            manifest=RunManifest.from_json(data.get("manifest")),
            primary=Primary.from_json(data.get("primary")),
            conditions={str(k): ConditionResult.from_json(v) for k, v in as_dict(data.get("conditions")).items()},
            counts=Counts.from_json(data.get("counts")),
            latency=Latency.from_json(data.get("latency")),
            perception=Perception.from_json(data.get("perception")),
            code_signals=CodeSignals.from_json(data.get("code_signal_disagreement")),
            judge_agreement=JudgeAgreement.from_json(data.get("judge_agreement")),
            faults=Faults.from_json(data.get("faults")),
            human_check=HumanCheck.from_json(data.get("human_check")),
            blind_camera=blind if isinstance(blind, dict) and blind else None,
            proactive_rule=as_text(data.get("proactive_rule")) or "",
            **{name: as_dict(data.get(name)) for name in SWEEPS},
        )
