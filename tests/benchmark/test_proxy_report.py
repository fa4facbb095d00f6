"""`wearsim proxy-report`: the text proxy against perceived media, paired trial by trial.

The fixture (built here from `TrialRecord`s, written with `to_line`) is two
runs of condition baseline, trial 0, on five scenarios of the shipped bank,
all with target `current` and shift type `object_in_hand`:

    scenario  A (text)  B (stream)  B's perceived channels on Turns 1-2
    sc-01     pass      fail        speech on Turn 2            -> speech
    sc-02     pass      fail        camera on Turns 1 and 2     -> scene
    sc-03     pass      fail        speech and camera, both     -> both
    sc-05     pass      pass        speech on Turn 1
    sc-06     pass      errored     (no turns recorded)

Worked by hand:
- Pairs of the condition: 5 cells, 4 scored on both sides (sc-06 errored in
  B): 4 >= 5 / 2, so the headline is a measurement.
- Balanced accuracy (only `current` has trials): A = 4/4 = 1, B = 1/4 = 0.25,
  B - A = -0.75.
- Paired bootstrap: each draw picks 4 scenarios with replacement; with k the
  number of sc-05 picks, A = 1 and B = k/4, so B - A = -(4 - k)/4, with
  k ~ Binomial(4, 1/4): P(k=0) = 81/256 = 0.316, P(k<=2) = 243/256 = 0.949,
  P(k<=3) = 255/256 = 0.996. The 2.5th percentile lies in the k = 0 mass
  (-1.0) and the 97.5th between 0.949 and 0.996, i.e. at k = 3 (-0.25):
  interval [-1.0, -0.25].
- McNemar: 3 pairs passed only in A, 0 only in B: p = 2 * P(X <= 0),
  X ~ Binomial(3, 1/2) = 2 / 8 = 0.25.
- Attribution: speech 1, scene 1, both 1, neither 0.
- WER (lower-cased words, apostrophes dropped):
  sc-01 T2 "Will this one fit what I'm lining up?" heard "Will this one fit
  what I'm lying up": 1 substitution / 8 words = 0.125;
  sc-03 T1 exact = 0; sc-03 T2 "Is this one okay for the thick stuff too?"
  heard "Is this one okay for the sick stuff": 1 substitution + 1 deletion
  / 9 = 0.2222; sc-05 T1 "Am I loading this too heavy?" heard "Am I loading
  this to heavy?": 1/6 = 0.1667. Mean 0.1285, median (0.125 + 0.1667) / 2.
- Camera: sc-02 T1 "A knife over a pile of orange cubes." names "knife",
  the authored block names no listed noun; the other three perceived blocks
  name none.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from PIL import Image

from benchmark.cli import main
from benchmark.proxy import build_proxy_report
from benchmark.proxy.channels import attribute, latency, similarity
from benchmark.run.manifest import sha256_file
from core.candidate import Reply, Usage
from core.judge import Verdict
from core.records import TrialRecord, TurnInput, TurnMetrics, TurnResult
from core.scenario import load_bank

BANK = load_bank()
PLOTS = ("proxy_paired_accuracy.png", "proxy_wer_histogram.png", "proxy_flips_by_channel.png")


def turn(
    scenario_id: str,
    n: int,
    *,
    speech: str | None = None,
    camera: str | None = None,
    metrics: TurnMetrics | None = None,
) -> TurnResult:
    """A played turn: authored text unless `speech` / `camera` give what perception produced."""
    s = BANK.get(scenario_id)
    authored_speech = s.turn_1_user if n == 1 else s.turn_2_user
    authored_camera = s.turn_1_image if n == 1 else s.turn_2_image
    turn_input = TurnInput(
        turn=n,
        camera_block=camera or authored_camera,
        speech=speech or authored_speech,
        camera_source="perceived" if camera else "authored",
        speech_source="perceived" if speech else "authored",
        timings={"asr_decode_s": 0.5} if metrics else {},
    )
    return TurnResult(
        turn=n,
        input=turn_input,
        reply=Reply(
            text="an answer",
            model="local",
            usage=Usage(input_tokens=10, output_tokens=5),
            latency_s=1.0,
            first_token_s=0.4,
        ),
        metrics=metrics or TurnMetrics(),
    )


def record(scenario_id: str, passed: bool | None, via: str, turns=(), error: str | None = None) -> TrialRecord:
    s = BANK.get(scenario_id)
    label = None if passed is None or error else (s.target_context if passed else "prior")
    verdict = Verdict(label=label, rationale="fixture", judge="lexical") if label else None
    return TrialRecord(
        scenario_id=scenario_id,
        condition="baseline",
        trial=0,
        target_context=s.target_context,
        cue_type=s.cue_type,
        difficulty_tier=s.difficulty_tier,
        activity_domain=s.activity_domain,
        subset=via,
        via="local",
        turns=tuple(turns),
        turn_2_response="an answer",
        turn_2_judge=verdict,
        error=error,
    )


def write_run(directory: Path, records: list[TrialRecord], via: str, **manifest) -> Path:
    directory.mkdir(parents=True)
    base = {
        "scenarios_sha256": sha256_file(BANK.files["scenarios"]),
        "expected_answers_sha256": sha256_file(BANK.files["expected_answers"]),
        "ranking_condition": "baseline",
        "via": via,
        "candidate_model": "local",
        "judge_model": "lexical",
        "bank_source": str(BANK.source),
    }
    (directory / "manifest.json").write_text(json.dumps({**base, **manifest}), encoding="utf-8")
    (directory / "transcripts.jsonl").write_text("".join(r.to_line() for r in records), encoding="utf-8")
    return directory


STREAM_METRICS = TurnMetrics(transcript_final=0.5, camera_block=0.8, first_token=2.0, reply_done=3.0)


@pytest.fixture()
def runs(tmp_path):
    text = [
        record(sid, True, "direct", [turn(sid, 1), turn(sid, 2)])
        for sid in ("sc-01", "sc-02", "sc-03", "sc-05", "sc-06")
    ]
    stream = [
        record(
            "sc-01", False, "stream", [turn("sc-01", 1), turn("sc-01", 2, speech="Will this one fit what I'm lying up")]
        ),
        record(
            "sc-02",
            False,
            "stream",
            [
                turn("sc-02", 1, camera="A knife over a pile of orange cubes."),
                turn("sc-02", 2, camera="A <b>round</b> red shape & a hand."),
            ],
        ),
        record(
            "sc-03",
            False,
            "stream",
            [
                turn(
                    "sc-03",
                    1,
                    speech="Is this strong enough for the thick stuff?",
                    camera="Two red grips.",
                    metrics=STREAM_METRICS,
                ),
                turn(
                    "sc-03",
                    2,
                    speech="Is this one okay for the sick stuff",
                    camera="A blue tool.",
                    metrics=STREAM_METRICS,
                ),
            ],
        ),
        record("sc-05", True, "stream", [turn("sc-05", 1, speech="Am I loading this to heavy?"), turn("sc-05", 2)]),
        record("sc-06", None, "stream", error="ServerError: turn 2 did not complete"),
    ]
    return write_run(tmp_path / "text", text, "direct"), write_run(tmp_path / "stream", stream, "stream")


def test_headline_difference_interval_and_mcnemar_match_the_hand_computation(runs):
    report = build_proxy_report(*runs)
    head, cells = report["headline"], report["cells"]
    assert (cells["cells"], cells["in_both"], cells["scored_both"], cells["errored_b"]) == (5, 5, 4, 1)
    assert head["is_measurement"]
    assert head["balanced_accuracy_a"] == 1.0 and head["balanced_accuracy_b"] == 0.25
    assert head["difference"] == pytest.approx(-0.75)
    assert (head["ci_low"], head["ci_high"]) == pytest.approx((-1.0, -0.25))
    assert (head["mcnemar"]["a_pass_b_fail"], head["mcnemar"]["a_fail_b_pass"]) == (3, 0)
    assert head["mcnemar"]["p_value"] == pytest.approx(0.25)
    assert head["text"].startswith("Balanced Turn 2 accuracy moved by -75.0 points")
    [cue] = report["by_cue_type"]
    [target] = report["by_target_class"]
    for row in (cue, target):
        assert (row["pairs"], row["accuracy_a"], row["accuracy_b"]) == (4, 1.0, 0.25)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((-1.0, -0.25))
        assert row["p_value"] == pytest.approx(0.25)
    assert (cue["group"], target["group"]) == ("object_in_hand", "current")


def test_flips_are_attributed_to_the_channels_perceived_in_them(runs):
    attribution = build_proxy_report(*runs)["attribution"]
    assert attribution["counts"] == {"speech": 1, "scene": 1, "both": 1, "neither": 0, "unknown": 0}
    by_scenario = {f["scenario_id"]: f for f in attribution["flips"]}
    assert by_scenario["sc-01"]["speech_perceived_turns"] == [2] and by_scenario["sc-01"]["category"] == "speech"
    assert by_scenario["sc-02"]["scene_perceived_turns"] == [1, 2] and by_scenario["sc-02"]["category"] == "scene"
    assert by_scenario["sc-03"]["category"] == "both"
    assert {f["direction"] for f in attribution["flips"]} == {"A pass, B fail"}


def test_a_flip_with_every_channel_authored_is_neither_and_one_without_turns_is_unknown():
    authored = [turn("sc-01", 1), turn("sc-01", 2)]
    pairs = [
        (record("sc-01", False, "direct", authored), record("sc-01", True, "stream", authored)),
        (record("sc-02", True, "direct"), record("sc-02", False, "stream")),
        (record("sc-03", True, "direct"), record("sc-03", True, "stream")),
    ]
    result = attribute(pairs)
    assert result["counts"] == {"speech": 0, "scene": 0, "both": 0, "neither": 1, "unknown": 1}
    assert result["flips"][0]["direction"] == "A fail, B pass"


def test_channel_counts_word_error_rate_and_camera_checks(runs):
    report = build_proxy_report(*runs)
    text, stream = report["channels"]["A"], report["channels"]["B"]
    assert text["provenance"]["speech"] == {"perceived": 0, "authored": 10, "none": 0}
    assert text["speech"]["n"] == 0 and text["camera"]["n"] == 0
    assert stream["provenance"]["turns"] == 8  # sc-06 errored before any turn was recorded
    assert stream["provenance"]["speech"] == {"perceived": 4, "authored": 4, "none": 0}
    assert stream["provenance"]["camera"] == {"perceived": 4, "authored": 4, "none": 0}
    speech = stream["speech"]
    wers = sorted(r["wer"] for r in speech["rows"])
    assert wers == pytest.approx([0.0, 1 / 8, 1 / 6, 2 / 9])
    assert speech["mean"] == pytest.approx((1 / 8 + 1 / 6 + 2 / 9) / 4)
    assert speech["median"] == pytest.approx((1 / 8 + 1 / 6) / 2)
    worst = speech["worst"][0]
    assert (worst["scenario_id"], worst["turn"], worst["perceived"]) == (
        "sc-03",
        2,
        "Is this one okay for the sick stuff",
    )
    assert worst["authored"] == "Is this one okay for the thick stuff too?"
    camera = stream["camera"]
    assert camera["n"] == 4 and camera["with_new_object_nouns"] == 1 and camera["new_nouns"] == {"knife": 1}
    assert camera["new_object_noun_rate"] == pytest.approx(0.25)
    assert "difflib" in camera["similarity"]["measure"]
    assert similarity("a red cup on a table", "a red cup on a table") == 1.0
    assert similarity("a red cup", "two blue plates") == 0.0
    assert similarity("a b c d", "a b x y") == pytest.approx(0.5)  # 2 * 2 matching words / 8 words


def test_latency_decomposition_of_the_stream_run(runs):
    lat = build_proxy_report(*runs)["channels"]["B"]["latency"]
    assert lat["asr"]["n"] == 2 and lat["asr"]["p50"] == pytest.approx(0.5)
    assert lat["describer"]["p50"] == pytest.approx(0.3) and lat["describer"]["p95"] == pytest.approx(0.3)
    assert lat["first_token"]["p95"] == pytest.approx(2.0) and lat["reply_done"]["p50"] == pytest.approx(3.0)
    values = [1.0, 2.0, 3.0, 4.0, 5.0]
    trials = [
        record(
            "sc-01",
            True,
            "stream",
            [
                TurnResult(
                    turn=n,
                    input=turn("sc-01", n).input,
                    reply=Reply(text="x", model="m"),
                    metrics=TurnMetrics(reply_done=v),
                )
            ],
        )
        for v, n in zip(values, (1, 2, 1, 2, 1))
    ]
    assert latency(trials)["reply_done"] == {
        "stage": latency([])["reply_done"]["stage"],
        "n": 5,
        "p50": statistics.median(values),
        "p95": pytest.approx(4.8),
    }
    assert latency(trials)["describer"]["n"] == 0  # no perceived camera block: nothing was described


def test_too_few_scored_pairs_is_not_a_measurement(tmp_path):
    text = [record(sid, True, "direct", [turn(sid, 1), turn(sid, 2)]) for sid in ("sc-01", "sc-02", "sc-03", "sc-05")]
    stream = [
        record("sc-01", True, "stream", [turn("sc-01", 1), turn("sc-01", 2)]),
        record("sc-02", None, "stream", [turn("sc-02", 1), turn("sc-02", 2)]),
        record("sc-03", None, "stream", error="ServerError"),
    ]
    report = build_proxy_report(write_run(tmp_path / "a", text, "direct"), write_run(tmp_path / "b", stream, "stream"))
    head = report["headline"]
    assert head["text"].startswith("1 of 4 pairs scored on both sides: not a measurement")
    assert not head["is_measurement"]
    assert (report["cells"]["only_a"], report["cells"]["unscored_b"], report["cells"]["errored_b"]) == (1, 1, 1)


def test_runs_with_different_bank_hashes_are_refused_in_one_line(runs, capsys):
    text, stream = runs
    manifest = json.loads((stream / "manifest.json").read_text())
    ours = manifest["expected_answers_sha256"]
    manifest["expected_answers_sha256"] = "f" * 64
    (stream / "manifest.json").write_text(json.dumps(manifest))
    assert main(["proxy-report", str(text), str(stream)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "expected_answers_sha256 differs" in err and ours in err and "f" * 64 in err
    assert "scenarios_sha256" not in err.replace("expected_answers_sha256", "")
    assert not (stream / "proxy_report").exists()


def test_cli_errors_are_one_line_and_help_has_an_example(tmp_path, runs, capsys):
    assert main(["proxy-report", str(tmp_path / "nowhere"), str(runs[1])]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nowhere" in err and "run A" in err
    (runs[1] / "transcripts.jsonl").write_text("{not json\n[]\n")
    assert main(["proxy-report", str(runs[0]), str(runs[1])]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "transcripts.jsonl: line 1" in err and "1 more problem" in err
    assert main(["proxy-report", str(runs[0]), str(runs[0]), "--condition", "nope"]) == 2
    assert "--condition nope" in capsys.readouterr().err
    with pytest.raises(SystemExit) as done:
        main(["proxy-report", "--help"])
    assert done.value.code == 0
    assert "wearsim proxy-report runs/text runs/stream" in capsys.readouterr().out


def test_every_output_is_written_and_the_html_is_self_contained(runs, capsys):
    text, stream = runs
    assert main(["proxy-report", str(text), str(stream)]) == 0
    assert "moved by -75.0 points" in capsys.readouterr().out
    out = stream / "proxy_report"
    for name in ("proxy_report.json", "proxy_report.md", "proxy_report.html", *PLOTS):
        assert (out / name).stat().st_size > 0, name
    for name in PLOTS:
        with Image.open(out / name) as image:
            image.verify()
            assert image.format == "PNG"
    report = json.loads((out / "proxy_report.json").read_text())
    assert report["attribution"]["counts"]["speech"] == 1
    markdown = (out / "proxy_report.md").read_text()
    for phrase in (
        "Run A: ",
        "Run B: ",
        "95% interval",
        "A flip is",
        "speech recognition errors could explain 1",
        "difflib",
        "(proxy_wer_histogram.png)",
    ):
        assert phrase in markdown, phrase
    html = (out / "proxy_report.html").read_text()
    assert html.count("data:image/png;base64,") == 3
    assert "http://" not in html and "https://" not in html and "<script" not in html
    assert "&lt;b&gt;round&lt;/b&gt; red shape &amp; a hand." in html and "<b>round</b>" not in html


def test_two_stream_runs_and_a_run_without_perceived_turns(runs, tmp_path, capsys):
    text, stream = runs
    assert main(["proxy-report", str(stream), str(stream), "--output-dir", str(tmp_path / "same")]) == 0
    report = json.loads((tmp_path / "same" / "proxy_report.json").read_text())
    assert report["headline"]["difference"] == 0 and report["attribution"]["total"] == 0
    assert main(["proxy-report", str(text), str(text), "--output-dir", str(tmp_path / "text")]) == 0
    report = json.loads((tmp_path / "text" / "proxy_report.json").read_text())
    assert report["channels"]["B"]["provenance"]["speech"]["perceived"] == 0
    assert report["channels"]["B"]["speech"]["n"] == 0 and report["channels"]["B"]["latency"]["asr"]["n"] == 0
    capsys.readouterr()
