"""The Turn 1/2/3 protocol: exact message strings, repair only on a miss."""

import asyncio
import json

from benchmark.conversations.protocol import DirectConversation, run_trial
from core.candidate import GenerationConfig, Reply
from core.judge import Verdict
from core.records import build_context_message, build_user_turn
from core.scenario import load_bank

BANK = load_bank()
BASELINE = BANK.condition("baseline")


class ScriptedCandidate:
    model_id, family = "scripted", "scripted"

    def __init__(self):
        self.calls = []

    async def respond(self, messages, system, config, on_delta=None):
        self.calls.append((list(messages), system))
        return Reply(text=f"reply {len(self.calls)}", model=self.model_id)


class ScriptedJudge:
    name, family = "scripted", "scripted"

    def __init__(self, labels):
        self.labels = list(labels)
        self.cases = []

    async def label(self, case):
        self.cases.append(case)
        return Verdict(label=self.labels.pop(0), rationale="scripted", judge=self.name)


def play(scenario, labels, **options):
    candidate, judge = ScriptedCandidate(), ScriptedJudge(labels)
    conversation = DirectConversation(scenario, BASELINE, candidate, GenerationConfig(), **options)
    record = asyncio.run(run_trial(conversation, scenario, judge))
    return record, candidate, judge


def test_message_strings():
    assert build_user_turn("a red disc", "Is this ripe?") == "[Camera: a red disc]\nIs this ripe?"
    assert build_user_turn(None, "Is this ripe?") == "Is this ripe?"
    assert build_context_message("steam rising") == "[Camera: steam rising]"


def test_turns_sent_with_camera_blocks_and_system_prompt():
    s = BANK.get("sc-01")
    record, candidate, _ = play(s, ["current"])
    first, second = candidate.calls
    assert [m.text for m in first[0]] == [f"[Camera: {s.turn_1_image}]\n{s.turn_1_user}"]
    assert [(m.role, m.text) for m in second[0]] == [
        ("user", f"[Camera: {s.turn_1_image}]\n{s.turn_1_user}"),
        ("assistant", "reply 1"),
        ("user", f"[Camera: {s.turn_2_image}]\n{s.turn_2_user}"),
    ]
    assert first[1] == second[1] == BASELINE.system_prompt
    assert record.passed is True and record.turn_3_repair_attempted is False


def test_context_image_goes_first_as_its_own_message():
    s = BANK.get("sc-47")
    _, candidate, _ = play(s, ["prior"])
    texts = [m.text for m in candidate.calls[0][0]]
    assert texts == [f"[Camera: {s.context_image}]", f"[Camera: {s.turn_1_image}]\n{s.turn_1_user}"]


def test_repair_only_on_a_miss_and_judged():
    s = BANK.get("sc-01")
    record, candidate, judge = play(s, ["prior", "current"])
    assert len(candidate.calls) == 3
    assert candidate.calls[2][0][-1].text == s.turn_3_repair_anchor
    assert [c.turn for c in judge.cases] == [2, 3]
    assert record.passed is False and record.turn_3_repair_attempted is True
    assert record.repair_passed is True
    assert judge.cases[1].turn_2_message == f"[Camera: {s.turn_2_image}]\n{s.turn_2_user}"


def test_unscored_turn_2_is_not_a_miss():
    class Unscored(ScriptedJudge):
        async def label(self, case):
            return Verdict(label=None, rationale="", judge="scripted", unscored_reason="unreadable")

    s = BANK.get("sc-01")
    candidate = ScriptedCandidate()
    record = asyncio.run(run_trial(DirectConversation(s, BASELINE, candidate, GenerationConfig()), s, Unscored([])))
    assert record.passed is None and record.turn_3_repair_attempted is False
    assert len(candidate.calls) == 2


def test_deictic_repair_and_its_fallback():
    held = BANK.get("sc-01")
    _, candidate, _ = play(held, ["prior", "current"], repair_style="deictic")
    assert candidate.calls[2][0][-1].text == held.turn_3_repair_anchor_deictic
    absent = BANK.get("sc-38")  # no gesture can point at what left the frame
    _, candidate, _ = play(absent, ["current", "prior"], repair_style="deictic")
    assert candidate.calls[2][0][-1].text == absent.turn_3_repair_anchor


def test_camera_ablation_strips_every_block_and_the_context_message():
    s = BANK.get("sc-47")
    record, candidate, _ = play(s, ["prior"], camera=False)
    assert [m.text for m in candidate.calls[1][0] if m.role == "user"] == [s.turn_1_user, s.turn_2_user]
    assert all("[Camera:" not in m.text for m in record.messages)
    first = record.turns[0].input
    assert first.camera_source is None and first.speech_source == "authored" and first.context_block is None


def test_the_judge_sees_the_conversation_as_sent_under_no_camera():
    from benchmark.judges.prompt import render_judge_prompt

    s = BANK.get("sc-47")  # a recall scenario: context, turn 1 and turn 2 camera blocks
    record, _, judge = play(s, ["current", "prior"], camera=False)  # target prior: a miss, then the repair
    turn_2_case, turn_3_case = judge.cases
    for case in judge.cases:
        prompt = render_judge_prompt(case)
        assert "[Camera:" not in prompt
        assert f"<turn_2_message>\n{s.turn_2_user}\n</turn_2_message>" in prompt
        assert "Before the user spoke" not in prompt  # no context message was sent
    assert f"<turn_3_message>\n{s.turn_3_repair_anchor}\n</turn_3_message>" in render_judge_prompt(turn_3_case)
    with_camera = render_judge_prompt(play(s, ["prior"])[2].cases[0])
    assert f"[Camera: {s.turn_2_image}]" in with_camera and "Before the user spoke" in with_camera


def test_a_record_survives_its_json_form():
    from core.records import TrialRecord

    record, _, _ = play(BANK.get("sc-47"), ["current", "prior"])
    record = record.replace(condition="baseline", trial=3, via="direct", candidate_model="scripted")
    again = TrialRecord.from_json(json.loads(record.to_line()))
    assert again == record
    assert again.turns[2].input.user_message == BANK.get("sc-47").turn_3_repair_anchor
