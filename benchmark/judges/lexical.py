"""The lexical judge: the offline judge, which labels a reply without any model server.

`--judge-family lexical` (and the fallback when no judge family has credentials) opens this
judge. Since issue 46 it is a small learned model (`benchmark.judges.offline`: a multinomial
logistic regression over the rules' reading and the reply's structure, fitted to real replies)
rather than the hand-written rules alone (`benchmark.judges.rules`); its name stays `lexical`.
"""

from __future__ import annotations

from benchmark.judges.evidence import camera_block
from benchmark.judges.kinds import LEXICAL
from benchmark.judges.offline import offline_decision
from benchmark.judges.rules import scenario_frames
from core.judge import JudgeCase, Verdict


class LexicalJudge:
    """`Judge` that needs no model and no credentials: the offline judge's decision as a verdict."""

    name = family = LEXICAL.name  # its row of the judge table (`benchmark.judges.kinds`)

    async def label(self, case: JudgeCase) -> Verdict:
        return self.label_now(case)

    def label_now(self, case: JudgeCase) -> Verdict:
        camera = camera_block(case.user_message)
        user = case.user_message.rpartition("]\n")[2] if camera is not None else case.user_message
        decision = offline_decision(
            case.response, case.scenario.answers, camera=camera, frames=scenario_frames(case.scenario), user=user
        )
        if decision.label is None:
            return Verdict(label=None, rationale=decision.reason, judge=self.name, unscored_reason=decision.reason)
        return Verdict(label=decision.label, rationale=decision.reason, judge=self.name)
