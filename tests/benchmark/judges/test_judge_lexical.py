"""The lexical judge's rules and its documented agreement on the hand-labelled set."""

from benchmark.judges.lexical import LexicalJudge
from benchmark.judges.rules import lexical_label
from core.judge import LABELS, JudgeCase
from core.scenario import AnswerKey, Scenario
from scripts.judge_agreement import FIXTURE_DIR, lexical_agreement, load_labelled_set
from tests.paths import ROOT

DOCS = ROOT / "docs" / "offline_judge.md"
KEY = AnswerKey(
    current_answers=("screwdriver", "phillips"),
    prior_answers=("hammer", "nail"),
    clarify_indicators=("which tool",),
    abstain_indicators=("not visible",),
)


def label(text):
    return lexical_label(text, KEY)[0]


def test_single_list_decides():
    assert label("That Phillips screwdriver fits.") == "current"
    assert label("Keep your hammer swing short.") == "prior"


def test_more_hits_win_and_ties_go_to_the_first_mentioned():
    assert label("The screwdriver with a phillips tip, not a hammer job") == "current"
    assert label("Hammer first, then the screwdriver.") == "prior"


def test_contrastive_phrase_beats_counting():
    assert label("Earlier it was a hammer and nail, but now it's a screwdriver.") == "current"
    assert label("Instead of the screwdriver, use the hammer.") == "prior"


def test_clarifying_question_without_commitment():
    assert label("Do you mean the screwdriver or the hammer?") == "clarify"
    assert label("Which tool are you asking about?") == "clarify"
    assert label("Do you mean the screwdriver or something else?") == "clarify"  # only questions
    # a follow-up question after a committed answer is not a clarification
    assert label("That's the screwdriver. Do you mean for the top hinge too? It fits both.") == "current"


def test_decline_without_current_words_is_abstain():
    assert label("I can't see the hinges from here.") == "abstain"
    assert label("The hammer is not visible any more.") == "abstain"
    assert label("I can't read the size, but the phillips tip looks standard.") == "current"


def test_no_signal_and_empty_are_unscored():
    assert lexical_label("Sounds good, go for it.", KEY) == (None, "no signal")
    assert lexical_label("   ", KEY) == (None, "empty response")


async def test_lexical_judge_verdicts():
    scenario = Scenario(
        scenario_id="t",
        target_context="current",
        cue_type="object_in_hand",
        activity_domain="diy",
        cognitive_load="low",
        difficulty_tier="easy",
        time_gap_bucket="seconds",
        context_image=None,
        turn_1_image=None,
        turn_1_user="q1",
        turn_2_image=None,
        turn_2_user="q2",
        turn_3_repair_anchor="repair",
        turn_3_repair_anchor_deictic=None,
        notes="notes",
        answers=KEY,
    )
    judge = LexicalJudge()
    verdict = await judge.label(
        JudgeCase(scenario=scenario, turn=2, user_message="q2", response="Use the screwdriver.")
    )
    assert verdict.label == "current" and verdict.judge == "lexical" and verdict.prompt == ""
    unscored = await judge.label(JudgeCase(scenario=scenario, turn=2, user_message="q2", response="Sure thing."))
    assert unscored.label is None and unscored.unscored_reason == "no signal"


def test_fixture_set_is_big_enough_and_covers_every_label():
    items = load_labelled_set(FIXTURE_DIR)
    assert len(items) >= 200  # issue 12: at least 200 hand-labelled responses
    assert len({item.scenario for item in items if item.split == "bank"}) >= 10  # real bank scenarios
    assert {item.human_label for item in items} == set(LABELS)
    assert len({item.response_id for item in items}) == len(items)
    styles = [item for item in items if item.split.startswith("styles")]
    assert {item.kind for item in styles} >= {
        "long",
        "hedged",
        "bullets",
        "both objects",
        "refusal",
        "question back",
        "paraphrase",
    }
    for split in ("styles", "styles_holdout"):  # on the shipped bank and on the fixture bank, every label
        part = [item for item in items if item.split == split]
        assert {item.human_label for item in part} == set(LABELS)
        assert any(item.scenario.startswith("fx_") for item in part)
        assert any(not item.scenario.startswith("fx_") for item in part)


def test_documented_agreement_matches_the_computed_figure():
    items = load_labelled_set(FIXTURE_DIR)
    docs = DOCS.read_text(encoding="utf-8")
    overall = lexical_agreement(items)
    assert f"all: {overall.line()}" in docs
    for split in sorted({item.split for item in items}):
        part = lexical_agreement([item for item in items if item.split == split])
        assert f"{split}: {part.line()}" in docs


def test_coverage_and_kappa_meet_the_issue_12_bar():
    overall = lexical_agreement(load_labelled_set(FIXTURE_DIR))
    assert overall.coverage >= 90.0 and overall.kappa >= 0.7


def test_an_either_or_question_first_is_clarify_even_when_one_side_names_a_list():
    assert label("Do you mean the screwdriver in your hand or the other one? Tell me which.") == "clarify"


def test_a_decline_whose_answer_words_only_name_what_it_cannot_see_or_where_to_look_is_abstain():
    key = AnswerKey(
        current_answers=("ear", "vet"),
        prior_answers=("cat", "ribs"),
        clarify_indicators=("which one",),
        abstain_indicators=("can't examine",),
    )
    text = "I can't examine the ear through the camera, so I can't tell. If it continues, please ask a vet."
    assert lexical_label(text, key)[0] == "abstain"
    # advice that only mentions what the user cannot do is not a decline
    assert lexical_label("If you can't feel her ribs easily, cut her portions a little.", key)[0] == "prior"


def test_rule_7_reads_the_frame_descriptions_when_no_answer_word_is_named():
    frames = (
        "A hand grips a wooden handle ending in a heavy steel head.",
        "The hand now holds a slim handle with a long shaft ending in a cross-shaped tip.",
    )
    reply = "That cross-shaped end fits those screws; press in as you turn."
    assert lexical_label(reply, KEY) == (None, "no signal")
    got, rule = lexical_label(reply, KEY, frames=frames)
    assert got == "current" and rule.startswith("rule 7")
    assert lexical_label("Let the weight of the head do the work.", KEY, frames=frames)[0] == "prior"
    # words copied from the camera block in runs of three or more are not evidence
    echo = "a slim handle with a long shaft ending in a cross-shaped tip"
    assert lexical_label(echo, KEY, frames=frames, camera=frames[1])[0] is None


def test_answer_words_copied_from_the_camera_block_are_not_evidence_on_their_own():
    camera = "The right hand now turns a slim handle ending in a cross-shaped phillips tip over a hinge."
    # the reply only repeats the camera text it was given: no credit for "phillips"
    echo = "A slim handle ending in a cross-shaped phillips tip over a hinge."
    assert lexical_label(echo, KEY) == ("current", "rule 5: 1 current vs 0 prior hits")
    label, rule = lexical_label(echo, KEY, camera=camera)
    assert label is None and "1 answer word copied from the camera block not counted" in rule
    # a word of its own ("screwdriver") makes the copied word count again
    assert lexical_label("That phillips screwdriver fits.", KEY, camera=camera)[0] == "current"
    assert (
        lexical_label("That phillips screwdriver fits.", KEY, camera=camera)[1] == "rule 5: 2 current vs 0 prior hits"
    )
    # copied current words do not outvote a prior word of the reply's own
    assert (
        lexical_label("The phillips tip is fine, but the hammer needs a shorter swing.", KEY, camera=camera)[0]
        == "prior"
    )
    # a copied word cannot carry the present side of a contrast; the rejected side still loses
    contrast = "Earlier it was a hammer, now it's a phillips tip."
    assert "commits to current" in lexical_label(contrast, KEY)[1]
    label, rule = lexical_label(contrast, KEY, camera=camera)
    assert label == "current" and "rejects the other frame" in rule


async def test_the_lexical_judge_reads_the_camera_block_of_the_judged_message():
    from benchmark.judges.evidence import camera_block
    from core.records import build_context_message, build_user_turn

    camera = "A hand holds a phillips tip driver over a hinge."
    message = build_user_turn(camera, "Will this fit?")
    assert camera_block(message) == camera
    assert camera_block(build_context_message(camera)) == camera
    assert camera_block("Will this fit?") is None
    scenario = Scenario(
        scenario_id="t",
        target_context="current",
        cue_type="object_in_hand",
        activity_domain="diy",
        cognitive_load="low",
        difficulty_tier="easy",
        time_gap_bucket="seconds",
        context_image=None,
        turn_1_image=None,
        turn_1_user="q1",
        turn_2_image=None,
        turn_2_user="q2",
        turn_3_repair_anchor="repair",
        turn_3_repair_anchor_deictic=None,
        notes="notes",
        answers=KEY,
    )
    judge = LexicalJudge()
    copied = await judge.label(
        JudgeCase(scenario=scenario, turn=2, user_message=message, response="A phillips tip over a hinge.")
    )
    assert copied.label is None and "copied from the camera block" in copied.unscored_reason
    own = await judge.label(
        JudgeCase(scenario=scenario, turn=2, user_message=message, response="Yes, that screwdriver fits.")
    )
    assert own.label == "current"
    # Turn 3's message (the repair anchor) has no camera block: nothing is discounted
    repair = await judge.label(
        JudgeCase(
            scenario=scenario,
            turn=3,
            user_message="I mean the one in my hand now.",
            response="A phillips tip.",
            turn_2_message=message,
        )
    )
    assert repair.label == "current"


def test_a_near_match_never_crosses_a_negation():
    """ "I can see ..." once matched the abstain phrase "can't see" (ratio 0.875) and a reply
    describing the scene was labelled abstain; with no signal left the reply is unscored."""
    from benchmark.judges.rules import lexical_label
    from benchmark.judges.signals import fuzzy_hits
    from core.scenario import load_bank

    answers = load_bank(None).get("sc-01").answers
    assert "can't see" in answers.abstain_indicators
    assert lexical_label("I can see a bright room and a wooden table in front of you.", answers) == (None, "no signal")
    assert fuzzy_hits("I can see a red mug.", ["can't see"]) == []
    assert [h.matched for h in fuzzy_hits("I cant see it well", ["can't see"])] == ["cant see"]
    assert fuzzy_hits("there is no lid on it", ["a lid on it"]) == []
