"""Semantic checks that need a model (`wearsim validate --semantic --model M`).

- Check 4, speech leakage (after VLSBench): the model reads each user speech
  turn and says whether it describes what is visible or announces the shift.
- Check 5, answerable without Turn 1 (after MMStar): the model gets the Turn 2
  camera block and speech alone; a reply the lexical rules label as the
  scenario's target context means Turn 1 was not needed, and is flagged.
"""

from __future__ import annotations

import json
import re

from benchmark.candidates.base import Candidate, GenerationConfig, Message
from benchmark.records import build_user_turn
from benchmark.scenario import Bank
from benchmark.validate import CheckResult

SPEECH_LEAK_PROMPT = (
    "A user of smart glasses said the sentence below to their assistant. Does the sentence itself describe "
    "what the camera shows (colours, shapes, the object) or announce that the scene changed (for example "
    "'now I picked up another one')? Reply with JSON only: {{\"leaks\": true|false, \"reason\": \"...\"}}.\n\n"
    "Sentence: {speech}"
)
ASSISTANT_SYSTEM = "You are a helpful assistant on smart glasses. Answer briefly."
CONFIG = GenerationConfig(temperature=0.0, max_tokens=200)


def _leaks(reply: str) -> tuple[bool | None, str]:
    match = re.search(r"\{.*\}", reply, re.DOTALL)
    if match:
        try:
            data = json.loads(match.group(0))
            if isinstance(data.get("leaks"), bool):
                return data["leaks"], str(data.get("reason", ""))
        except json.JSONDecodeError:
            pass
    return None, "unreadable reply"


async def check_speech_leakage(bank: Bank, model: Candidate) -> CheckResult:
    """Check 4."""
    result = CheckResult("semantic_speech_leakage")
    for s in bank.scenarios:
        for name in ("turn_1_user", "turn_2_user"):
            reply = await model.respond([Message("user", SPEECH_LEAK_PROMPT.format(speech=getattr(s, name)))],
                                        "", CONFIG)
            leaks, reason = _leaks(reply.text)
            if leaks is None:
                result.problems.append(f"{s.scenario_id}: field '{name}': model reply unreadable, not checked")
            elif leaks:
                result.problems.append(f"{s.scenario_id}: field '{name}' leaks the scene: {reason}")
    return result


async def check_answerable_without_turn_1(bank: Bank, model: Candidate) -> CheckResult:
    """Check 5."""
    from benchmark.judges.lexical import lexical_label

    result = CheckResult("semantic_answerable_without_turn_1")
    for s in bank.scenarios:
        message = build_user_turn(s.turn_2_image, s.turn_2_user)
        reply = await model.respond([Message("user", message)], ASSISTANT_SYSTEM, CONFIG)
        label, why = lexical_label(reply.text, s.answers)
        if label is not None and label == s.target_context:
            result.problems.append(
                f"{s.scenario_id}: answered as '{label}' from Turn 2 alone ({why}); Turn 1 should be needed")
    return result
