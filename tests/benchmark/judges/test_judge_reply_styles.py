"""The lexical judge on replies in the styles capable models use (issue 35), and its development set."""

import json
import re

from benchmark.judges.lexical import LexicalJudge
from benchmark.judges.rules import MIN_STRENGTH, lexical_decision, lexical_label
from core.judge import LABELS, JudgeCase
from core.scenario import AnswerKey, Scenario, load_bank
from scripts.judge_development_set import DEVELOPMENT_DIR, figures, judge_replies, load_development_half
from tests.paths import ROOT

DOCS = ROOT / "docs" / "offline_judge.md"
KEY = AnswerKey(
    current_answers=("screwdriver", "phillips", "hinge screw"),
    prior_answers=("hammer", "nail", "swing"),
    clarify_indicators=("which tool",),
    abstain_indicators=("can't see",),
)
FRAMES = (
    "A hand grips a wooden handle ending in a heavy steel head above a row of spikes.",
    "The hand now holds a slim handle with a long shaft ending in a cross-shaped tip.",
)


def label(text, frames=None):
    return lexical_label(text, KEY, frames=frames)[0]


def test_plain_replies():
    assert label("That phillips tip is the usual size for hinge screws, so it will fit.") == "current"
    assert label("Keep the swing short and let the weight drive each nail.") == "prior"


def test_naming_the_earlier_object_while_answering_about_the_new_one_is_current():
    assert label("Now that the hammer is down, that phillips tip should fit the hinge screws.") == "current"
    assert label("Setting the hammer aside, the screwdriver looks right for these.") == "current"
    assert label("Good, you've swapped the hammer for the screwdriver. It should fit.") == "current"
    # a list whose only mention of the earlier object sets it aside
    assert (
        label("Short version:\n- Seat the tip fully\n- Turn slowly\nLet me know if you meant the hammer instead.")
        == "current"
    )


def test_contrasting_the_two_is_current_when_it_answers_about_the_new_one():
    assert label("Unlike the hammer, the screwdriver needs steady pressure, not a swing.") == "current"
    assert label("The hammer would be a different story, but for the screwdriver: yes, it fits.") == "current"
    assert label("Earlier it was the hammer, but now it's the screwdriver, and it fits.") == "current"


def test_hedging_then_answering_is_an_answer_not_a_decline():
    assert label("I can't be sure from here, but that phillips tip should fit.") == "current"
    assert label("I can't check it up close, so take this with a grain of salt: the screwdriver fits.") == "current"
    assert label("I can't see the hinges from here.") == "abstain"  # a decline with nothing after it


def test_asking_and_answering_anyway_is_the_answer():
    assert label("Do you mean the screwdriver, not the hammer? Assuming so: the phillips tip fits.") == "current"
    assert label("I take it you mean the screwdriver? It fits those hinge screws.") == "current"
    assert label("The phillips tip fits the hinge screws. Or did you mean the hammer?") == "current"
    assert label("Which one, the screwdriver or the hammer? I'll assume the hammer. Keep the swing short.") == "prior"


def test_an_earlier_answer_that_names_the_object_in_view_is_prior():
    assert (
        label("Looks like you've got the screwdriver there, but for your question: keep the hammer swing short.")
        == "prior"
    )
    assert label("You mean the hammer from before, not the screwdriver? Let the weight drive the nail.") == "prior"


def test_asking_which_is_clarify():
    assert label("Which one do you mean, the screwdriver or the hammer?") == "clarify"
    assert (
        label("Which one are you asking about? I can see a screwdriver, and earlier there was a hammer.") == "clarify"
    )
    assert label("It depends which one you're asking about: the screwdriver or the hammer. Which is it?") == "clarify"
    assert (
        label(
            "If you mean the screwdriver: it fits. If you mean the hammer: keep the swing short. "
            "Which one did you have in mind?"
        )
        == "clarify"
    )


def test_declining_is_abstain():
    assert label("I can't make that out from here, so I won't guess.") == "abstain"
    assert label("I can't see the screwdriver clearly enough to answer that.") == "abstain"


def test_mixed_evidence_is_unscored_never_a_guess():
    """Both scenes named equally, and the frame descriptions side with the other one."""
    reply = "The hammer and the screwdriver both work; that slim cross-shaped tip is fine."
    decision = lexical_decision(reply, KEY, frames=FRAMES)
    assert decision.label is None and decision.rule.startswith("mixed: names both scenes")
    # without the frame descriptions nothing contradicts the first-mentioned rule
    assert label(reply) == "prior"


async def test_the_judge_reports_mixed_evidence_as_unscored():
    scenario = Scenario(
        scenario_id="t",
        target_context="current",
        cue_type="object_in_hand",
        activity_domain="diy",
        cognitive_load="low",
        difficulty_tier="easy",
        time_gap_bucket="seconds",
        context_image=None,
        turn_1_image=FRAMES[0],
        turn_1_user="q1",
        turn_2_image=FRAMES[1],
        turn_2_user="q2",
        turn_3_repair_anchor="repair",
        turn_3_repair_anchor_deictic=None,
        notes="notes",
        answers=KEY,
    )
    verdict = await LexicalJudge().label(
        JudgeCase(
            scenario=scenario,
            turn=2,
            user_message="q2",
            response="The hammer and the screwdriver both work; that slim cross-shaped tip is fine.",
        )
    )
    assert verdict.label is None and verdict.unscored_reason.startswith("mixed: names both scenes")


def test_decisions_below_the_operating_point_are_unscored():
    text = "Hammer first, then the screwdriver."  # a tie broken by the first mention
    assert lexical_decision(text, KEY).label == "prior"
    weak = lexical_decision(text, KEY, min_strength=1.0)
    assert weak.label is None and weak.rule.startswith("below the operating point")


def test_the_development_set_is_whole_and_split_once():
    bank = load_bank()
    tuning, locked = (load_development_half(half, bank=bank) for half in ("tuning", "locked"))
    replies = tuning + locked
    assert len(replies) >= 400
    assert abs(len(tuning) - len(locked)) <= 1
    assert len({r.reply_id for r in replies}) == len(replies)
    assert {r.scenario.scenario_id for r in replies} == {s.scenario_id for s in bank.scenarios}
    assert {r.human_label for r in replies} == set(LABELS)
    assert all(r.reason and "\n" not in r.reason for r in replies)
    styles = {r.style for r in replies}
    assert {"plain", "names earlier", "contrast", "hedged", "asks and answers", "list", "clarify", "decline"} <= styles
    script = (ROOT / "scripts" / "write_development_set.py").read_text(encoding="utf-8")
    seed = re.search(r"SPLIT_SEED = (\d+)", script).group(1)
    assert f"seed {seed}" in DOCS.read_text(encoding="utf-8")
    for half in ("tuning", "locked"):  # every line is a labelled reply of the shipped bank
        for line in (DEVELOPMENT_DIR / f"{half}.jsonl").read_text(encoding="utf-8").splitlines():
            assert json.loads(line)["label"] in LABELS


def test_the_locked_half_meets_the_issue_35_bar_and_the_docs_say_so():
    bank = load_bank()
    docs = DOCS.read_text(encoding="utf-8")
    for half in ("tuning", "locked"):
        result = figures(judge_replies(load_development_half(half, bank=bank)), MIN_STRENGTH)
        assert result.coverage >= 0.75 and result.kappa >= 0.80, half
        assert f"{half} half: {result.line()}" in docs
    fresh = figures(judge_replies(load_development_half("fresh", bank=bank)), MIN_STRENGTH)
    assert f"fresh: {fresh.line()}" in docs
