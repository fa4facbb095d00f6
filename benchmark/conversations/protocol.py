"""The Turn 1/2/3 protocol: the `Conversation` seam and one trial.

The message strings are built in `core.records` only. A context image
goes first as its own user message; Turn 3 is the repair anchor alone, sent
only after a Turn 2 miss.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, cast

from core.candidate import Candidate, GenerationConfig, Message, TranscriptionUsage, Usage
from core.judge import Judge, Verdict
from core.records import TrialRecord, TurnResult, authored_turn_input, judge_case
from core.scenario import Condition, Scenario


class Conversation(Protocol):
    messages: list[Message]

    async def send(self, turn: int) -> TurnResult:
        """Play scenario turn 1 or 2, or 3 (the repair anchor), and return the result."""
        ...

    async def aclose(self) -> None:
        """The trial is over: release what the conversation holds (a live session, a connection)."""
        ...


class _Closing(Protocol):
    async def aclose(self) -> None: ...


class DirectConversation:
    """The text proxy: authored camera blocks and speech, sent as chat messages.
    `owns_candidate`: the candidate is this conversation's own (a realtime API's
    live conversation) and closes with it; a shared one is closed by its opener."""

    def __init__(
        self,
        scenario: Scenario,
        condition: Condition,
        candidate: Candidate,
        config: GenerationConfig,
        *,
        camera: bool = True,
        repair_style: str = "named",
        owns_candidate: bool = False,
    ):
        authored_turn_input(scenario, 3, repair_style=repair_style)  # an unknown style fails here
        self.scenario = scenario
        self.condition = condition
        self.candidate = candidate
        self.config = config
        self.camera = camera
        self.repair_style = repair_style
        self.owns_candidate = owns_candidate
        self.messages: list[Message] = []

    async def send(self, turn: int) -> TurnResult:
        turn_input = authored_turn_input(self.scenario, turn, camera=self.camera, repair_style=self.repair_style)
        self.messages += [Message(role="user", text=text) for text in turn_input.messages()]
        reply = await self.candidate.respond(list(self.messages), self.condition.system_prompt, self.config)
        self.messages.append(Message(role="assistant", text=reply.text))
        return TurnResult(turn=turn, input=turn_input, reply=reply)

    async def aclose(self) -> None:
        if self.owns_candidate:  # an owned candidate is a realtime API's live conversation, which closes
            await cast(_Closing, self.candidate).aclose()


# told of each reply as it arrives: (role "candidate" or "judge", model id, usage, served from the cache); a
# realtime API's input transcription, billed apart, comes as role "transcription" with its own model
ReplyMeter = Callable[[str, str, "Usage | TranscriptionUsage | None", bool], None]


async def run_trial(
    conversation: Conversation,
    scenario: Scenario,
    judge: Judge,
    ranking_judge: Judge | None = None,
    on_reply: ReplyMeter | None = None,
) -> TrialRecord:
    """Turn 1, Turn 2, judge Turn 2; on a miss the repair turn and its judgement.

    Turn 2 passes when its label is the scenario's target context; Turn 3 when
    its label is the repair's target (`Scenario.repair_target`, recorded as
    `repair_target_context`). Returns the trial's record; the caller fills in
    the cell identity with `TrialRecord.replace`. An unscored Turn 2 is not a
    miss: no repair. `on_reply` hears of every candidate reply and every
    judge model's verdict as it arrives (the runner's budget).
    """
    from benchmark.judges.signals import code_signals

    meter = on_reply or (lambda *_: None)

    async def send(turn: int) -> TurnResult:
        result = await conversation.send(turn)
        meter("candidate", result.reply.model, result.reply.usage, result.reply.cached)
        if result.reply.transcription is not None:
            meter("transcription", result.reply.transcription.model, result.reply.transcription, result.reply.cached)
        return result

    async def label(by: Judge, case) -> Verdict:
        verdict = await by.label(case)
        if verdict.usage is not None:  # a model was asked (not an offline judge)
            meter("judge", verdict.judge, verdict.usage, verdict.cached)
        return verdict

    turns = [await send(1), await send(2)]
    inputs = [t.input for t in turns]
    turn_2 = turns[1]
    case = judge_case(scenario, 2, turn_2.reply.text, inputs)
    verdict_2 = await label(judge, case)
    ranking = await label(ranking_judge, case) if ranking_judge is not None else None
    missed = verdict_2.label is not None and verdict_2.label != scenario.target_context
    turn_3 = verdict_3 = None
    if missed:
        turn_3 = await send(3)
        turns.append(turn_3)
        verdict_3 = await label(judge, judge_case(scenario, 3, turn_3.reply.text, inputs + [turn_3.input]))
    return TrialRecord(
        scenario_id=scenario.scenario_id,
        condition="",
        trial=0,
        target_context=scenario.target_context,
        cue_type=scenario.cue_type,
        difficulty_tier=scenario.difficulty_tier,
        activity_domain=scenario.activity_domain,
        subset=scenario.subset,
        messages=tuple(conversation.messages),
        turns=tuple(turns),
        turn_1_response=turns[0].reply.text,
        turn_2_user_message=turn_2.input.user_message,
        turn_2_response=turn_2.reply.text,
        turn_2_judge=verdict_2,
        turn_2_code_signals=code_signals(turn_2.reply.text, scenario.answers),
        turn_2_ranking_judge=ranking,
        turn_3_repair_attempted=missed,
        turn_3_message=turn_3.input.user_message if turn_3 else None,
        turn_3_response=turn_3.reply.text if turn_3 else None,
        turn_3_judge=verdict_3,
        repair_target_context=scenario.repair_target,
    )
