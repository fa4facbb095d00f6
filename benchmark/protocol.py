"""The Turn 1/2/3 protocol: message strings, the `Conversation` seam and one trial.

The message format is the spec's, built in one place:
`[Camera: {image}]\\n{speech}`, the block left out when the image is null;
a context image goes first as its own user message holding only its block;
Turn 3 is the repair anchor alone, sent only after a Turn 2 miss.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from benchmark.candidates.base import Candidate, GenerationConfig, Message, Reply
from benchmark.judges.base import Judge, JudgeCase, Verdict
from benchmark.scenario import Condition, Scenario

SCHEMA_VERSION = 1
REPAIR_STYLES = ("named", "deictic")


def build_user_turn(image: str | None, speech: str) -> str:
    return f"[Camera: {image}]\n{speech}" if image else speech


def build_context_message(image: str) -> str:
    return f"[Camera: {image}]"


@dataclass(frozen=True)
class TurnResult:
    turn: int
    user_message: str  # the turn's user message as the candidate saw it
    reply: Reply
    provenance: dict = field(default_factory=dict)


class Conversation(Protocol):
    messages: list[Message]

    async def send(self, turn: int) -> TurnResult:
        """Play scenario turn 1 or 2, or 3 (the repair anchor), and return the reply."""
        ...


class DirectConversation:
    """The text proxy: authored camera blocks and speech, sent as chat messages."""

    def __init__(self, scenario: Scenario, condition: Condition, candidate: Candidate, config: GenerationConfig,
                 *, camera: bool = True, repair_style: str = "named"):
        if repair_style not in REPAIR_STYLES:
            raise ValueError(f"repair style must be one of {', '.join(REPAIR_STYLES)}, got {repair_style!r}")
        self.scenario = scenario
        self.condition = condition
        self.candidate = candidate
        self.config = config
        self.camera = camera
        self.repair_style = repair_style
        self.messages: list[Message] = []

    def _turn_text(self, turn: int) -> tuple[str | None, str]:
        s = self.scenario
        if turn == 1:
            return (s.turn_1_image if self.camera else None), s.turn_1_user
        if turn == 2:
            return (s.turn_2_image if self.camera else None), s.turn_2_user
        if turn == 3:
            return None, s.repair_anchor(self.repair_style)
        raise ValueError(f"no turn {turn}: a scenario has turns 1, 2 and 3 (the repair)")

    async def send(self, turn: int) -> TurnResult:
        image, speech = self._turn_text(turn)
        if turn == 1 and self.camera and self.scenario.context_image:
            self.messages.append(Message("user", build_context_message(self.scenario.context_image)))
        text = build_user_turn(image, speech)
        self.messages.append(Message("user", text))
        reply = await self.candidate.respond(list(self.messages), self.condition.system_prompt, self.config)
        self.messages.append(Message("assistant", reply.text))
        provenance = {
            "camera_source": "authored" if image else None,
            "speech_source": "authored",
            "camera_block": image,
            "transcript": speech,
            "metrics": {},
        }
        return TurnResult(turn, text, reply, provenance)


def _verdict_fields(prefix: str, verdict: Verdict) -> dict:
    return {
        f"{prefix}_label": verdict.label,
        f"{prefix}_rationale": verdict.rationale,
        f"{prefix}_name": verdict.judge,
        f"{prefix}_prompt": verdict.prompt,
        f"{prefix}_raw": verdict.raw,
        f"{prefix}_unscored_reason": verdict.unscored_reason,
    }


def _turn_entry(result: TurnResult) -> dict:
    usage = result.reply.usage
    return {
        "turn": result.turn,
        **{k: v for k, v in result.provenance.items() if k != "metrics"},
        "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens},
        "latency_s": round(result.reply.latency_s, 4),
        "first_token_s": None if result.reply.first_token_s is None else round(result.reply.first_token_s, 4),
        "metrics": result.provenance.get("metrics", {}),
    }


async def run_trial(conversation: Conversation, scenario: Scenario, judge: Judge,
                    ranking_judge: Judge | None = None) -> dict:
    """Turn 1, Turn 2, judge Turn 2; on a miss the repair turn and its judgement.

    Returns the trial's record fields that come from the protocol; the runner
    adds the cell identity. An unscored Turn 2 is not a miss: no repair.
    """
    from benchmark.judges.signals import code_signals

    turn_1 = await conversation.send(1)
    turn_2 = await conversation.send(2)
    verdict_2 = await judge.label(JudgeCase(scenario, 2, turn_2.user_message, turn_2.reply.text))
    passed = None if verdict_2.label is None else verdict_2.label == scenario.target_context
    record = {
        "turn_1_response": turn_1.reply.text,
        "turn_2_user_message": turn_2.user_message,
        "turn_2_response": turn_2.reply.text,
        **_verdict_fields("turn_2_judge", verdict_2),
        "turn_2_passed": passed,
        "turn_2_code_signals": code_signals(turn_2.reply.text, scenario.answers),
    }
    if ranking_judge is not None:
        ranking = await ranking_judge.label(JudgeCase(scenario, 2, turn_2.user_message, turn_2.reply.text))
        record.update(_verdict_fields("turn_2_ranking_judge", ranking))
    turns = [turn_1, turn_2]
    record["turn_3_repair_attempted"] = passed is False
    record["turn_3_response"] = None
    record["turn_3_repair_passed"] = None
    if passed is False:
        turn_3 = await conversation.send(3)
        turns.append(turn_3)
        verdict_3 = await judge.label(JudgeCase(scenario, 3, turn_3.user_message, turn_3.reply.text))
        record["turn_3_message"] = turn_3.user_message
        record["turn_3_response"] = turn_3.reply.text
        record.update(_verdict_fields("turn_3_judge", verdict_3))
        record["turn_3_repair_passed"] = None if verdict_3.label is None else verdict_3.label == scenario.target_context
    record["messages"] = [{"role": m.role, "text": m.text} for m in conversation.messages]
    record["turns"] = [_turn_entry(t) for t in turns]
    return record
