"""`wearsim compare A B C`: one row per run (accuracy with its interval, repair rate, latency, voice to
voice, cost per correct answer, turns OK), each run paired against the first, and the --html page with
accuracy against latency and against cost. Numbers worked out by hand."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmark.comparison.runs import compare_runs, render_comparison
from core.candidate import Reply, Usage
from core.judge import Verdict
from core.records import TrialRecord, TurnInput, TurnResult
from tests.benchmark.report.test_compare import RUN_A, RUN_B, write_run
from tests.paths import ROOT


def spoken_run(directory: Path, outcomes: str, first_token: list[float], voice: list[float] | None = None) -> Path:
    """Four scenarios (sc1, sc2 target current; sc3, sc4 prior), one trial each: P pass, F miss then a
    repair that passes, U unscored, E errored. Each answered turn's first text comes `first_token` s
    (one value per scenario) after the end of speech; `voice`: its voice-to-voice time."""
    directory.mkdir()
    lines = []
    for index, mark in enumerate(outcomes):
        sid = f"sc{index + 1}"
        target = "current" if index < 2 else "prior"
        other = "prior" if target == "current" else "current"
        reply = Reply(
            text="an answer",
            model="m",
            usage=Usage(input_tokens=100, output_tokens=10),
            latency_s=1.0,
            first_token_s=first_token[index],
            first_voice_s=None if voice is None else voice[index],
        )
        turns = tuple(
            TurnResult(
                turn=t,
                input=TurnInput(turn=t, camera_block=None, speech="hi", camera_source=None, speech_source="authored"),
                reply=reply,
            )
            for t in (1, 2)
        )
        label = {"P": target, "F": other, "U": None}.get(mark)
        verdict = Verdict(
            label=label, rationale="r", judge="lexical", unscored_reason="no signal" if mark == "U" else None
        )
        record = TrialRecord(
            scenario_id=sid,
            condition="baseline",
            trial=0,
            target_context=target,
            cue_type="object_in_hand",
            via="stream",
            turns=turns,
            turn_2_judge=verdict if mark != "E" else None,
            turn_3_repair_attempted=mark == "F",
            turn_3_judge=Verdict(label=target, rationale="r", judge="lexical") if mark == "F" else None,
            error="RetryableError: m: rate limited (429)" if mark == "E" else None,
        )
        lines.append(record.to_line())
    (directory / "transcripts.jsonl").write_text("".join(lines))
    manifest = {
        "ranking_condition": "baseline",
        "conditions": ["baseline"],
        "trials": 1,
        "scenario_ids": ["sc1", "sc2", "sc3", "sc4"],
        "candidate_model": "m",
        "prices": {"m": None},
    }
    (directory / "manifest.json").write_text(json.dumps(manifest))
    return directory


def test_three_runs_side_by_side_and_each_against_the_first(tmp_path):
    a = write_run(tmp_path / "a", RUN_A)
    b = write_run(tmp_path / "b", RUN_B)
    c = write_run(tmp_path / "c", RUN_A)  # A again: no difference
    result = compare_runs(a, b, more=(c,))
    rows = {row["label"][0]: row for row in result["runs"]}
    assert rows["A"]["balanced_accuracy"] == pytest.approx((2 / 7 + 3 / 4) / 2)  # every scored trial of A
    assert rows["B"]["turns_ok"] == 10 and rows["B"]["cells"] == 11  # sc3 t3 has no label
    first = {p["label"][0]: p for p in result["against_first"]}
    assert first["B"]["difference"] == pytest.approx(19 / 42)  # as `wearsim compare A B` works it out
    assert (first["B"]["ci_low"], first["B"]["ci_high"]) == (pytest.approx(1 / 3), pytest.approx(3 / 4))
    assert first["B"]["p_value"] == pytest.approx(0.125) and first["B"]["pairs"] == 10
    assert first["C"]["difference"] == 0 and first["C"]["p_value"] == 1.0
    text = render_comparison(result)
    assert text.startswith("runs, condition baseline")
    assert "  B: b: +45.2 pts [+33.3 pts, +75.0 pts] over 10 pairs, p = 0.125" in text
    assert "A against B, in detail:" in text and "B - A +45.2 pts" in text


def test_the_table_gives_repair_latency_voice_to_voice_and_turns_ok(tmp_path):
    import numpy as np

    quick = spoken_run(tmp_path / "quick", "PFPE", [0.2, 0.4, 0.6, 0.8], voice=[0.5, 0.7, 0.9, 1.1])
    slow = spoken_run(tmp_path / "slow", "PPUP", [1.0, 2.0, 3.0, 4.0])
    result = compare_runs(quick, slow)
    quick_row, slow_row = result["runs"]
    # quick: sc1 pass, sc2 miss repaired, sc3 pass, sc4 errored; current 1/2, prior 1/1
    assert quick_row["balanced_accuracy"] == pytest.approx(0.75) and quick_row["measured"]
    assert (quick_row["repair_rate"], quick_row["repair_k"], quick_row["repair_n"]) == (1.0, 1, 1)
    # latency over the turns of finished trials (the errored one has turns too, but is left out)
    times = [0.2, 0.2, 0.4, 0.4, 0.6, 0.6]
    assert quick_row["first_token_s"]["p50"] == pytest.approx(np.percentile(times, 50))
    assert quick_row["first_token_s"]["p95"] == pytest.approx(np.percentile(times, 95))
    assert quick_row["first_voice_s"]["p50"] == pytest.approx(np.percentile([0.5, 0.5, 0.7, 0.7, 0.9, 0.9], 50))
    assert slow_row["first_voice_s"]["n"] == 0
    assert (quick_row["turns_ok"], quick_row["cells"]) == (3, 4) and (slow_row["turns_ok"], slow_row["cells"]) == (3, 4)
    text = render_comparison(result)
    header = next(line for line in text.splitlines() if "first text p50/p95" in line)
    assert "voice to voice p50/p95" in header and "cost per correct" in header and "turns OK" in header
    quick_line = next(line for line in text.splitlines() if line.strip().startswith("A: quick"))
    assert "75.0% [" in quick_line and "100.0% (1/1)" in quick_line and "0.40 / 0.60 s" in quick_line
    assert "3 of 4" in quick_line

    done = subprocess.run(
        [sys.executable, "-m", "benchmark", "compare", str(quick), str(slow), "--html", str(tmp_path / "page")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    from PIL import Image

    for name in ("accuracy_latency.png", "accuracy_cost.png"):
        with Image.open(tmp_path / "page" / name) as plot:
            assert plot.size[0] >= 600
    page = (tmp_path / "page" / "comparison.html").read_text()
    assert "Accuracy against latency" in page and "Accuracy against cost" in page
    assert page.count("data:image/png;base64,") == 2


def sweep_run(directory: Path, policy: str = "fps:1") -> Path:
    """`spoken_run`'s four scenarios, every cell a frame policy sweep's: its cells carry `frame_policy`."""
    spoken_run(directory, "PPPP", [0.5, 0.5, 0.5, 0.5])
    path = directory / "transcripts.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps({**r, "frame_policy": policy}) + "\n" for r in records))
    return directory


@pytest.mark.browser
def test_compare_html_is_a_sortable_table_of_runs_and_pairs_and_says_why_nothing_pairs(tmp_path):
    """Issue 34, item 7: the page was the text inside <pre>; now a <table> per run and condition (accuracy
    with its interval, turns OK, latency, cost), sortable, the paired differences as a second table, and
    the reason when nothing pairs (a text-proxy run against a stream sweep)."""
    quick = spoken_run(tmp_path / "quick", "PFPE", [0.2, 0.4, 0.6, 0.8], voice=[0.5, 0.7, 0.9, 1.1])
    slow = spoken_run(tmp_path / "slow", "PPUP", [1.0, 2.0, 3.0, 4.0])
    sweep = sweep_run(tmp_path / "sweep")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmark",
            "compare",
            str(quick),
            str(slow),
            str(sweep),
            "--html",
            str(tmp_path / "page"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert "C: sweep: no pairs: no cell is in both runs" in done.stdout  # the text says why too
    page = (tmp_path / "page" / "comparison.html").read_text()
    runs_table = page[page.index('<table id="runs"') :]
    runs_table = runs_table[: runs_table.index("</table>")]
    for column in ("balanced Turn 2 accuracy", "95% interval", "turns OK", "first text p50", "cost per correct"):
        assert f">{column}" in runs_table, column
    assert runs_table.count('<tr class="run"') == 3 and "3 of 4" in runs_table and "75.0%" in runs_table
    pairs_table = page[page.index('<table id="pairs"') :]
    assert "+" in pairs_table[: pairs_table.index("</table>")]
    assert "frame_policy" in pairs_table[: pairs_table.index("</table>")]  # why the sweep pairs with nothing
    assert "<script>" in page and "http://" not in page and "https://" not in page
    assert "Accuracy against latency" in page and page.count("data:image/png;base64,") == 2

    from playwright.sync_api import sync_playwright

    from tests.benchmark.report.test_viewer import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        view = browser.new_page(viewport={"width": 1200, "height": 900})
        view.goto((tmp_path / "page" / "comparison.html").as_uri())
        first_column = 'Array.from(document.querySelectorAll("#runs tbody tr")).map(r => r.cells[0].textContent)'
        assert view.evaluate(first_column)[0].startswith("A:")
        view.click('#runs th:has-text("first text p50")')  # fastest first: A (0.4 s) before C, then B
        view.click('#runs th:has-text("first text p50")')  # again: slowest first
        order = view.evaluate(first_column)
        assert order[0].startswith("B:") and order[-1].startswith("A:"), order
        browser.close()


def test_a_paired_difference_never_shows_a_zero_width_interval(tmp_path):
    """Issue 34, item 2, in compare: two runs that agree on three scenarios resample to [+0.0, +0.0]."""
    first = spoken_run(tmp_path / "first", "PPPP", [0.5] * 4)
    second = spoken_run(tmp_path / "second", "PPPP", [0.5] * 4)
    result = compare_runs(first, second)
    assert result["difference"] == 0 and result["ci_low"] is None and result["ci_high"] is None
    assert "4 scenarios" in result["interval_note"]
    text = render_comparison(result)
    assert "+0.0 pts, +0.0 pts" not in text and "no interval" in text
    assert result["against_first"][0]["ci_low"] is None
