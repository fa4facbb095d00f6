"""Code signals: word-boundary hits, fuzzy hits, contrastive phrases."""

from benchmark.judges.signals import FUZZY_THRESHOLD, code_signals, fuzzy_hits, word_boundary_hits
from benchmark.scoring.signals import code_signal_label
from core.scenario import AnswerKey

TOOLS = AnswerKey(
    current_answers=("screwdriver", "phillips", "cutting board"),
    prior_answers=("hammer", "nail", "pan"),
    clarify_indicators=("which one", "do you mean"),
    abstain_indicators=("can't see",),
)


def test_word_boundary_does_not_match_inside_longer_words():
    assert word_boundary_hits("Check the solar panel first.", ["pan"]) == []
    assert word_boundary_hits("Check the pan first.", ["pan"]) == ["pan"]
    assert word_boundary_hits("The PAN is hot", ["pan"]) == ["pan"]
    assert word_boundary_hits("a hammerhead shark", ["hammer"]) == []


def test_tokens_are_escaped_not_read_as_regex():
    assert word_boundary_hits("set it to 3.5 mm", ["3.5"]) == ["3.5"]
    assert word_boundary_hits("set it to 305 mm", ["3.5"]) == []


def test_word_boundary_hits_agree_with_the_regex_they_replace():
    import re

    responses = [
        "The pan, the PAN! pan_handle (pan) 3.5mm and 3.5 mm",
        "x-ray vs X-Ray; café au lait, CAFÉ.",
        "Straße und strasse",
        "İstanbul's pan is here",
        "naïve_tool or naïve tool",
        "",
        "(c) 2024 -- c++ ok",
        "a hammer-head, hammer_head, hammerhead, Hammer.",
        "tab\there and new\nline pan",
    ]
    tokens = [
        "pan",
        "3.5",
        "3.5mm",
        "x-ray",
        "café",
        "straße",
        "istanbul",
        "pan is",
        "naïve",
        "naïve tool",
        "(c)",
        "c++",
        "hammer",
        "head",
        "tab",
        "line pan",
        "-",
        "  pan  ",
        "",
    ]
    for response in responses:
        expected = [
            t.strip()
            for t in tokens
            if t.strip() and re.search(r"\b" + re.escape(t.strip()) + r"\b", response, re.IGNORECASE)
        ]
        assert word_boundary_hits(response, tokens) == expected, response


def test_fuzzy_catches_plurals_and_small_misspellings():
    hits = {h.token: h for h in fuzzy_hits("Grab the hamer and two nails", ["hammer", "nail"])}
    assert hits["nail"].kind == "plural" and hits["nail"].matched == "nails"
    assert hits["hammer"].kind == "ratio" and hits["hammer"].ratio >= FUZZY_THRESHOLD
    knives = fuzzy_hits("the knives are dull", ["knife"])
    assert [h.matched for h in knives] == ["knives"]


def test_fuzzy_rejects_different_words_and_short_tokens():
    assert fuzzy_hits("fire up the grill", ["drill"]) == []  # ratio 0.8, under the threshold
    assert fuzzy_hits("the panel and the pane", ["pan"]) == []  # short token: plurals only
    assert fuzzy_hits("two cutting boards", ["cutting board"])[0].matched == "cutting boards"


def test_fuzzy_skips_tokens_already_found_on_word_boundaries():
    signals = code_signals("The hammer and the hammers", TOOLS)
    assert signals["word_boundary"]["prior_answers"] == ["hammer"]
    assert signals["fuzzy"]["prior_answers"] == []


def test_contrast_earlier_then_now_names_both_sides():
    signals = code_signals("Earlier you had the hammer, but now you're holding a screwdriver.", TOOLS)
    contrast = signals["contrastive"]
    assert contrast["pattern"] == "earlier ... now"
    assert (contrast["against"], contrast["toward"]) == ("prior_answers", "current_answers")


def test_contrast_across_two_sentences():
    contrast = code_signals("Before, that was a hammer. Now it's a phillips.", TOOLS)["contrastive"]
    assert (contrast["against"], contrast["toward"]) == ("prior_answers", "current_answers")


def test_contrast_not_the_one_from_before():
    contrast = code_signals("It's the screwdriver now, not the hammer from before.", TOOLS)["contrastive"]
    assert (contrast["against"], contrast["toward"]) == ("prior_answers", "current_answers")


def test_contrast_can_point_back_to_the_earlier_frame():
    contrast = code_signals("Rather than the screwdriver, use the hammer for that.", TOOLS)["contrastive"]
    assert (contrast["against"], contrast["toward"]) == ("current_answers", "prior_answers")
    contrast = code_signals("Not the screwdriver - the hammer you had earlier.", TOOLS)["contrastive"]
    assert (contrast["against"], contrast["toward"]) == ("current_answers", "prior_answers")


def test_contraction_not_anymore():
    contrast = code_signals("That isn't the hammer anymore; grab the phillips.", TOOLS)["contrastive"]
    assert contrast["against"] == "prior_answers"


def test_no_contrast_without_answer_words():
    assert code_signals("Earlier it was raining, now it's sunny.", TOOLS)["contrastive"] is None
    assert code_signals("Use the screwdriver.", TOOLS)["contrastive"] is None


def test_signal_shape_is_what_scoring_reads():
    signals = code_signals("It's the screwdriver now, not the hammer from before.", TOOLS)
    assert set(signals) == {"word_boundary", "fuzzy", "contrastive"}
    assert code_signal_label(signals) == "current"
    assert code_signal_label(code_signals("Use the hammer.", TOOLS)) == "prior"


def test_empty_response_has_no_hits():
    signals = code_signals("", TOOLS)
    assert all(v == [] for v in signals["word_boundary"].values())
    assert signals["contrastive"] is None
