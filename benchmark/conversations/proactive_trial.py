"""One proactive trial: play the stream, judge the remarks, score them.

The counterpart of `protocol.run_trial` for the `proactive` subset. Every
candidate reply (the opening turn's, each probe's, silent ones too: a probe
costs tokens whatever it answers) and every judge model's verdict goes to
`on_reply` as it is known (the runner's budget). The outcome rule is
`benchmark.scoring.proactive`.
"""

from __future__ import annotations

from benchmark.conversations.protocol import ReplyMeter
from benchmark.scoring.proactive import judge_watching
from core.candidate import Usage
from core.judge import Judge, JudgeCase, Verdict
from core.proactive_scenario import ProactiveScenario
from core.records import TrialRecord


async def run_proactive_trial(
    conversation, scenario: ProactiveScenario, judge: Judge, on_reply: ReplyMeter | None = None
) -> TrialRecord:
    """`conversation`: a `WatchConversation` (its `watch()` plays the trial). Returns the trial's
    record; the caller fills in the cell identity with `TrialRecord.replace`."""
    meter = on_reply or (lambda *_: None)
    watched = await conversation.watch()
    for turn in watched.turns:
        meter("candidate", turn.reply.model, turn.reply.usage, turn.reply.cached)
        if turn.reply.transcription is not None:
            meter("transcription", turn.reply.transcription.model, turn.reply.transcription, False)
    for probe in watched.watching.probes:
        meter("candidate", watched.model, probe.usage or Usage(), False)  # no usage: unknown to the budget

    async def label(by: Judge, case: JudgeCase) -> Verdict:
        verdict = await by.label(case)
        if verdict.usage is not None:
            meter("judge", verdict.judge, verdict.usage, verdict.cached)
        return verdict

    heard = tuple(turn.input.speech for turn in watched.turns if turn.input.speech)
    watching = await judge_watching(scenario, watched.watching, judge, label, heard)
    opening = watched.turns[0].reply.text if watched.turns else None
    return TrialRecord(
        scenario_id=scenario.scenario_id,
        condition="",
        trial=0,
        target_context=scenario.target_context,
        cue_type=scenario.cue_type,
        difficulty_tier=scenario.difficulty_tier,
        activity_domain=scenario.activity_domain,
        subset=scenario.subset,
        messages=watched.messages,
        turns=watched.turns,
        turn_1_response=opening,
        watching=watching,
    )
