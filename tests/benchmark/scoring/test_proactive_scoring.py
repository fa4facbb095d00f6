"""The proactive scoring rule on scripted remark timelines, the silence marker's filter, the probe
schedule, and the record's watching block."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from benchmark.judges.lexical import LexicalJudge
from benchmark.scoring.proactive import cell_metrics, decide, judge_watching
from core.judge import Verdict
from core.proactive_scenario import load_proactive
from core.records import RecordError, TrialRecord
from core.watching import Probe, Watching, is_silent
from streaming.proactive import ProbeSchedule, SilenceFilter, parse_strategies, parse_strategy

ONSET, END = 14_000, 26_000
CONVEYS = Verdict(label="current", rationale="names the event", judge="test")
OTHER = Verdict(label="prior", rationale="talks of the earlier scene", judge="test")
UNSURE = Verdict(label=None, rationale="", judge="test", unscored_reason="no signal")


def event(*probes: Probe) -> Watching:
    return Watching(
        strategy="change",
        kind="event",
        stream_ms=36_000,
        scene_starts_ms=(0, ONSET),
        onset_ms=ONSET,
        window_end_ms=END,
        expected=("boiling",),
        probes=probes,
    )


def remark(n: int, frame_ms: int, spoke_ms: int, text: str = "The water is boiling.") -> Probe:
    return Probe(n=n, asked_ms=frame_ms + 20, frame_ms=frame_ms, text=text, silent=False, spoke_ms=spoke_ms)


def outcomes(watching: Watching) -> list[str | None]:
    return [p.outcome for p in watching.probes]


def test_a_remark_inside_the_window_that_conveys_the_event_is_the_hit():
    scored = decide(event(remark(1, 14_400, 15_500)), {1: CONVEYS})
    assert outcomes(scored) == ["hit"] and scored.outcome == "hit"


def test_a_remark_made_before_the_event_is_a_false_alarm_even_when_it_names_the_event():
    # asked with a frame of the scene before the onset: it could not have seen the boil
    scored = decide(event(remark(1, 13_000, 14_500)), {1: CONVEYS})
    assert outcomes(scored) == ["false_alarm"] and scored.outcome == "miss"


def test_a_remark_that_conveys_the_event_after_the_window_is_late_and_the_event_missed():
    scored = decide(event(remark(1, 27_000, 27_900)), {1: CONVEYS})
    assert outcomes(scored) == ["late"] and scored.outcome == "miss"


def test_later_remarks_that_convey_the_event_are_duplicates():
    scored = decide(
        event(remark(1, 14_400, 15_000), remark(2, 20_000, 21_000), remark(3, 30_000, 30_500)),
        {1: CONVEYS, 2: CONVEYS, 3: CONVEYS},
    )
    assert outcomes(scored) == ["hit", "duplicate", "duplicate"]


def test_a_remark_that_does_not_convey_the_event_is_a_false_alarm_and_one_the_judge_cannot_tell_is_unscored():
    scored = decide(
        event(remark(1, 14_400, 15_000), remark(2, 16_000, 17_000), remark(3, 18_000, 19_000)),
        {1: OTHER, 2: UNSURE, 3: CONVEYS},
    )
    assert outcomes(scored) == ["false_alarm", "unscored", "hit"] and scored.outcome == "hit"


def test_silent_probes_have_no_outcome_and_an_event_with_only_silence_is_missed():
    silent = Probe(n=1, asked_ms=15_000, frame_ms=14_800, text="[silent]", silent=True)
    scored = decide(event(silent), {})
    assert outcomes(scored) == [None] and scored.outcome == "miss"


def test_every_remark_in_a_quiet_control_is_a_false_alarm():
    quiet = Watching(
        strategy="every:5",
        kind="quiet",
        stream_ms=34_000,
        scene_starts_ms=(0, 16_000),
        onset_ms=None,
        window_end_ms=None,
        expected=(),
        probes=(
            remark(1, 5_000, 6_000, "Nice desk."),
            Probe(n=2, asked_ms=10_020, frame_ms=10_000, text="[silent]", silent=True),
            remark(3, 16_000, 17_000, "You moved the mug."),
        ),
    )
    scored = decide(quiet, {})
    assert outcomes(scored) == ["false_alarm", None, "false_alarm"] and scored.outcome is None


def test_remarks_are_taken_in_the_order_they_were_heard():
    # probe 2 was heard first (inside the window); probe 1's answer came later
    scored = decide(event(remark(1, 14_200, 22_000), remark(2, 16_000, 17_000)), {1: CONVEYS, 2: CONVEYS})
    assert outcomes(scored) == ["duplicate", "hit"]


def _record(scenario_id: str, watching: Watching) -> TrialRecord:
    target = "speak_up" if watching.kind == "event" else "stay_quiet"
    return TrialRecord(
        scenario_id=scenario_id,
        condition="baseline",
        trial=0,
        target_context=target,
        cue_type="x",
        subset="proactive",
        proactive=watching.strategy,
        watching=watching,
    )


def test_a_cell_adds_up_hits_and_misses_to_events_and_counts_false_alarms_in_quiet_controls():
    hit = decide(event(remark(1, 14_400, 15_500)), {1: CONVEYS})
    missed = decide(event(remark(1, 2_000, 3_000, "Nice pot.")), {})
    quiet = decide(
        Watching(
            strategy="change",
            kind="quiet",
            stream_ms=30_000,
            scene_starts_ms=(0, 15_000),
            onset_ms=None,
            window_end_ms=None,
            expected=(),
            probes=(remark(1, 1_000, 2_000, "A desk."),),
        ),
        {},
    )
    cell = cell_metrics([_record("a", hit), _record("b", missed), _record("q", quiet)], 0.01, [])
    assert cell["hits"] + cell["misses"] == cell["events"] == 2
    assert cell["false_alarms"] == 2 and cell["false_alarms_in_quiet_controls"] == 1
    assert cell["recall"]["k"] == 1 and cell["recall"]["n"] == 2
    assert cell["precision"]["k"] == 1 and cell["precision"]["n"] == 3
    assert cell["false_alarms_per_min"] == pytest.approx(2 / ((36 + 36 + 30) / 60), abs=1e-3)
    assert cell["time_to_speak_p50_s"] == pytest.approx(1.5)
    # three scenarios are too few for a bootstrap: the Wilson interval, never a zero-width one
    assert cell["recall"]["ci_method"] == "wilson" and cell["recall"]["ci_low"] < 0.5 < cell["recall"]["ci_high"]
    assert cell["cost_per_hour_usd"] == pytest.approx(0.01 / ((36 + 36 + 30) / 3600), rel=1e-3)


def test_the_lexical_judge_hears_a_remark_that_names_the_event_in_its_own_words():
    scenario = load_proactive(Path("benchmark/v1/proactive.json"))[0]  # pa-01: the pot comes to the boil
    onset, scene = scenario.onset_ms, scenario.event.scene
    watching = Watching(
        strategy="change",
        kind="event",
        stream_ms=scenario.stream_ms,
        scene_starts_ms=scenario.scene_starts_ms,
        onset_ms=scenario.onset_ms,
        window_end_ms=scenario.window_end_ms,
        expected=scenario.event.expected,
        probes=(
            Probe(
                n=1,
                asked_ms=onset + 600,
                frame_ms=onset + 400,
                text="Your water is boiling now, add the pasta.",
                silent=False,
                spoke_ms=onset + 1400,
                scene=scene,
            ),
            Probe(
                n=2,
                asked_ms=onset + 6000,
                frame_ms=onset + 5800,
                text="Nice onions.",
                silent=False,
                spoke_ms=onset + 6700,
                scene=scene,
            ),
        ),
    )
    scored = asyncio.run(judge_watching(scenario, watching, LexicalJudge()))
    assert outcomes(scored)[0] == "hit" and scored.probes[0].verdict.label == "current"
    assert outcomes(scored)[1] == "false_alarm"  # "Nice onions." names nothing a warning names


def test_the_watching_block_survives_a_round_trip_and_a_bad_one_is_named():
    watching = decide(
        event(remark(1, 14_400, 15_500), Probe(n=2, asked_ms=20_000, frame_ms=19_800, text="[silent]", silent=True)),
        {1: CONVEYS},
    )
    record = _record("pa-01", watching)
    again = TrialRecord.from_json(json.loads(record.to_line()))
    assert again.watching == watching and again.sweep.proactive == "change"
    broken = json.loads(record.to_line())
    broken["watching"]["probes"][0]["outcome"] = "great"
    with pytest.raises(RecordError, match=r"watching.*probes\[0\].*outcome"):
        TrialRecord.from_json(broken, "transcripts.jsonl line 1")


@pytest.mark.parametrize(
    "pieces, silent, shown",
    [
        (["[sil", "ent]"], True, ""),
        (["[", "silent", "]."], True, ""),
        (["  [Silent]"], True, ""),
        (["[s", "ure, the pot"], False, "[sure, the pot"),
        (["Careful", ", the blade"], False, "Careful, the blade"),
        ([], True, ""),
    ],
)
def test_the_silence_filter_shows_nothing_of_the_marker_and_everything_of_a_remark(pieces, silent, shown):
    quiet = SilenceFilter()
    out = []
    for piece in pieces:
        out += quiet.on_text(piece)[0]
    out += quiet.finish()[0]
    assert quiet.silent is silent and "".join(out) == shown


def test_a_spoken_marker_is_never_played_but_a_spoken_remark_is():
    quiet = SilenceFilter()
    assert quiet.on_audio(b"\x01\x00") == [] and quiet.on_text("[silent]") == ([], [])
    assert quiet.finish() == ([], []) and quiet.silent
    loud = SilenceFilter()
    loud.on_audio(b"\x01\x00")
    assert loud.on_text("Stop") == (["Stop"], [b"\x01\x00"])
    assert is_silent(" [silent] ") and not is_silent("silently the pot boils")


def test_strategies_parse_and_bad_ones_say_what_is_allowed():
    assert parse_strategy("every:5").name == "every:5" and parse_strategy("change").probes
    assert not parse_strategy("native").probes
    assert [s.name for s in parse_strategies("change, every:2.5")] == ["change", "every:2.5"]
    for bad, words in (
        ("every:0", "from 1 to 60"),
        ("sometimes", "change, every:5, native"),
        ("change:3", "change, every:5, native"),
    ):
        with pytest.raises(ValueError, match=words):
            parse_strategy(bad)
    with pytest.raises(ValueError, match="twice"):
        parse_strategies("change,change")


def test_change_probes_once_per_new_picture_and_every_n_keeps_its_slots():
    import numpy as np

    a, b = np.zeros((48, 64), np.uint8), np.full((48, 64), 200, np.uint8)
    change = ProbeSchedule(parse_strategy("change"))
    change.sent(a)
    assert change.due(0)  # the first frame is a change
    change.asked(0, a)
    change.sent(a)
    assert not change.due(1000)
    change.sent(b)
    assert change.due(2000)
    every = ProbeSchedule(parse_strategy("every:5"))
    assert not every.due(1000)  # the first slot is 5 s after the first look
    assert every.due(6000)
    every.asked(6000, None)
    assert not every.due(8000) and every.due(11_000)
    every.asked(23_000, None)  # slots missed while busy are skipped, not made up
    assert not every.due(24_000) and every.due(26_000)


def _scenario(scenario_id: str):
    return {s.scenario_id: s for s in load_proactive(Path("benchmark/v1/proactive.json"))}[scenario_id]


def test_a_remark_that_only_describes_the_new_scene_has_not_conveyed_the_event():
    scenario = _scenario("pa-08")  # grapes spill and the dog is about to eat them
    onset, scene = scenario.onset_ms, scenario.event.scene
    echo = scenario.scenes[scene].camera.split(";")[0].split(".")[0]  # the scene's own words, no warning
    warning = "Stop, grapes are toxic for him!"
    watching = Watching(
        strategy="change",
        kind="event",
        stream_ms=scenario.stream_ms,
        scene_starts_ms=scenario.scene_starts_ms,
        onset_ms=onset,
        window_end_ms=scenario.window_end_ms,
        expected=scenario.event.expected,
        probes=(
            Probe(
                n=1,
                asked_ms=onset + 500,
                frame_ms=onset + 400,
                text=f"The camera sees: {echo}.",
                silent=False,
                spoke_ms=onset + 1200,
                scene=scene,
            ),
            Probe(
                n=2,
                asked_ms=onset + 3000,
                frame_ms=onset + 2800,
                text=warning,
                silent=False,
                spoke_ms=onset + 3600,
                scene=scene,
            ),
        ),
    )
    scored = asyncio.run(judge_watching(scenario, watching, LexicalJudge()))
    # it names none of the keys (the words it copied from the camera do not count): it does not convey the event
    assert outcomes(scored) == ["false_alarm", "hit"], [p.verdict.rationale for p in scored.probes]


def test_rescore_judges_a_proactive_trials_remarks_again(tmp_path):
    from benchmark.rescore import rejudge_record

    scenario = _scenario("pa-01")
    onset = scenario.onset_ms
    watching = Watching(
        strategy="every:5",
        kind="event",
        stream_ms=scenario.stream_ms,
        scene_starts_ms=scenario.scene_starts_ms,
        onset_ms=onset,
        window_end_ms=scenario.window_end_ms,
        expected=scenario.event.expected,
        probes=(
            Probe(
                n=1,
                asked_ms=onset + 600,
                frame_ms=onset + 400,
                text="The water is boiling, add the pasta.",
                silent=False,
                spoke_ms=onset + 900,
                scene=scenario.event.scene,
                outcome="false_alarm",
            ),
        ),
    )
    record = _record("pa-01", watching).replace(watching=watching.replace(outcome="miss"))
    again = asyncio.run(rejudge_record(record, scenario, LexicalJudge()))
    assert again.watching.outcome == "hit" and again.watching.probes[0].outcome == "hit"
    assert again.watching.probes[0].verdict.judge == "lexical"
