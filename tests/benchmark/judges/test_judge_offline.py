"""The offline judge (issues 46 and 56): its weights reproduce from the stored table of careful
labels, it reads every reply style real assistants use, and docs/judging.md quotes its held-out
figures. Needs no ../shared."""

import json
from pathlib import Path

import pytest

from benchmark.judges.features import FEATURE_NAMES
from benchmark.judges.learn import train
from benchmark.judges.lexical import LexicalJudge
from benchmark.judges.offline import TABLE_PATH, WEIGHTS_PATH, load_model, offline_decision
from core.judge import LABELS, JudgeCase
from core.records import build_user_turn
from core.scenario import load_bank
from scripts import train_offline_judge
from tests.paths import ROOT

DOCS = "".join((ROOT / "docs" / name).read_text(encoding="utf-8") for name in ("judging.md", "offline_judge.md"))
SC01 = load_bank().get("sc-01")  # hammer and nails at Turn 1, a cross-tip screwdriver at a hinge at Turn 2


def judge(reply: str, *, camera: bool = True):
    message = build_user_turn(SC01.turn_2_image if camera else None, SC01.turn_2_user)
    return LexicalJudge().label_now(JudgeCase(scenario=SC01, turn=2, user_message=message, response=reply))


@pytest.mark.slow
def test_refitting_the_stored_table_reproduces_the_shipped_weights_exactly():
    table = json.loads(TABLE_PATH.read_text(encoding="utf-8"))
    assert train_offline_judge.dumps(train(table)) == WEIGHTS_PATH.read_text(encoding="utf-8")


def test_the_stored_table_holds_ids_numbers_and_labels_only():
    table = json.loads(TABLE_PATH.read_text(encoding="utf-8"))
    assert table["features"] == list(FEATURE_NAMES) == load_model()["features"]
    assert len(table["rows"]) == 559  # the replies both careful readers labelled alike
    assert len({row["file"] for row in table["rows"]}) == 4
    for row in table["rows"]:
        assert set(row) == {"file", "scenario", "target", "trial", "x", "label"}  # no judge's label
        assert len(row["x"]) == len(FEATURE_NAMES) and all(isinstance(v, (int, float)) for v in row["x"])
        assert row["label"] in LABELS and row["target"] in LABELS
        assert len(row["scenario"]) <= 8 and len(row["trial"]) <= 16


def test_the_retraining_script_says_where_it_looked_for_the_replies(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(train_offline_judge, "data_candidates", lambda: [tmp_path / "nowhere"])
    assert train_offline_judge.main(["--check"]) == 2
    error = capsys.readouterr().err
    assert str(tmp_path / "nowhere") in error and "WEARSIM_JUDGE_TUNING" in error


def test_the_data_is_looked_for_in_the_documented_order(monkeypatch, tmp_path):
    monkeypatch.setenv("WEARSIM_JUDGE_TUNING", str(tmp_path))
    places = train_offline_judge.data_candidates()
    assert places[0] == tmp_path
    assert places[1] == ROOT.parent / "shared" / "data" / "judge-tuning"
    assert places[2] == Path("/work/shared/data/judge-tuning")


@pytest.mark.parametrize(
    "style, reply, expected",
    [
        (
            "long markdown",
            "## Will it fit?\n\n**Yes.** 🔧\n\n### What I see\n"
            "- A **Phillips screwdriver**, cross-shaped tip\n"
            "- A brass hinge leaf with a small screw hole\n\n### Tips\n1. Press in as you turn.\n2. Go slowly until it "
            "bites.",
            "current",
        ),
        ("terse", "Yes, that Phillips tip fits.", "current"),
        ("question back", "Do you mean the hammer you put down, or the screwdriver in your hand?", "clarify"),
        ("I can't see", "I can't see the screw hole clearly enough to say.", "abstain"),
        (
            "passing mention",
            "The hammer's done its part. That cross-head screwdriver will seat fine in the hinge screw.",
            "current",
        ),
        (
            "compare both",
            "Unlike the hammer, which you swing, the screwdriver needs steady pressure - and yes, its "
            "phillips tip fits that hinge screw.",
            "current",
        ),
        (
            "list both as options",
            "Which one do you mean?\n\n- **The hammer:** fine for the nails.\n- **The screwdriver:** "
            "fits the hinge screw.",
            "clarify",
        ),
        (
            "restated camera block",
            "CONTEXT (current): a slim yellow-and-black handle, cross-shaped tip at a brass leaf.\n"
            "ANSWER: Yes, a Phillips screwdriver like that fits most hinge screws.",
            "current",
        ),
        (
            "guess from the wrong scene",
            "Hold the hammer near the end of the handle and tap each nail in with short strikes.",
            "prior",
        ),
    ],
)
def test_every_reply_style_gets_its_rubric_label(style, reply, expected):
    verdict = judge(reply)
    assert verdict.label == expected, (style, verdict.rationale)


def test_with_no_camera_a_decline_is_abstain_and_asking_what_is_held_is_clarify():
    assert judge("I can't see anything right now, so I can't tell whether it fits.", camera=False).label == "abstain"
    assert (
        judge("I can't see what you're holding - which tool is it, the hammer or a screwdriver?", camera=False).label
        == "clarify"
    )


def test_naming_the_earlier_scene_only_in_passing_is_current():
    verdict = judge(
        "Now that the hammer is down: that phillips screwdriver fits the hinge screw, just press in as you turn."
    )
    assert verdict.label == "current"


def test_unscored_verdicts_say_why():
    assert offline_decision("  ", SC01.answers).reason == "empty response"
    assert offline_decision("Sounds good.", SC01.answers).reason == "no signal"
    weak = offline_decision("Hammer first, then the screwdriver.", SC01.answers, threshold=0.99)
    assert weak.label is None and weak.reason.startswith("below the operating point:")
    assert "rules: " in weak.reason


@pytest.mark.slow
def test_the_figures_docs_quote_are_the_computed_ones():
    from scripts.offline_judge_figures import cross_validation, hand_sets, other_styles

    rows = json.loads(TABLE_PATH.read_text(encoding="utf-8"))["rows"]
    cv = cross_validation(rows)
    lofo, grouped = cv["leave_one_file_out"], cv["grouped_folds"]
    for name, fig in lofo["files"].items():
        assert f"leave {name} out: {fig.line()}" in DOCS
        assert fig.kappa >= 0.75 and fig.coverage >= 0.85  # the bar, on every held-out kind
    assert f"grouped folds pooled: {grouped['pooled'].line()}" in DOCS
    assert grouped["pooled"].kappa >= 0.85 and grouped["pooled"].coverage >= 0.85
    locked, _ = other_styles()
    assert f"other styles (locked): {locked.line()}" in DOCS
    assert locked.coverage >= 0.75 and locked.kappa >= 0.75
    hand = hand_sets()
    assert hand["291 responses"].agreed >= 272
    assert f"291 responses: {hand['291 responses'].line()}" in DOCS
