"""Issue 48: `wearsim compare` and `compare --html` on proactive runs, numbers worked out by hand.

Two runs of the same six scenarios (four events e1-e4, two quiet controls q1, q2), one trial each,
every stream a minute long, cell `change` under `baseline`:

  A (local):  e1 hit, e2 miss (1 false alarm), e3 miss, e4 hit; q1 one false alarm, q2 quiet
  B (paid):   e1 hit, e2 hit, e3 hit (2 false alarms), e4 hit; q1 and q2 quiet

A: recall 2/4, precision 2/(2+2), false alarms 2 in 6 min = 0.333/min, hits at 3 s and 5 s.
B: recall 4/4, precision 4/(4+2), false alarms 2 in 6 min = 0.333/min, one time to speak each (4 s).
B - A: recall +50 pts over 4 event trials; McNemar: A-only hits 0, B-only 2, p = 2 x 0.25 = 0.5;
false alarms a minute +0.00.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmark.comparison.runs import compare_runs, render_comparison
from core.records import TrialRecord
from core.watching import Probe, Watching
from tests.benchmark.report.test_compare import RUN_A, write_run
from tests.paths import ROOT

ONSET = 20_000


def _trial(sid: str, hit_at_s: float | None, alarms: int) -> TrialRecord:
    event = sid.startswith("e")
    probes = [
        Probe(
            n=n + 1,
            asked_ms=5_000 + 1_000 * n,
            frame_ms=5_000 + 1_000 * n,
            text="Look out.",
            silent=False,
            spoke_ms=5_200 + 1_000 * n,
            outcome="false_alarm",
        )
        for n in range(alarms)
    ]
    if hit_at_s is not None:
        at = ONSET + int(hit_at_s * 1000)
        probes.append(
            Probe(
                n=len(probes) + 1,
                asked_ms=at - 100,
                frame_ms=at - 200,
                text="It is boiling.",
                silent=False,
                spoke_ms=at,
                outcome="hit",
            )
        )
    if event and hit_at_s is None:  # a miss that had its chance: a check-in inside the window, left silent
        # (a trial asked nothing at all is starved and counted apart: tests/benchmark/scoring/test_proactive_starved.py)
        at = ONSET + 1_000
        probes.append(Probe(n=len(probes) + 1, asked_ms=at, frame_ms=at - 100, text="[silent]", silent=True))
    watching = Watching(
        strategy="change",
        kind="event" if event else "quiet",
        stream_ms=60_000,
        scene_starts_ms=(0, ONSET),
        onset_ms=ONSET if event else None,
        window_end_ms=ONSET + 12_000 if event else None,
        expected=("boil",) if event else (),
        probes=tuple(probes),
        outcome=("hit" if hit_at_s is not None else "miss") if event else None,
    )
    return TrialRecord(
        scenario_id=sid,
        condition="baseline",
        trial=0,
        target_context="speak_up" if event else "stay_quiet",
        cue_type="about_to_miss",
        subset="proactive",
        proactive="change",
        via="stream",
        watching=watching,
    )


def _run(folder: Path, model: str, trials: list[TrialRecord]) -> Path:
    folder.mkdir()
    (folder / "transcripts.jsonl").write_text("".join(t.to_line() for t in trials))
    (folder / "manifest.json").write_text(
        json.dumps(
            {
                "candidate_model": model,
                "via": "stream",
                "subset": "proactive",
                "proactive": ["change"],
                "conditions": ["baseline"],
            }
        )
    )
    return folder


@pytest.fixture
def runs(tmp_path):
    a = _run(
        tmp_path / "a",
        "local",
        [
            _trial("e1", 3, 0),
            _trial("e2", None, 1),
            _trial("e3", None, 0),
            _trial("e4", 5, 0),
            _trial("q1", None, 1),
            _trial("q2", None, 0),
        ],
    )
    b = _run(
        tmp_path / "b",
        "openai:gpt-4o-mini",
        [
            _trial("e1", 4, 0),
            _trial("e2", 4, 0),
            _trial("e3", 4, 2),
            _trial("e4", 4, 0),
            _trial("q1", None, 0),
            _trial("q2", None, 0),
        ],
    )
    return a, b


def test_compare_gives_each_cells_figures_and_the_paired_difference(runs):
    result = compare_runs(*runs)
    rows = result["proactive"]["rows"]
    assert [(r["label"], r["condition"], r["cell"]) for r in rows] == [
        ("A: a", "baseline", "change"),
        ("B: b", "baseline", "change"),
    ]
    a, b = (r["metrics"] for r in rows)
    assert (a["recall"]["k"], a["recall"]["n"], a["recall"]["rate"]) == (2, 4, 0.5)
    assert (a["precision"]["k"], a["precision"]["n"]) == (2, 4)
    assert (b["recall"]["k"], b["recall"]["n"]) == (4, 4)
    assert (b["precision"]["k"], b["precision"]["n"], b["precision"]["rate"]) == (4, 6, 0.6667)
    for cell in (a, b):  # six scenarios, under ten: Wilson intervals, with width
        assert cell["recall"]["ci_method"] == "wilson" and cell["recall"]["ci_low"] < cell["recall"]["ci_high"]
    alarms = [r["false_alarms_per_min"] for r in rows]
    assert [(x["false_alarms"], x["minutes"], x["trials"], x["rate"]) for x in alarms] == [(2, 6.0, 6, 0.333)] * 2
    assert all(x["ci_low"] is not None and x["ci_low"] <= 0.333 <= x["ci_high"] for x in alarms)
    assert (a["time_to_speak_p50_s"], a["time_to_speak_n"]) == (4.0, 2) and b["time_to_speak_n"] == 4
    [pair] = result["proactive"]["against_first"]
    [cell] = pair["cells"]
    assert (cell["pairs"], cell["events"], cell["scenarios"]) == (6, 4, 4)
    assert (cell["recall_a"], cell["recall_b"], cell["recall_difference"]) == (0.5, 1.0, 0.5)
    assert cell["mcnemar"]["a_hit_b_miss"] == 0 and cell["mcnemar"]["a_miss_b_hit"] == 2
    assert cell["mcnemar"]["p_value"] == pytest.approx(0.5)
    assert cell["recall_ci_low"] <= 0.5 <= cell["recall_ci_high"] and cell["recall_ci_high"] <= 1.0
    assert cell["false_alarms_per_min_difference"] == 0.0
    text = render_comparison(result)
    assert "not a measurement" not in text and "proactive runs (A: a, B: b)" in text
    assert "recall +50.0 pts" in text and "McNemar p = 0.5 (0 hit only in the first, 2 only here)" in text
    assert "false alarms/min +0.00 /min" in text
    assert "free (local)" in text and "unknown" in text  # B's usage was never recorded: no price, no $0
    assert "4.0 / 5.0 s (n = 2)" in text or "4.0 / 4.9 s (n = 2)" in text


def test_compare_html_on_proactive_runs_has_the_same_rows_sortable_and_the_plot(runs, tmp_path):
    out = tmp_path / "page"
    done = subprocess.run(
        [sys.executable, "-m", "benchmark", "compare", str(runs[0]), str(runs[1]), "--html", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    page = (out / "comparison.html").read_text()
    assert (out / "recall_false_alarms.png").read_bytes().startswith(b"\x89PNG")
    assert 'id="proactive-runs" class="sortable"' in page and 'id="proactive-pairs" class="sortable"' in page
    runs_table = page[page.index('id="proactive-runs"') : page.index("</table>", page.index('id="proactive-runs"'))]
    assert runs_table.count("<tr><td title=") == 2
    assert "50.0% (2/4)" in runs_table and "100.0% (4/4)" in runs_table and "66.7% (4/6)" in runs_table
    assert "free (local)" in runs_table
    pairs = page[page.index('id="proactive-pairs"') :]
    assert "+50.0 pts" in pairs and re.search(r'data-sort="0.5">0.5<', pairs)
    assert "balanced Turn 2 accuracy" not in page.split("<details>")[0]  # no empty question-and-answer table


def test_a_mix_of_proactive_and_question_and_answer_runs_compares_each_kind_apart(runs, tmp_path):
    qa_a, qa_b = write_run(tmp_path / "qa1", RUN_A), write_run(tmp_path / "qa2", RUN_A)
    result = compare_runs(runs[0], qa_a, None, (runs[1], qa_b))
    assert result["kinds"] == {"proactive": ["A: a", "C: b"], "qa": ["B: qa1", "D: qa2"]}
    assert [r["label"] for r in result["proactive"]["rows"]] == ["A: a", "C: b"]
    assert Path(result["qa"]["run_a"]).parent.name == "qa1" and result["qa"]["pairs"] > 0
    text = render_comparison(result)
    assert text.startswith(
        "a mix of kinds, each compared apart: proactive A: a, C: b; question-and-answer B: qa1, D: qa2"
    )
    alone = render_comparison(compare_runs(runs[0], qa_a))
    assert "B: qa1 is the only question-and-answer run, with nothing of its kind to compare it with" in alone
