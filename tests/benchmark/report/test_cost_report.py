"""The cost of a run from its records, worked out by hand: summary.json's
`cost` block, findings, the viewer, `wearsim compare` with its accuracy-
against-cost plot, and the budget's stop on a cost it cannot know."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmark.cost.budget import Budget
from benchmark.cost.prices import price_table
from benchmark.report import write_report
from core.candidate import Reply, Usage
from core.judge import Verdict
from core.records import TrialRecord, TurnResult, authored_turn_input
from core.scenario import load_bank
from tests.paths import ROOT

PRICES = {
    "openai:cand": {
        "text_input": 2.0,
        "text_cached_input": 1.0,
        "text_output": 8.0,
        "date": "2026-11-25",
        "source": "test",
    },
    "openai:judge": {"text_input": 1.0, "text_output": 4.0, "date": "2026-11-25", "source": "test"},
    "openai:unpriced": None,
}
MILLION = 1_000_000


def text_usage(given: int, cached: int, out: int) -> Usage:
    return Usage(
        input_tokens=given,
        output_tokens=out,
        input_text_tokens=given,
        input_audio_tokens=0,
        input_image_tokens=0,
        cached_input_tokens=cached,
        cached_text_tokens=cached,
        cached_audio_tokens=0,
        cached_image_tokens=0,
        output_text_tokens=out,
        output_audio_tokens=0,
    )


def record(
    scenario,
    condition: str,
    trial: int,
    passed: bool,
    *,
    usages,
    judge_usage=None,
    judge="openai:judge",
    error=None,
    model="openai:cand",
) -> dict:
    turns = tuple(
        TurnResult(turn=n, input=authored_turn_input(scenario, n), reply=Reply(text="r", model=model, usage=u))
        for n, u in enumerate(usages, start=1)
    )
    label = scenario.target_context if passed else ("prior" if scenario.target_context != "prior" else "current")
    verdict = Verdict(
        label=label,
        rationale="why",
        judge=judge,
        raw="{}" if judge_usage is not None or judge != "lexical" else "",
        usage=judge_usage,
    )
    return TrialRecord(
        scenario_id=scenario.scenario_id,
        condition=condition,
        trial=trial,
        target_context=scenario.target_context,
        cue_type=scenario.cue_type,
        candidate_model=model,
        turns=() if error else turns,
        turn_2_judge=None if error else verdict,
        error=error,
    ).to_json()


def write_run(directory: Path, records: list[dict], prices=PRICES, model="openai:cand") -> Path:
    directory.mkdir()
    (directory / "transcripts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (directory / "manifest.json").write_text(
        json.dumps({"candidate_model": model, "conditions": ["baseline"], "prices": prices})
    )
    return directory


def test_the_cost_block_per_condition_worked_out_by_hand(tmp_path):
    s1, s2, s3 = load_bank().scenarios[:3]
    judged = text_usage(300, 0, 20)
    records = [
        record(
            s1, "baseline", 0, True, usages=[text_usage(1000, 0, 10), text_usage(1500, 1024, 12)], judge_usage=judged
        ),
        record(
            s2,
            "baseline",
            0,
            False,
            usages=[text_usage(800, 0, 9), text_usage(1200, 512, 30), text_usage(1400, 1024, 5)],
            judge_usage=judged,
        ),
        record(s3, "baseline", 0, True, usages=[], error="TimeoutError: x"),  # errored: left out
        record(
            s1, "other", 0, False, usages=[Usage(input_tokens=50, output_tokens=5)], judge_usage=judged
        ),  # no split: cached unknown
    ]
    summary = write_report(write_run(tmp_path / "run", records))
    cost = summary["cost"]["conditions"]["baseline"]
    candidate = (
        (1000 * 2 + 10 * 8)
        + (476 * 2 + 1024 + 12 * 8)
        + (800 * 2 + 9 * 8)
        + (688 * 2 + 512 + 30 * 8)
        + (376 * 2 + 1024 + 5 * 8)
    ) / MILLION
    judge = 2 * (300 * 1 + 20 * 4) / MILLION
    assert cost["candidate_usd"] == pytest.approx(candidate) and cost["judge_usd"] == pytest.approx(judge)
    assert (cost["trials"], cost["errored_trials"], cost["correct_turn2"]) == (2, 1, 1)
    assert cost["per_correct_turn2_usd"] == pytest.approx(candidate)
    assert cost["candidate_usd_per_trial"] == pytest.approx(candidate / 2)
    assert cost["candidate_tokens"]["cached_text_tokens"] == 1024 + 512 + 1024
    # a reply with no split on a model whose cached text is cheaper: unknown, with the reason, never 0
    other = summary["cost"]["conditions"]["other"]
    assert other["candidate_usd"] is None and other["per_correct_turn2_usd"] is None
    assert other["judge_usd"] == pytest.approx((300 + 80) / MILLION) and other["unknown"]
    assert summary["cost"]["run"]["candidate_usd"] is None
    findings = (tmp_path / "run" / "findings.md").read_text()
    assert "## Cost" in findings and "Why a cost is unknown" in findings and "unknown kind" in findings
    from benchmark.report.viewer import write_viewer

    page = write_viewer(tmp_path / "run").read_text()
    assert "cost per correct Turn 2" in page and "cost: candidate $" in page


def test_no_price_is_an_unknown_cost_and_findings_say_so(tmp_path):
    s1 = load_bank().scenarios[0]
    records = [
        record(s1, "baseline", 0, True, usages=[text_usage(100, 0, 5)], model="openai:unpriced", judge="lexical")
    ]
    summary = write_report(write_run(tmp_path / "run", records, model="openai:unpriced"))
    cost = summary["cost"]["conditions"]["baseline"]
    assert cost["candidate_usd"] is None and cost["judge_usd"] == 0  # the lexical judge asks no model
    assert cost["unknown"] == ["no price for openai:unpriced"]
    assert "no price for openai:unpriced" in (tmp_path / "run" / "findings.md").read_text()


def test_a_run_without_recorded_prices_is_priced_with_the_shipped_table(tmp_path):
    s1 = load_bank().scenarios[0]
    records = [
        record(
            s1,
            "baseline",
            0,
            True,
            usages=[
                Usage(
                    input_tokens=100,
                    output_tokens=5,
                    input_text_tokens=100,
                    input_audio_tokens=0,
                    input_image_tokens=0,
                    cached_input_tokens=0,
                    cached_text_tokens=0,
                    cached_audio_tokens=0,
                    cached_image_tokens=0,
                    output_text_tokens=5,
                    output_audio_tokens=0,
                )
            ],
            model="local",
            judge="lexical",
        )
    ]
    run = tmp_path / "run"
    run.mkdir()
    (run / "transcripts.jsonl").write_text(json.dumps(records[0]) + "\n")
    summary = write_report(run)
    assert summary["cost"]["conditions"]["baseline"]["candidate_usd"] == 0  # the local model costs nothing
    assert "shipped table" in summary["cost"]["prices_from"]


def test_compare_shows_each_runs_cost_and_plots_accuracy_against_cost(tmp_path):
    scenarios = load_bank().scenarios[:4]
    cheap = write_run(
        tmp_path / "cheap",
        [record(s, "baseline", 0, i % 2 == 0, usages=[text_usage(100, 0, 5)] * 2) for i, s in enumerate(scenarios)],
    )
    dear = write_run(
        tmp_path / "dear", [record(s, "baseline", 0, True, usages=[text_usage(4000, 0, 50)] * 2) for s in scenarios]
    )
    third = write_run(
        tmp_path / "third",
        [record(s, "baseline", 0, True, usages=[text_usage(10, 0, 1)] * 2, model="openai:unpriced") for s in scenarios],
        model="openai:unpriced",
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmark",
            "compare",
            str(cheap),
            str(dear),
            str(third),
            "--html",
            str(tmp_path / "compared"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    per_trial_cheap = 2 * (100 * 2 + 5 * 8) / MILLION
    assert f"candidate ${4 * per_trial_cheap:.6f}".rstrip("0") in done.stdout
    assert "C: third [baseline]" in done.stdout and "unknown per trial" in done.stdout
    from PIL import Image

    with Image.open(tmp_path / "compared" / "accuracy_cost.png") as plot:
        assert plot.size[0] >= 600
    page = (tmp_path / "compared" / "comparison.html").read_text()
    assert "data:image/png;base64," in page and "no price for openai:unpriced" in page


def test_a_budget_stops_when_a_replys_cost_cannot_be_known():
    budget = Budget(10.0, price_table())
    budget.add("openai:gpt-4o-mini", text_usage(1000, 0, 10))
    assert not budget.passed and budget.spend.usd == pytest.approx((1000 * 0.15 + 10 * 0.6) / MILLION)
    budget.add("openai:gpt-4o-mini", text_usage(1000, 0, 10), cached=True)  # from the cache: no spend again
    assert budget.spend.usd == pytest.approx((1000 * 0.15 + 10 * 0.6) / MILLION)
    budget.add(
        "openai:gpt-4o-mini",
        Usage(
            input_tokens=10,
            output_tokens=5,
            input_text_tokens=10,
            input_audio_tokens=0,
            input_image_tokens=0,
            cached_input_tokens=0,
            cached_text_tokens=0,
            cached_audio_tokens=0,
            cached_image_tokens=0,
            output_text_tokens=0,
            output_audio_tokens=5,
        ),
    )  # audio out: no price for it
    assert budget.passed
    budget.skip()
    assert budget.state()["stopped_on_budget"] and "audio output tokens have no price" in budget.describe()


def test_a_staleness_sweep_is_costed_per_gap(tmp_path):
    s1, s2 = load_bank().scenarios[:2]
    records = []
    for gap, given in ((0, 100), (500, 300)):
        for scenario in (s1, s2):
            line = record(scenario, "baseline", 0, True, usages=[text_usage(given, 0, 10)], judge="lexical")
            records.append({**line, "staleness_ms": gap})
    summary = write_report(write_run(tmp_path / "run", records))
    gaps = summary["cost"]["by_staleness"]["baseline"]
    assert gaps["0"]["candidate_usd"] == pytest.approx(2 * (100 * 2 + 10 * 8) / MILLION)
    assert gaps["500"]["candidate_usd"] == pytest.approx(2 * (300 * 2 + 10 * 8) / MILLION)
    assert "Per staleness gap (baseline)" in (tmp_path / "run" / "findings.md").read_text()
