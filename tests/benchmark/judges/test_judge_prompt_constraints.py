"""The judge never sees target_context, cue_type or the authoring notes.

Renders the judge prompt for every scenario of the shipped bank
(`benchmark/v1/`), for Turn 2 and Turn 3, and checks that none of the
privileged fields reach it.
"""

import pytest

from benchmark.judges.prompt import judge_template, render_judge_prompt
from core.judge import JudgeCase
from core.scenario import CUE_TYPES, BankError, load_bank

try:  # the real shipped bank; a missing or broken bank fails test_the_bank_is_there
    SCENARIOS = load_bank().scenarios
    BANK_ERROR = None
except BankError as exc:
    SCENARIOS, BANK_ERROR = (), exc
RESPONSE = "Here is my answer about what you asked."


def _cases(scenario):
    turn_2 = (
        f"[Camera: {scenario.turn_2_image}]\n{scenario.turn_2_user}" if scenario.turn_2_image else scenario.turn_2_user
    )
    yield JudgeCase(scenario=scenario, turn=2, user_message=turn_2, response=RESPONSE)
    yield JudgeCase(scenario=scenario, turn=3, user_message=scenario.repair_anchor("named"), response=RESPONSE)


def _judge_visible_text(scenario) -> str:
    """Everything of the scenario the judge is meant to see, to tell leaks from authored words."""
    a = scenario.answers
    parts = [
        scenario.turn_1_user,
        scenario.turn_2_user,
        scenario.turn_3_repair_anchor,
        scenario.context_image or "",
        scenario.turn_1_image or "",
        scenario.turn_2_image or "",
        *a.current_answers,
        *a.prior_answers,
        *a.clarify_indicators,
        *a.abstain_indicators,
    ]
    return "\n".join(parts).lower()


def test_the_bank_is_there():
    assert BANK_ERROR is None, f"the shipped bank does not load: {BANK_ERROR}"
    assert len(SCENARIOS) >= 1


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.scenario_id)
def test_no_privileged_field_in_the_rendered_prompt(scenario):
    visible = _judge_visible_text(scenario)
    template = judge_template().lower()
    for case in _cases(scenario):
        prompt = render_judge_prompt(case)
        lowered = prompt.lower()
        # no labelled field naming the target or the shift type; a word the scenario's own
        # visible text uses (e.g. "notes" in a music lesson) is not a leak, so each word may
        # appear at most as often as the visible text and the template together hold it
        for field in (
            "target_context",
            "target context",
            "target:",
            "expected label",
            "cue_type",
            "cue type",
            "shift type",
            "notes",
        ):
            allowed = visible.count(field) + template.count(field)
            assert lowered.count(field) <= allowed, f"{scenario.scenario_id}: {field!r} in the judge prompt"
        # the cue_type value appears only where the scenario's own visible text has it
        cue = scenario.cue_type.lower()
        assert lowered.count(cue) <= visible.count(cue) + template.count(cue), scenario.scenario_id
        cue_words = cue.replace("_", " ")
        assert lowered.count(cue_words) <= visible.count(cue_words) + template.count(cue_words)
        # the authoring notes never appear (nor any long piece of them)
        notes = scenario.notes.strip()
        if notes:
            assert notes.lower() not in lowered, f"{scenario.scenario_id}: notes leaked"
            for sentence in (s.strip() for s in notes.split(".")):
                if len(sentence) > 30 and sentence.lower() not in visible:
                    assert sentence.lower() not in lowered, f"{scenario.scenario_id}: notes leaked"


def test_template_names_no_shift_type():
    template = judge_template().lower()
    for cue in CUE_TYPES:
        assert cue not in template and cue.replace("_", " ") not in template


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.scenario_id)
def test_the_prompt_does_not_depend_on_privileged_fields(scenario):
    """Changing target_context, cue_type and notes leaves every rendered prompt unchanged."""
    import dataclasses

    other_target = "abstain" if scenario.target_context != "abstain" else "current"
    other_cue = "screen_content" if scenario.cue_type != "screen_content" else "location"
    changed = dataclasses.replace(
        scenario,
        target_context=other_target,
        cue_type=other_cue,
        notes="SENTINEL authoring note that must never reach the judge",
    )
    for case in _cases(scenario):
        twin = dataclasses.replace(case, scenario=changed)
        assert render_judge_prompt(twin) == render_judge_prompt(case), scenario.scenario_id


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s.turn_3_target_context], ids=lambda s: s.scenario_id)
def test_the_repair_target_never_reaches_the_judge(scenario):
    """turn_3_target_context is scoring data like target_context: no prompt depends on it."""
    import dataclasses

    assert scenario.turn_3_target_context  # the shipped clarify items set it
    changed = dataclasses.replace(
        scenario, turn_3_target_context="prior" if scenario.repair_target != "prior" else "current"
    )
    for case in _cases(scenario):
        prompt = render_judge_prompt(case)
        assert "turn_3_target_context" not in prompt and "repair_target" not in prompt
        assert render_judge_prompt(dataclasses.replace(case, scenario=changed)) == prompt
