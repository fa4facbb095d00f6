"""The `Judge` seam: label one response as current, prior, clarify or abstain."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from core.candidate import Usage
from core.scenario import Scenario

LABELS = ("current", "prior", "clarify", "abstain")


@dataclass(frozen=True, kw_only=True)
class JudgeCase:
    """What a judge is asked about: one response of one turn of one scenario."""

    scenario: Scenario
    turn: int  # 2, or 3 for the response after the repair anchor
    user_message: str  # the user message of that turn exactly as sent
    response: str
    # the rest of the conversation as it was sent (perceived or stripped text
    # under --via stream or --no-camera); None means the scenario's authored text
    turn_1_speech: str | None = None
    turn_2_message: str | None = None  # read when grading Turn 3
    context_sent: bool | None = None  # a pre-conversation camera message went first


@dataclass(frozen=True, kw_only=True)
class Verdict:
    label: str | None  # one of LABELS, or None when unscored
    rationale: str
    judge: str  # the judge model id, or an offline judge's kind name (benchmark.judges.kinds)
    unscored_reason: str | None = None
    prompt: str = ""  # the rendered prompt (empty for an offline judge)
    raw: str = ""  # the judge's raw reply text
    cached: bool = False  # the judge model's reply came from the response cache
    usage: Usage | None = None  # the judge model's tokens over its attempts; None: no model was asked (offline)

    @property
    def scored(self) -> bool:
        return self.label is not None


class Judge(Protocol):
    name: str  # the judge model id, or an offline judge's kind name (benchmark.judges.kinds)
    family: str  # "openai", "gemini", "claude", ..., or an offline judge's kind name

    async def label(self, case: JudgeCase) -> Verdict: ...
