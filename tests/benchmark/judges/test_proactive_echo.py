"""Issue 48: a remark conveys the event only through words it did not copy from what the user said or
from the camera text it was given. A scripted model that repeats the opening line at every probe
(the bundled local model does this on pa-01) catches nothing and its echoes are counted; the same
model naming the event in new words inside the window is a hit; rescoring a run recorded before the
rule gives the new counts."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from benchmark.judges.lexical import LexicalJudge
from benchmark.rescore import rescore
from benchmark.scoring.proactive import cell_metrics, echoes, judge_watching
from core.proactive_scenario import load_proactive
from core.records import TrialRecord
from core.watching import Probe, Watching

BANK = Path("benchmark/v1/proactive.json")


def _scenario(scenario_id: str):
    return {s.scenario_id: s for s in load_proactive(BANK)}[scenario_id]


def _scripted(scenario, answer) -> Watching:
    """A probe every 5 s of stream, each answered by `answer(scene)` 300 ms after asking."""
    probes = []
    for n, t in enumerate(range(5_000, scenario.stream_ms, 5_000), start=1):
        scene = max(i for i, start in enumerate(scenario.scene_starts_ms) if start <= t)
        probes.append(
            Probe(n=n, asked_ms=t, frame_ms=t - 200, text=answer(scene), silent=False, spoke_ms=t + 300, scene=scene)
        )
    return Watching(
        strategy="every:5",
        kind=scenario.kind,
        stream_ms=scenario.stream_ms,
        scene_starts_ms=scenario.scene_starts_ms,
        onset_ms=scenario.onset_ms,
        window_end_ms=scenario.window_end_ms,
        expected=scenario.event.expected if scenario.event else (),
        probes=tuple(probes),
    )


def _record(scenario, watching: Watching) -> TrialRecord:
    return TrialRecord(
        scenario_id=scenario.scenario_id,
        condition="baseline",
        trial=0,
        target_context=scenario.target_context,
        cue_type=scenario.cue_type,
        subset="proactive",
        proactive=watching.strategy,
        watching=watching,
    )


def test_a_model_that_repeats_the_opening_line_at_every_probe_catches_nothing_and_its_echoes_are_counted():
    scenario = _scenario("pa-01")  # "... Tell me when the water in the big pot is ready for the pasta."
    scored = asyncio.run(judge_watching(scenario, _scripted(scenario, lambda _: scenario.opening_user), LexicalJudge()))
    inside = [p for p in scored.probes if scenario.onset_ms <= p.spoke_ms <= scenario.window_end_ms]
    assert inside, "a probe falls inside the window"
    assert scored.outcome == "miss"
    assert [p.outcome for p in scored.probes] == ["false_alarm"] * len(scored.probes)
    assert all(p.echo and p.verdict is None for p in scored.probes)  # the judge is not asked about an echo
    cell = cell_metrics([_record(scenario, scored)], None, ["test"])
    assert cell["hits"] == 0 and cell["echoes"] == len(scored.probes) == cell["false_alarms"]
    assert cell["recall"]["k"] == 0


def test_the_same_model_naming_the_event_in_new_words_inside_the_window_is_a_hit():
    scenario = _scenario("pa-01")

    def answer(scene: int) -> str:
        return "The water is boiling now, add the pasta." if scene == scenario.event.scene else scenario.opening_user

    scored = asyncio.run(judge_watching(scenario, _scripted(scenario, answer), LexicalJudge()))
    assert scored.outcome == "hit"
    hit = next(p for p in scored.probes if p.outcome == "hit")
    assert not hit.echo and scenario.onset_ms <= hit.spoke_ms <= scenario.window_end_ms
    assert sum(p.echo for p in scored.probes) == sum(p.scene != scenario.event.scene for p in scored.probes)


def test_copied_camera_text_is_an_echo_and_a_key_in_new_words_beside_copied_ones_is_not():
    scenario = _scenario("pa-01")
    scene = scenario.event.scene
    camera = scenario.scenes[scene].camera
    copied = Probe(n=1, asked_ms=1, frame_ms=1, text=f"I see: {camera}", silent=False, spoke_ms=1, scene=scene)
    recorded = Probe(
        n=2,
        asked_ms=1,
        frame_ms=1,
        text="A tall steel vessel of rolling water, thick white plume.",
        silent=False,
        spoke_ms=1,
        scene=scene,
        camera="a tall steel vessel of rolling water with a thick white plume",
    )
    own = Probe(
        n=3,
        asked_ms=1,
        frame_ms=1,
        text=f"{scenario.opening_user} It is boiling now.",
        silent=False,
        spoke_ms=1,
        scene=scene,
    )
    assert echoes(copied, scenario) and echoes(recorded, scenario)
    assert not echoes(own, scenario)


def test_rescoring_a_run_recorded_before_the_rule_gives_the_new_counts(tmp_path):
    scenario = _scenario("pa-01")
    watching = _scripted(scenario, lambda _: scenario.opening_user)
    onset, end = scenario.onset_ms, scenario.window_end_ms
    before = []  # the outcomes the rule before gave these remarks (the echo inside the window was the hit)
    hit = False
    for probe in watching.probes:
        if probe.frame_ms < onset:
            before.append("false_alarm")
        elif not hit and probe.spoke_ms <= end:
            before.append("hit")
            hit = True
        else:
            before.append("duplicate")
    old = watching.replace(
        probes=tuple(
            Probe(
                n=p.n,
                asked_ms=p.asked_ms,
                frame_ms=p.frame_ms,
                text=p.text,
                silent=p.silent,
                spoke_ms=p.spoke_ms,
                scene=p.scene,
                outcome=o,
            )
            for p, o in zip(watching.probes, before)
        ),
        outcome="hit",
    )
    line = _record(scenario, old).to_json()
    for probe in line["watching"]["probes"]:  # a record of the earlier schema has neither field
        probe.pop("echo", None)
        probe.pop("camera", None)
    run = tmp_path / "old"
    run.mkdir()
    (run / "transcripts.jsonl").write_text(json.dumps(line) + "\n")
    (run / "manifest.json").write_text(
        json.dumps(
            {
                "candidate_model": "local",
                "judge_family": "lexical",
                "judge_model": "lexical",
                "subset": "proactive",
                "proactive": ["every:5"],
            }
        )
    )
    summary = rescore(run, judge_family="lexical", output_dir=tmp_path / "new", progress=lambda _: None)
    [cell] = summary["proactive"]["baseline"].values()
    assert (cell["hits"], cell["duplicates"], cell["echoes"]) == (0, 0, len(watching.probes))
    assert cell["false_alarms"] == len(watching.probes)
    findings = (tmp_path / "new" / "findings.md").read_text()
    assert f"{len(watching.probes)} remarks only echoed the user's words or the camera text" in findings
    assert "false_alarm (echo)" in findings


def test_words_copied_from_the_opening_line_as_it_was_heard_are_an_echo_too():
    scenario = _scenario("pa-01")
    heard = "I'm going to chop millions. Tell me when the water in the big pot is ready for the pasta."
    remark = Probe(
        n=1,
        asked_ms=1,
        frame_ms=1,
        text="You're going to chop millions, the water in the big pot is ready for the pasta.",
        silent=False,
        spoke_ms=1,
        scene=scenario.event.scene,
    )
    assert echoes(remark, scenario, (heard,))
    assert not echoes(
        Probe(
            n=1, asked_ms=1, frame_ms=1, text="Sure, I'll keep chopping millions.", silent=False, spoke_ms=1, scene=0
        ),
        scenario,
    )
    assert echoes(
        Probe(n=1, asked_ms=1, frame_ms=1, text="I'll keep chopping millions.", silent=False, spoke_ms=1, scene=0),
        scenario,
        ("I'll keep chopping millions now",),
    )
