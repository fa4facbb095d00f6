"""The lexical judge's rules and its documented agreement on the hand-labelled set."""

from pathlib import Path

from benchmark.judges.agreement import FIXTURE_DIR, lexical_agreement, load_labelled_set
from benchmark.judges.base import LABELS, JudgeCase
from benchmark.judges.lexical import LexicalJudge, lexical_label
from benchmark.scenario import AnswerKey, Scenario

DOCS = Path(__file__).resolve().parents[1] / "docs" / "judging.md"
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
        "t", "current", "object_in_hand", "diy", "low", "easy", "seconds", None, None, "q1", None, "q2",
        "repair", None, "notes", KEY,
    )
    judge = LexicalJudge()
    verdict = await judge.label(JudgeCase(scenario, 2, "q2", "Use the screwdriver."))
    assert verdict.label == "current" and verdict.judge == "lexical" and verdict.prompt == ""
    unscored = await judge.label(JudgeCase(scenario, 2, "q2", "Sure thing."))
    assert unscored.label is None and unscored.unscored_reason == "no signal"


def test_fixture_set_is_big_enough_and_covers_every_label():
    items = load_labelled_set(FIXTURE_DIR)
    assert len(items) >= 60
    assert len({item.scenario for item in items if item.split == "bank"}) >= 10  # real bank scenarios
    assert {item.human_label for item in items} == set(LABELS)
    assert len({item.response_id for item in items}) == len(items)


def test_documented_agreement_matches_the_computed_figure():
    items = load_labelled_set(FIXTURE_DIR)
    docs = DOCS.read_text(encoding="utf-8")
    overall = lexical_agreement(items)
    assert f"all: {overall.line()}" in docs
    for split in ("tuning", "holdout", "bank"):
        part = lexical_agreement([item for item in items if item.split == split])
        assert f"{split}: {part.line()}" in docs
