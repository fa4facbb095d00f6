"""The LLM judge end to end against the real local llama.cpp server (bundled SmolLM2).

The tiny model is not a good judge; this checks the wiring: `open_judge`
reaches the server through `open_candidate`, the verdict keeps the rendered
prompt and the raw reply, and whatever the model says ends as a label or as
an unscored verdict with a reason - never as an exception or a silent pass.
"""

import pytest

from benchmark.judges import LABELS, JudgeCase, open_judge
from benchmark.judges.prompt import render_judge_prompt
from core.scenario import load_bank


@pytest.mark.llama
async def test_llm_judge_through_the_local_server(local_llama_url):
    scenario = load_bank().scenarios[0]
    message = (
        f"[Camera: {scenario.turn_2_image}]\n{scenario.turn_2_user}" if scenario.turn_2_image else scenario.turn_2_user
    )
    case = JudgeCase(
        scenario=scenario, turn=2, user_message=message, response="I'm not sure which one you mean - could you tell me?"
    )
    async with open_judge("openai", "smollm2", base_url=local_llama_url) as judge:
        assert judge.family == "openai" and judge.name == "openai:smollm2"
        verdict = await judge.label(case)
    assert verdict.prompt == render_judge_prompt(case)
    assert verdict.raw.strip()
    if verdict.scored:
        assert verdict.label in LABELS and verdict.unscored_reason is None
    else:
        assert verdict.unscored_reason.startswith("judge reply unreadable after one retry")
