"""Verdict parsing and the LLM judge's retry-once-then-unscored rule."""

import pytest

from benchmark.judges.llm import RETRY_SEPARATOR, LLMJudge
from benchmark.judges.verdict import VerdictParseError, parse_verdict
from core.candidate import Reply
from core.judge import JudgeCase
from core.scenario import AnswerKey, Scenario


def test_plain_json():
    assert parse_verdict('{"label": "current", "rationale": "Names the screwdriver."}') == (
        "current",
        "Names the screwdriver.",
    )


def test_fenced_json():
    text = 'Here is my verdict:\n```json\n{"label": "prior", "rationale": "Talks about the hammer."}\n```\n'
    assert parse_verdict(text) == ("prior", "Talks about the hammer.")


def test_json_embedded_in_prose_and_label_case():
    text = 'I think {"label": " Clarify ", "rationale": "It asks which one."} is right.'
    assert parse_verdict(text) == ("clarify", "It asks which one.")


def test_first_object_without_label_is_passed_over():
    text = '{"note": 1} then {"label": "abstain", "rationale": "declines"}'
    assert parse_verdict(text)[0] == "abstain"


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "empty reply"),
        ("The answer is current.", "no JSON object"),
        ('{"label": "both", "rationale": "x"}', "unknown label 'both'"),
        ('{"label": "curr', "no JSON object"),
    ],
)
def test_unreadable_replies_raise_with_reason(text, reason):
    with pytest.raises(VerdictParseError, match=reason):
        parse_verdict(text)


class ScriptedModel:
    """Candidate-shaped: answers with the scripted texts in order, records the calls."""

    model_id = "scripted:judge"
    family = "scripted"

    def __init__(self, *texts):
        self.texts = list(texts)
        self.calls = []

    async def respond(self, messages, system, config, on_delta=None):
        self.calls.append((list(messages), system, config))
        return Reply(text=self.texts.pop(0), model=self.model_id)


def _case(turn=2, user_message="[Camera: a slim handle with a cross tip]\nIs this the right size?"):
    scenario = Scenario(
        scenario_id="t1",
        target_context="current",
        cue_type="object_in_hand",
        activity_domain="diy",
        cognitive_load="low",
        difficulty_tier="easy",
        time_gap_bucket="seconds",
        context_image=None,
        turn_1_image="a heavy steel head on a wooden handle",
        turn_1_user="How do I hold this?",
        turn_2_image="a slim handle with a cross tip",
        turn_2_user="Is this the right size?",
        turn_3_repair_anchor="I mean the screwdriver I'm holding now.",
        turn_3_repair_anchor_deictic=None,
        notes="authoring note",
        answers=AnswerKey(
            current_answers=("screwdriver",),
            prior_answers=("hammer",),
            clarify_indicators=("which one",),
            abstain_indicators=("can't see",),
        ),
    )
    return JudgeCase(
        scenario=scenario, turn=turn, user_message=user_message, response="Yes, that Phillips screwdriver fits."
    )


async def test_llm_judge_reads_a_good_reply_and_keeps_prompt_and_raw():
    model = ScriptedModel('{"label": "current", "rationale": "It answers about the screwdriver."}')
    verdict = await LLMJudge(model, family="openai").label(_case())
    assert verdict.label == "current" and verdict.scored
    assert verdict.judge == "scripted:judge"
    assert "Is this the right size?" in verdict.prompt and "Phillips screwdriver fits" in verdict.prompt
    assert verdict.raw.startswith('{"label": "current"')
    messages, system, config = model.calls[0]
    assert messages[0].text == verdict.prompt and config.temperature == 0.0


async def test_garbage_is_retried_once_then_read():
    model = ScriptedModel("I would say current.", '```json\n{"label": "current", "rationale": "ok"}\n```')
    verdict = await LLMJudge(model, family="gemini").label(_case())
    assert verdict.label == "current"
    assert len(model.calls) == 2
    retry_messages = model.calls[1][0]
    assert [m.role for m in retry_messages] == ["user", "assistant", "user"]
    assert "no JSON object" in retry_messages[2].text
    assert verdict.raw.split(RETRY_SEPARATOR)[0] == "I would say current."


async def test_garbage_twice_is_unscored_with_reason():
    model = ScriptedModel("no idea", '{"label": "maybe", "rationale": "?"}')
    verdict = await LLMJudge(model, family="gemini").label(_case())
    assert verdict.label is None and not verdict.scored
    assert "unknown label 'maybe'" in verdict.unscored_reason
    assert "no idea" in verdict.raw and '"maybe"' in verdict.raw
    assert len(model.calls) == 2


async def test_turn_3_prompt_holds_the_repair_message_and_the_turn_2_message():
    case = _case(turn=3, user_message="I mean the screwdriver I'm holding now.")
    model = ScriptedModel('{"label": "current", "rationale": "fixed"}')
    verdict = await LLMJudge(model, family="openai").label(case)
    assert "<turn_3_message>\nI mean the screwdriver I'm holding now.\n</turn_3_message>" in verdict.prompt
    assert "[Camera: a slim handle with a cross tip]\nIs this the right size?" in verdict.prompt


def test_turn_1_cannot_be_judged():
    from benchmark.judges.prompt import render_judge_prompt

    with pytest.raises(ValueError, match="Turn 2 or Turn 3"):
        render_judge_prompt(_case(turn=1))
