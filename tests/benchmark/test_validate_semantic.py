"""Checks 4 and 5 with a scripted model: the check logic, not a real model."""

import asyncio
import json

import pytest

from benchmark.bank.semantic import (
    TEXT_ONLY_SYSTEM,
    blocks_to_identify,
    check_identification,
    check_speech_leakage,
    identifies,
)
from core.candidate import Reply
from core.scenario import load_bank
from tests.paths import FIXTURES

SHIPPED = load_bank()
BANK = SHIPPED.select(limit=2)  # sc-01 (hammer -> screwdriver), sc-02 (chef's knife -> paring knife)


class Scripted:
    """A model whose reply is a function of the last message; it records every call."""

    model_id, family = "scripted", "scripted"

    def __init__(self, reply):
        self.reply, self.calls = reply, []

    async def respond(self, messages, system, config, on_delta=None):
        self.calls.append(([(m.role, m.text) for m in messages], system))
        return Reply(text=self.reply(messages[-1].text), model=self.model_id)


def named(obj):
    return json.dumps({"object": obj})


def sees(text):
    """Names what a careful reader would: only the blocks it can tell apart."""
    if "cross-shaped tip" in text:
        return named("a Phillips screwdriver")
    if "split, curved back" in text:
        return named("claw hammer")
    if "pointed tip and a small wooden grip" in text:
        return named("a paring knife")
    return named("a wooden board")


def test_check_4_a_block_that_does_not_identify_its_object_fails():
    model = Scripted(sees)
    result = asyncio.run(check_identification(BANK, model))
    # sc-01's two blocks identify hammer and screwdriver; sc-02's first block reads as "a wooden board"
    assert result.problems == [
        "sc-02: field 'turn_1_image': the model names 'a wooden board', not among "
        "prior_answers; the description does not identify the object"
    ]
    assert result.details["sc-01"] == {
        "turn_1_image": {"named": "claw hammer", "identified": True, "matched": "hammer"},
        "turn_2_image": {"named": "a Phillips screwdriver", "identified": True, "matched": "screwdriver"},
    }
    assert result.details["sc-02"]["turn_2_image"]["identified"] is True
    assert result.to_dict()["per_scenario"]["sc-02"]["turn_1_image"]["identified"] is False
    # each call holds one camera block and nothing else: no speech, no other turn
    assert len(model.calls) == 4
    for (messages, system), s, name in zip(
        model.calls, [s for s in BANK.scenarios for _ in (1, 2)], ["turn_1_image", "turn_2_image"] * 2
    ):
        [(role, text)] = messages
        assert role == "user" and system == ""
        assert getattr(s, name) in text and s.turn_1_user not in text and s.turn_2_user not in text


def test_check_4_each_block_is_matched_against_its_own_scene():
    # a block named with the other scene's object fails: Turn 1 shows the hammer, not the screwdriver
    swapped = Scripted(lambda text: named("screwdriver") if "split, curved back" in text else named("hammer"))
    problems = asyncio.run(check_identification(BANK.select(limit=1), swapped)).problems
    assert [p.split(":")[1].strip() for p in problems] == ["field 'turn_1_image'", "field 'turn_2_image'"]
    # a recall item: the context frame is the earlier scene, Turn 1 sits between, Turn 2 is the current one
    recall = SHIPPED.get("sc-47")
    assert [(name, lists) for name, _, _, lists in blocks_to_identify(recall)] == [
        ("context_image", "prior_answers"),
        ("turn_1_image", "prior_answers or current_answers"),
        ("turn_2_image", "current_answers"),
    ]
    bank = SHIPPED.select(limit=0)
    bank = type(bank)(
        scenarios=(recall,), conditions=bank.conditions, source=bank.source, format=bank.format, files=bank.files
    )

    def recall_model(answer_for_context):
        return Scripted(
            lambda text: (
                named(answer_for_context)
                if "coarse white crystals" in text
                else named("pasta")
                if "golden strands are lowered" in text
                else named("spaghetti in sauce")
            )
        )

    assert asyncio.run(check_identification(bank, recall_model("salt"))).ok
    wrong = asyncio.run(check_identification(bank, recall_model("tomato sauce"))).problems
    assert wrong == [
        "sc-47: field 'context_image': the model names 'tomato sauce', not among prior_answers; "
        "the description does not identify the object"
    ]
    assert identifies("pasta", ("salt", "pasta water")) == "pasta water"
    assert identifies("a red brick", ("salt", "pasta water")) is None


def test_check_4_unreadable_replies_are_reported_not_passed():
    problems = asyncio.run(check_identification(BANK, Scripted(lambda text: "sure!"))).problems
    assert len(problems) == 4 and all(p.endswith("model reply unreadable, not checked") for p in problems)


def test_check_5_speech_alone_that_gives_the_answer_away_fails():
    def leaky(text):  # "lining up" is sc-01's Turn 2 speech: this model answers as if it saw the screwdriver
        if "lining up" in text:
            return "Yes, that screwdriver's Phillips tip will fit the hinge screw."
        return "I can't see what you mean; could you describe it?"

    model = Scripted(leaky)
    result = asyncio.run(check_speech_leakage(BANK, model))
    assert [p.split(":")[0] for p in result.problems] == ["sc-01"]
    assert "answered as 'current' from speech alone" in result.problems[0]
    assert result.details["sc-01"]["leaks"] is True and result.details["sc-02"]["leaks"] is False
    # the model got the two speech turns as a text-only conversation: no camera block anywhere
    first, second = model.calls[:2]
    s = BANK.scenarios[0]
    assert first == ([("user", s.turn_1_user)], TEXT_ONLY_SYSTEM)
    assert second[0] == [("user", s.turn_1_user), ("assistant", leaky(s.turn_1_user)), ("user", s.turn_2_user)]
    assert all("[Camera:" not in text for messages, _ in model.calls for _, text in messages)
    # a reply from the wrong scene, or none at all, is no leak
    prior = Scripted(lambda text: "Hold the hammer near the end of the handle and swing from the elbow.")
    assert asyncio.run(check_speech_leakage(BANK.select(limit=1), prior)).ok


@pytest.mark.parametrize(
    "reply, leaks",
    [
        ("Which one do you mean?", False),
        ("I can't tell which one you mean.", False),
        ("Do you mean the whisk or the slotted turner?", True),
    ],
)
def test_check_5_on_a_clarify_item_naming_the_candidates_is_a_leak(reply, leaks):
    sc08 = SHIPPED.get("sc-08")
    bank = type(SHIPPED)(
        scenarios=(sc08,),
        conditions=SHIPPED.conditions,
        source=SHIPPED.source,
        format=SHIPPED.format,
        files=SHIPPED.files,
    )
    result = asyncio.run(check_speech_leakage(bank, Scripted(lambda text: reply)))
    assert result.ok is not leaks
    assert result.details["sc-08"]["leaks"] is leaks


@pytest.mark.clock
def test_wearsim_validate_semantic_runs_checks_4_and_5_and_reports_per_scenario(tmp_path):
    """The CLI path against an OpenAI-compatible server that always names a wooden board."""
    import os
    import subprocess
    import sys

    from tests.fake_openai import FakeOpenAI

    bank = tmp_path / "bank.jsonl"
    bank.write_text((FIXTURES / "banks" / "external.jsonl").read_text())
    with FakeOpenAI(reply=named("a wooden board")) as server:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmark",
                "validate",
                "--json",
                str(bank),
                "--semantic",
                "--model",
                "openai:fake",
                "--base-url",
                server.base_url,
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "OPENAI_API_KEY": ""},
        )
        requests = list(server.requests)
    report = json.loads(done.stdout)
    checks = {c["name"]: c for c in report["checks"]}
    assert done.returncode == 1 and report["ok"] is False
    identification, leakage = checks["semantic_identification"], checks["semantic_speech_leakage"]
    assert set(identification["per_scenario"]) == {"sc-01", "sc-02", "sc-03", "sc-04"}
    assert not identification["ok"] and all("'a wooden board'" in p for p in identification["problems"])
    assert leakage["ok"] and all(v["leaks"] is False for v in leakage["per_scenario"].values())
    # check 5 sent speech only: no request of a speech conversation holds a camera block
    speech_only = [r for r in requests if any(m["role"] == "system" for m in r["messages"])]
    assert len(speech_only) == 8 and all("[Camera:" not in json.dumps(r) for r in speech_only)
