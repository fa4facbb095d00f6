"""The blocks of summary.json that `benchmark.scoring.summary_view.RunSummary` holds as typed records: the
counts, the scores per condition, latency, perception, the code signals, the judges' agreement, the
faults and the human check; and the readers that take a JSON value as the type a field wants (a key
that is missing or holds another type reads as None, 0 or empty: nothing here raises on a summary)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def as_text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_count(value: Any) -> int:
    return as_int(value) or 0


def as_number(value: Any) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def as_shown(value: Any) -> int | str:
    """A count the readers only show: an integer as it is, anything else as its text (a crafted summary's
    value is still shown, escaped by the page, not silently made 0)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else str(value)


def as_dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def as_counts(value: Any) -> dict[str, int]:
    """A `{name: count}` object; a count that is not an integer reads as 0."""
    return {str(k): as_count(v) for k, v in as_dict(value).items()}


def as_texts(value: Any) -> tuple[str, ...] | None:
    """A list of strings as a tuple; None when it is not a list (a list's other items are left out)."""
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else None


@dataclass(frozen=True, kw_only=True)
class Proportion:
    """A `{rate, k, n, ci_low, ci_high}` cell, and a repair rate's counts beside it."""

    rate: float | None = None
    k: int | str = 0  # shown only (`as_shown`)
    n: int | str = 0
    ci_low: float | None = None
    ci_high: float | None = None
    turn_2_misses: int = 0  # the repair rate's: Turn 2 misses, their Turn 3 unscored, their repair not sent
    turn_3_unscored: int = 0
    not_attempted: int = 0

    @classmethod
    def from_json(cls, data: Any) -> Proportion:
        data = as_dict(data)
        return cls(
            rate=as_number(data.get("rate")),
            k=as_shown(data.get("k", 0)),
            n=as_shown(data.get("n", 0)),
            ci_low=as_number(data.get("ci_low")),
            ci_high=as_number(data.get("ci_high")),
            turn_2_misses=as_count(data.get("turn_2_misses")),
            turn_3_unscored=as_count(data.get("turn_3_unscored")),
            not_attempted=as_count(data.get("not_attempted")),
        )


@dataclass(frozen=True, kw_only=True)
class ConditionResult:
    """One condition's scores (summary.json `conditions`); `per_class` holds the proportion cells as written."""

    balanced_accuracy: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    ci_method: str | None = None  # `bootstrap` or `wilson`; older summaries (no key): `bootstrap`
    per_class: dict[str, dict] = field(default_factory=dict)
    repair_rate: Proportion = field(default_factory=Proportion)
    scored: int = 0

    @classmethod
    def from_json(cls, data: Any) -> ConditionResult:
        data = as_dict(data)
        return cls(
            balanced_accuracy=as_number(data.get("balanced_accuracy")),
            ci_low=as_number(data.get("ci_low")),
            ci_high=as_number(data.get("ci_high")),
            ci_method=as_text(data.get("ci_method", "bootstrap")),
            per_class=as_dict(data.get("per_class")),
            repair_rate=Proportion.from_json(data.get("repair_rate")),
            scored=as_count(data.get("scored")),
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
        data = as_dict(data)
        return cls(
            trials=as_count(data.get("trials")),
            scored=as_count(data.get("scored")),
            unscored=as_count(data.get("unscored")),
            errored=as_count(data.get("errored")),
            unscored_reasons=as_dict(data.get("unscored_reasons")),
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
        data = as_dict(data)
        return cls(
            trials=as_count(data.get("trials")),
            scored=as_count(data.get("scored")),
            turn_2_unscored=as_count(data.get("turn_2_unscored")),
            errored=as_count(data.get("errored")),
            turn_3_attempted=as_count(data.get("turn_3_attempted")),
            turn_3_unscored=as_count(data.get("turn_3_unscored")),
            superseded_records=as_count(data.get("superseded_records")),
            by_condition={str(k): ConditionCounts.from_json(v) for k, v in as_dict(data.get("by_condition")).items()},
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
        data = as_dict(data)
        return cls(p50=as_number(data.get("p50")), p95=as_number(data.get("p95")), n=as_count(data.get("n")))


LATENCY_KEYS = ("first_token_s", "first_audio_s", "first_voice_s", "reply_done_s")


@dataclass(frozen=True, kw_only=True)
class Latency:
    """summary.json `latency`: each stage's percentiles (absent from older summaries: not in `stages`)."""

    measured_from: str | None = None
    stages: dict[str, Percentiles] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Any) -> Latency:
        data = as_dict(data)
        return cls(
            measured_from=as_text(data.get("measured_from")),
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
    """summary.json `perception` (a stream run's): where each channel's content came from, the camera
    turns per frame source (`frames`, as written; None when the summary has no count), the stage
    latencies and the word error rate."""

    turns: int = 0
    sources: dict[str, dict] = field(default_factory=dict)
    stages_s: dict[str, Percentiles] = field(default_factory=dict)
    speech_wer: WordErrorRate | None = None
    frames: dict | None = None

    @classmethod
    def from_json(cls, data: Any) -> Perception | None:
        if not data or not isinstance(data, dict):
            return None
        wer = data.get("speech_wer")
        return cls(
            turns=as_count(data.get("turns")),
            sources={str(k): as_dict(v) for k, v in as_dict(data.get("sources")).items()},
            stages_s={str(k): Percentiles.from_json(v) for k, v in as_dict(data.get("stages_s")).items()},
            speech_wer=WordErrorRate(
                mean=as_number(wer.get("mean")), median=as_number(wer.get("median")), n=as_count(wer.get("n"))
            )
            if isinstance(wer, dict) and wer
            else None,
            frames=data["frames"] if isinstance(data.get("frames"), dict) else None,
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
        data = as_dict(data)
        return cls(
            n=as_count(data.get("n")),
            disagree=as_count(data.get("disagree")),
            rate=as_number(data.get("rate")),
            by_scenario=as_dict(data.get("by_scenario")),
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
            agreement=as_number(data.get("agreement")),
            kappa=as_number(data.get("kappa")),
            n=as_count(data.get("n")),
        )


@dataclass(frozen=True, kw_only=True)
class Faults:
    """summary.json `faults` (`benchmark.faults.fault_summary`): every planned cell by what became of it."""

    planned: int = 0
    recorded: int = 0
    not_run: int = 0
    ok: int = 0
    counted: int = 0  # the API's faults and ours (`benchmark.faults.COUNTED`)
    by_fault: dict[str, int] = field(default_factory=dict)
    judge_unscored_reasons: dict[str, int] = field(default_factory=dict)
    examples: dict[str, str] = field(default_factory=dict)  # category -> the first cell's error, or why unscored

    @classmethod
    def from_json(cls, data: Any) -> Faults | None:
        """None for a summary written before faults were counted."""
        if not data or not isinstance(data, dict):
            return None
        return cls(
            planned=as_count(data.get("planned")),
            recorded=as_count(data.get("recorded")),
            not_run=as_count(data.get("not_run")),
            ok=as_count(data.get("ok")),
            counted=as_count(data.get("counted")),
            by_fault=as_counts(data.get("by_fault")),
            judge_unscored_reasons=as_counts(data.get("judge_unscored_reasons")),
            examples={str(k): str(v) for k, v in as_dict(data.get("examples")).items()},
        )


@dataclass(frozen=True, kw_only=True)
class HumanCheck:
    """summary.json `human_check` (`benchmark.report.human_check.read_human_check`): the run's judge
    against people's labels, or that it was not checked (`checked` False)."""

    checked: bool = False
    what: str = "turn2"  # the kind of item: `turn2`, or a proactive run's `remarks`
    human_labels: int = 0
    people: int = 0
    judge: str = ""
    n: int = 0
    kappa: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    ci_method: str | None = None
    enough: bool = True  # `wearsim agreement`'s verdict found enough items to say
    sample: str | None = None  # `random`, or `disagreements` (the judges' hard items first)

    @classmethod
    def from_json(cls, data: Any) -> HumanCheck:
        data = as_dict(data)
        return cls(
            checked=bool(data.get("checked")),
            what=as_text(data.get("what")) or "turn2",
            human_labels=as_count(data.get("human_labels")),
            people=as_count(data.get("people")),
            judge=str(data.get("judge", "")),
            n=as_count(data.get("n")),
            kappa=as_number(data.get("kappa")),
            ci_low=as_number(data.get("ci_low")),
            ci_high=as_number(data.get("ci_high")),
            ci_method=as_text(data.get("ci_method")),
            enough=bool(data.get("enough", True)),
            sample=as_text(data.get("sample")),
        )
