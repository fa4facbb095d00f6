"""The lexical judge on its development set: replies in the styles capable models use.

The set lives in `tests/fixtures/judging/development/` (issue 35): replies over
the shipped bank's scenarios, each labelled by the rubric with a one-line
reason, split once at random into `tuning.jsonl` (the rules were decided
looking at these) and `locked.jsonl` (measured only, never tuned on).
`scripts/write_development_set.py` wrote both from hand-written parts.
`fresh.jsonl` holds 60 more replies written freely by hand, not from the
templates, after the rules were frozen: a check on phrasing the templates do
not have, measured and never tuned on.

The figures here are those of the independent check in issue 35: coverage is
the share of replies the judge labels; agreement and Cohen's kappa are taken
over the labelled replies only (an unscored reply is the judge declining to
judge, not a fifth label). `tests/fixtures/judging/responses.jsonl` keeps its
own convention (`scripts.judge_agreement`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from benchmark.judges.rules import lexical_decision, scenario_frames
from benchmark.stats import cohen_kappa
from core.judge import LABELS
from core.scenario import Scenario, load_bank

DEVELOPMENT_DIR = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "judging" / "development"
HALVES = ("tuning", "locked")
FRESH = "fresh"  # 60 replies written freely by hand after the rules froze: measured, never tuned on


@dataclass(frozen=True)
class DevelopmentReply:
    reply_id: str
    scenario: Scenario
    style: str
    human_label: str
    reason: str
    response: str


@dataclass(frozen=True)
class JudgedReply:
    reply: DevelopmentReply
    label: str | None  # None: unscored
    rule: str
    strength: float  # how much evidence separated the label from the others (0 when unscored)


@dataclass(frozen=True)
class DevelopmentFigures:
    total: int
    scored: int
    agreed: int
    kappa: float | None

    @property
    def coverage(self) -> float:
        return self.scored / self.total if self.total else 0.0

    @property
    def agreement(self) -> float:
        return self.agreed / self.scored if self.scored else 0.0

    def line(self) -> str:
        kappa = "undefined" if self.kappa is None else f"{self.kappa:.3f}"
        return (
            f"coverage {self.scored}/{self.total} ({self.coverage:.3f}), agreement {self.agreed}/{self.scored} "
            f"({self.agreement:.3f}), Cohen's kappa {kappa}"
        )


def load_development_half(half: str, directory: Path = DEVELOPMENT_DIR, bank=None) -> list[DevelopmentReply]:
    """The replies of one half ("tuning" or "locked", or the `FRESH` check), joined to the shipped bank."""
    if half not in (*HALVES, FRESH):
        raise ValueError(f"half must be one of {', '.join((*HALVES, FRESH))}, not {half!r}")
    path = directory / f"{half}.jsonl"
    bank = bank or load_bank()
    replies = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        raw = json.loads(line)
        where = f"{path}: line {number}"
        for field in ("id", "bank_scenario", "style", "label", "reason", "response"):
            if not isinstance(raw.get(field), str):
                raise ValueError(f"{where}: field '{field}' must be a string")
        if raw["label"] not in LABELS:
            raise ValueError(f"{where}: field 'label' must be one of {', '.join(LABELS)}")
        replies.append(
            DevelopmentReply(
                raw["id"], bank.get(raw["bank_scenario"]), raw["style"], raw["label"], raw["reason"], raw["response"]
            )
        )
    return replies


def judge_replies(replies: list[DevelopmentReply]) -> list[JudgedReply]:
    """The lexical judge's decision on each reply (without a camera block, as the hand-labelled set)."""
    judged = []
    for reply in replies:
        decision = lexical_decision(reply.response, reply.scenario.answers, frames=scenario_frames(reply.scenario))
        judged.append(JudgedReply(reply, decision.label, decision.rule, decision.strength))
    return judged


def figures(judged: list[JudgedReply], min_strength: float = 0.0) -> DevelopmentFigures:
    """Coverage, agreement and kappa when decisions weaker than `min_strength` are left unscored too."""
    kept = [j for j in judged if j.label is not None and j.strength >= min_strength]
    agreed = sum(j.label == j.reply.human_label for j in kept)
    kappa = cohen_kappa([j.reply.human_label for j in kept], [j.label for j in kept]) if kept else None
    return DevelopmentFigures(len(judged), len(kept), agreed, kappa)


def coverage_curve(judged: list[JudgedReply]) -> list[tuple[float, DevelopmentFigures]]:
    """(threshold, figures) for every distinct decision strength, loosest first: how agreement
    moves as the judge leaves more replies unscored."""
    thresholds = sorted({j.strength for j in judged if j.label is not None})
    return [(t, figures(judged, t)) for t in thresholds]
