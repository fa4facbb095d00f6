"""Checks 4 and 5 with a scripted model: the check logic, not a real model."""

import asyncio

from benchmark.candidates.base import Reply
from benchmark.scenario import load_bank
from benchmark.validate_semantic import check_answerable_without_turn_1, check_speech_leakage

BANK = load_bank().select(limit=2)


class Scripted:
    model_id, family = "scripted", "scripted"

    def __init__(self, reply):
        self.reply, self.prompts = reply, []

    async def respond(self, messages, system, config, on_delta=None):
        self.prompts.append(messages[-1].text)
        return Reply(self.reply(messages[-1].text), self.model_id)


def test_check_4_flags_speech_the_model_says_leaks():
    model = Scripted(lambda text: '{"leaks": true, "reason": "names the tool"}' if "holding this right" in text
                     else '{"leaks": false, "reason": ""}')
    problems = asyncio.run(check_speech_leakage(BANK, model)).problems
    assert problems == ["sc-01: field 'turn_1_user' leaks the scene: names the tool"]
    garbled = asyncio.run(check_speech_leakage(BANK, Scripted(lambda text: "sure!"))).problems
    assert len(garbled) == 4 and all("unreadable" in p for p in garbled)


def test_check_5_flags_scenarios_answerable_from_turn_2_alone():
    model = Scripted(lambda text: "That screwdriver tip fits." if "hinge" in text else "I am not sure.")
    result = asyncio.run(check_answerable_without_turn_1(BANK, model))
    assert [p.split(":")[0] for p in result.problems] == ["sc-01"]
    assert all("[Camera:" in prompt and "Am I holding" not in prompt for prompt in model.prompts)
