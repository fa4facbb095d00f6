"""Rendering and hashing of the LLM judge prompt."""

import dataclasses

import benchmark.judges.prompt as prompt_module
from benchmark.judges.prompt import JUDGE_PROMPT_VERSION, judge_prompt_sha256, render_judge_prompt
from core.judge import JudgeCase
from core.scenario import AnswerKey, Scenario

SCENARIO = Scenario(
    scenario_id="p1",
    target_context="prior",
    cue_type="pre_conversation_recall",
    activity_domain="home",
    cognitive_load="low",
    difficulty_tier="easy",
    time_gap_bucket="minutes",
    context_image="A bowl with a ring of metal keys on a narrow table.",
    turn_1_image="Hands lace shoes on a mat.",
    turn_1_user="Tight enough?",
    turn_2_image=None,
    turn_2_user="Where did I put them?",
    turn_3_repair_anchor="I mean the keys from before we started talking.",
    turn_3_repair_anchor_deictic=None,
    notes="n",
    answers=AnswerKey(
        current_answers=("porch",),
        prior_answers=("bowl", "hallway table"),
        clarify_indicators=(),
        abstain_indicators=("don't know",),
    ),
)


def test_ground_truth_section_describes_every_frame_and_names_the_objects():
    text = render_judge_prompt(
        JudgeCase(scenario=SCENARIO, turn=2, user_message="Where did I put them?", response="In the bowl.")
    )
    assert "- Before the conversation started: A bowl with a ring of metal keys" in text
    assert "- Turn 1 frame: Hands lace shoes on a mat." in text
    assert "- Turn 2 frame: (no camera description at this turn)" in text
    assert '"bowl", "hallway table"' in text
    assert "clarify (asks the user which thing they mean): (none given)" in text
    assert "<turn_1_speech>\nTight enough?\n</turn_1_speech>" in text


def test_no_pre_conversation_note_without_a_context_image():
    plain = dataclasses.replace(SCENARIO, context_image=None)
    text = render_judge_prompt(
        JudgeCase(scenario=plain, turn=2, user_message="Where did I put them?", response="In the bowl.")
    )
    assert "Before the conversation started" not in text
    assert "Before the user spoke" not in text


def test_braces_in_authored_text_or_reply_are_kept_verbatim():
    text = render_judge_prompt(
        JudgeCase(scenario=SCENARIO, turn=2, user_message="What is {this}?", response='Reply {"label": "x"} {0}')
    )
    assert "What is {this}?" in text and 'Reply {"label": "x"} {0}' in text


def test_hash_is_stable_and_follows_the_template(tmp_path, monkeypatch):
    first = judge_prompt_sha256()
    assert first == judge_prompt_sha256() and len(first) == 64
    assert JUDGE_PROMPT_VERSION
    changed = tmp_path / "judge_prompt.md"
    changed.write_text(prompt_module.TEMPLATE_PATH.read_text(encoding="utf-8") + "\nOne more line.\n")
    monkeypatch.setattr(prompt_module, "TEMPLATE_PATH", changed)
    assert judge_prompt_sha256() != first
    assert render_judge_prompt(JudgeCase(scenario=SCENARIO, turn=2, user_message="q", response="r")).endswith(
        "One more line.\n"
    )
