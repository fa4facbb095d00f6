"""Issue 60, item 3: a proactive trial whose model was slower than the stream (its opening reply still
running when the check-ins were due, so none was asked in time, or every reply came after the window) is
counted apart as starved, with the reason, not as a plain miss; findings' head says the machine was too
slow for the stream's pace and what to do."""

from __future__ import annotations

import json
from pathlib import Path

from benchmark.report import write_report
from benchmark.scoring.proactive import starved_reason
from core.records import TrialRecord
from core.watching import Probe, Watching

ONSET, END = 20_000, 32_000


def watching(kind: str, *probes: Probe, outcome: str | None = "miss", strategy: str = "change") -> Watching:
    return Watching(
        strategy=strategy,
        kind=kind,
        stream_ms=40_000,
        scene_starts_ms=(0, ONSET),
        onset_ms=ONSET if kind == "event" else None,
        window_end_ms=END if kind == "event" else None,
        expected=("boil",) if kind == "event" else (),
        probes=probes,
        outcome=outcome if kind == "event" else None,
    )


def said(n: int, asked_ms: int, spoke_ms: int, outcome: str = "false_alarm") -> Probe:
    return Probe(
        n=n, asked_ms=asked_ms, frame_ms=asked_ms - 200, text="A pot.", silent=False, spoke_ms=spoke_ms, outcome=outcome
    )


def silent(n: int, asked_ms: int) -> Probe:
    return Probe(n=n, asked_ms=asked_ms, frame_ms=asked_ms - 200, text="[silent]", silent=True)


def test_the_reasons_a_trial_starves_and_the_trials_that_do_not():
    # the opening reply took 47.8 s on a 40 s stream: not one check-in was asked
    assert starved_reason(watching("event")) == "no check-in was asked during the stream"
    assert starved_reason(watching("quiet")) == "no check-in was asked during the stream"  # not a quiet pass
    assert starved_reason(watching("event", said(1, 5_000, 33_000))) == (
        "the model was answering an earlier check-in through the whole event window"
    )
    assert starved_reason(watching("event", said(1, 5_000, 6_000))) is None  # free, and asked nothing: a miss
    late = watching("event", said(1, 21_000, 33_500, "late"))
    assert starved_reason(late) == "every reply to a check-in inside the window came after it"
    # a chance it had: a silent check-in in the window, or a reply in time that missed, is a plain miss
    assert starved_reason(watching("event", silent(1, 21_000))) is None
    assert starved_reason(watching("event", said(1, 21_000, 22_000))) is None
    assert starved_reason(watching("event", said(1, 21_000, 22_000, "hit"), outcome="hit")) is None
    assert starved_reason(watching("quiet", silent(1, 5_000))) is None
    assert starved_reason(watching("event", strategy="native")) is None  # native asks nothing, by design


def trial(sid: str, watched: Watching) -> TrialRecord:
    return TrialRecord(
        scenario_id=sid,
        condition="baseline",
        trial=0,
        target_context="speak_up" if watched.kind == "event" else "stay_quiet",
        cue_type="about_to_miss",
        subset="proactive",
        proactive=watched.strategy,
        via="stream",
        watching=watched,
    )


def test_a_starved_trial_is_counted_apart_and_the_findings_head_says_the_machine_was_too_slow(tmp_path: Path):
    hit = said(1, 21_000, 22_000, "hit")
    trials = [
        trial("pa-01", watching("event", hit, outcome="hit")),
        trial("pa-02", watching("event", silent(1, 21_000))),  # a plain miss
        trial("pa-03", watching("event")),  # starved: no check-in at all
        trial("pq-01", watching("quiet", silent(1, 5_000))),
    ]
    run = tmp_path / "run"
    run.mkdir()
    (run / "transcripts.jsonl").write_text("".join(t.to_line() for t in trials))
    manifest = {"candidate_model": "local", "judge_model": "lexical", "via": "stream", "proactive": ["change"]}
    (run / "manifest.json").write_text(json.dumps({**manifest, "subset": "proactive", "judge_family": "lexical"}))
    summary = write_report(run)
    cell = summary["proactive"]["baseline"]["change"]
    assert cell["trials"] == 4 and cell["starved"] == 1
    assert cell["starved_reasons"] == {"no check-in was asked during the stream": 1}
    assert (cell["events"], cell["hits"], cell["misses"]) == (2, 1, 1)  # the starved one is neither
    assert cell["recall"]["n"] == 2 and cell["quiet_controls"] == 1
    findings = (run / "findings.md").read_text()
    head = findings[: findings.index("How it is scored")]
    assert "**1 trial starved: this machine was too slow for the stream's pace**" in head
    assert "no check-in was asked during the stream" in head and "`--concurrency 1`" in head
    assert "pa-03 t0 | [20, 32] | starved (no check-in was asked during the stream)" in findings
