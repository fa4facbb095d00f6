"""Issue 48: the viewer on a proactive run reads like a Q&A run's and agrees with summary.json: a
neutral headline (not the red box of an unmeasured run), the trial counts summary.json holds (not
"trials: 0: scored 0"), no empty Turn 2 table, the strategy and frame policy in each trial header, a
filter by strategy, and a judge column that says why a remark was not judged instead of "unscored"."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

from benchmark.report import write_report
from benchmark.report.viewer import write_viewer
from core.judge import Verdict
from core.records import TrialRecord
from core.watching import Probe, Watching

ONSET = 20_000


def _trial(sid: str, strategy: str, probes: tuple[Probe, ...], outcome: str | None) -> TrialRecord:
    event = sid.startswith("pa")
    watching = Watching(
        strategy=strategy,
        kind="event" if event else "quiet",
        stream_ms=40_000,
        scene_starts_ms=(0, ONSET),
        onset_ms=ONSET if event else None,
        window_end_ms=ONSET + 12_000 if event else None,
        expected=("boil",) if event else (),
        probes=probes,
        outcome=outcome,
    )
    return TrialRecord(
        scenario_id=sid,
        condition="baseline",
        trial=0,
        target_context="speak_up" if event else "stay_quiet",
        cue_type="about_to_miss",
        subset="proactive",
        proactive=strategy,
        via="stream",
        watching=watching,
    )


def _run(tmp_path: Path) -> Path:
    early = Probe(
        n=1,
        asked_ms=5_000,
        frame_ms=4_800,
        text="The pot looks nice.",
        silent=False,
        spoke_ms=5_300,
        scene=0,
        outcome="false_alarm",
    )
    echo = Probe(
        n=2,
        asked_ms=21_000,
        frame_ms=20_800,
        text="Tell me when the water is ready.",
        silent=False,
        spoke_ms=21_400,
        scene=1,
        outcome="false_alarm",
        echo=True,
    )
    keyless = Probe(
        n=3,
        asked_ms=23_000,
        frame_ms=22_800,
        text="A tall vessel.",
        silent=False,
        spoke_ms=23_300,
        scene=1,
        outcome="false_alarm",
        verdict=Verdict(label=None, rationale="", judge="lexical", unscored_reason="no signal: names nothing"),
    )
    hit = Probe(
        n=4,
        asked_ms=25_000,
        frame_ms=24_800,
        text="It is boiling.",
        silent=False,
        spoke_ms=25_300,
        scene=1,
        outcome="hit",
        verdict=Verdict(label="current", rationale="names the boil", judge="lexical"),
    )
    quiet = Probe(
        n=1, asked_ms=6_000, frame_ms=5_800, text="A cat.", silent=False, spoke_ms=6_300, scene=0, outcome="false_alarm"
    )
    run = tmp_path / "run"
    run.mkdir()
    trials = [_trial("pa-01", "change", (early, echo, keyless, hit), "hit"), _trial("pq-01", "every:5", (quiet,), None)]
    (run / "transcripts.jsonl").write_text("".join(t.to_line() for t in trials))
    (run / "manifest.json").write_text(
        json.dumps(
            {
                "candidate_model": "local",
                "judge_family": "lexical",
                "judge_model": "lexical",
                "via": "stream",
                "subset": "proactive",
                "proactive": ["change", "every:5"],
                "describer": "authored",
            }
        )
    )
    return run


def test_the_viewer_heads_a_proactive_run_like_any_other_and_its_counts_are_the_summarys(tmp_path):
    run = _run(tmp_path)
    summary = write_report(run)
    page = write_viewer(run).read_text()
    assert re.search(r'<p class="headline measured" id="headline">Events caught on time', page)
    cells = summary["proactive"]["baseline"]
    assert sorted(cells) == ["change", "every:5"]
    assert "trials</th><td>2: 1 events (1 caught on time), 1 quiet controls; errored 0" in page
    remarks = sum(c["remarks"] for c in cells.values())
    alarms = sum(c["false_alarms"] for c in cells.values())
    assert f"remarks</th><td>{remarks} of {remarks} check-ins: {alarms} false alarms (1 only echoes)" in page
    assert "balanced Turn 2 accuracy" not in page and "scored 0" not in page
    assert 'id="proactive-cells"' in page and "free (local)" in page


def test_each_trial_header_names_its_strategy_and_frame_policy_and_the_strategy_filters(tmp_path):
    run = _run(tmp_path)
    write_report(run)
    page = write_viewer(run).read_text()
    heads = re.findall(r'<summary><span class="badge[^>]*>[^<]*</span>(.*?)</summary>', page)
    assert any("pa-01" in h and "strategy change · policy fps:1" in unescape(h) for h in heads), heads
    assert any("pq-01" in h and "strategy every:5 · policy fps:1" in unescape(h) for h in heads), heads
    select = re.search(r'<select data-filter="strategy">(.*?)</select>', page).group(1)
    assert '<option value="change">' in select and '<option value="every:5">' in select
    assert 'data-strategy="change"' in page and 'data-strategy="every:5"' in page


def test_the_judge_column_agrees_with_the_outcomes_the_summary_counts(tmp_path):
    run = _run(tmp_path)
    summary = write_report(run)
    page = unescape(write_viewer(run).read_text())
    rows = re.findall(r'<tr class="w-row-[^"]*"><td>(\d+)</td>.*?<td>([^<]*)</td><td>([^<]*)</td></tr>', page)
    judged = {(n, outcome, judge) for n, outcome, judge in rows}
    assert ("1", "false alarm", "not asked: made before the event") in judged
    assert ("2", "false alarm (echo)", "not asked: only echoes the user's words or the camera text") in judged
    assert ("3", "false alarm", "names none of the event's keys") in judged
    assert ("4", "hit", "current") in judged
    assert ("1", "false alarm", "not asked: a quiet control") in judged
    assert not any(judge.startswith("unscored") for _, _, judge in judged)
    assert sum(c["unscored_remarks"] for c in summary["proactive"]["baseline"].values()) == 0
