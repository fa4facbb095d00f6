"""What a run costs, end to end: `wearsim bench` against local servers that
speak the providers' wire formats and report usage, priced here by hand from
what each server says it sent, independently of the code under test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI
from tests.fake_realtime import TEST_KEY, FakeOpenAIRealtime
from tests.paths import ROOT

MILLION = 1_000_000


def write_prices(path: Path, model: str, rates: dict) -> Path:
    body = "\n".join(f"{key} = {value}" for key, value in rates.items())
    path.write_text(f'["{model}"]\n{body}\ndate = "2026-11-25"\nsource = "made up for a test"\n')
    return path


def bench(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "benchmark", "bench", "--judge-family", "lexical", "--conditions", "baseline", *argv],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )


def realtime_usage_cost(usage: dict, p: dict) -> float:
    """One `response.done` usage block priced by hand (cached tokens are part of the input tokens)."""
    given, out = usage["input_token_details"], usage["output_token_details"]
    cached = given["cached_tokens_details"]
    dollars = sum(
        (given[f"{kind}_tokens"] - cached[f"{kind}_tokens"]) * p[f"{kind}_input"]
        + cached[f"{kind}_tokens"] * p[f"{kind}_cached_input"]
        for kind in ("text", "audio", "image")
    )
    return (dollars + out["text_tokens"] * p["text_output"] + out["audio_tokens"] * p["audio_output"]) / MILLION


REALTIME_PRICES = {
    "text_input": 4.5,
    "text_cached_input": 0.45,
    "text_output": 17.0,
    "audio_input": 33.0,
    "audio_cached_input": 0.35,
    "audio_output": 65.0,
    "image_input": 5.5,
    "image_cached_input": 0.55,
}


TRANSCRIBE = "openai:gpt-4o-mini-transcribe"  # the model OpenAI Realtime transcribes the user's speech with
TRANSCRIBE_PRICES = {"text_input": 1.5, "text_output": 5.5, "audio_input": 3.5, "audio_minute": 0.004}


def transcription_usage_cost(usage: dict, p: dict) -> float:
    """One input transcription's `usage`, in either documented shape, priced by hand."""
    if usage["type"] == "duration":
        return usage["seconds"] / 60 * p["audio_minute"]
    given = usage["input_token_details"]
    return (
        given["audio_tokens"] * p["audio_input"]
        + given["text_tokens"] * p["text_input"]
        + usage["output_tokens"] * p["text_output"]
    ) / MILLION


@pytest.mark.whisper
@pytest.mark.parametrize("shape", ["tokens", "duration"])
def test_a_realtime_stream_run_costs_what_the_server_reported_times_the_price_file(tmp_path, shape):
    """The responses and, billed apart, the input transcriptions (tokens, or seconds of audio)."""
    prices = write_prices(tmp_path / "prices.toml", "openai-realtime:gpt-realtime-x", REALTIME_PRICES)
    prices.write_text(
        prices.read_text() + "\n" + write_prices(tmp_path / "t.toml", TRANSCRIBE, TRANSCRIBE_PRICES).read_text()
    )
    run_dir = tmp_path / "run"
    with FakeOpenAIRealtime(reply="It is the one in your hand now.", transcription_usage=shape) as server:
        done = bench(
            "--model",
            "openai-realtime:gpt-realtime-x",
            "--base-url",
            server.base_url,
            "--via",
            "stream",
            "--limit",
            "3",
            "--synthetic-frames",
            "--output",
            "audio",
            "--prices",
            str(prices),
            "--budget",
            "1000",
            "--output-dir",
            str(run_dir),
            env={"OPENAI_API_KEY": TEST_KEY},
        )
    assert done.returncode == 0, done.stderr
    assert server.problems == []
    transcribed = server.transcription_usages
    assert {u["type"] for u in transcribed} == {shape}
    transcription = sum(transcription_usage_cost(u, TRANSCRIBE_PRICES) for u in transcribed)
    assert transcription > 0
    sent = server.usages
    # the run exercised every kind of token: text, audio and images in, each partly cached; text and audio out
    details = [u["input_token_details"] for u in sent]
    for kind in ("text", "audio", "image"):
        assert any(d[f"{kind}_tokens"] for d in details) and any(
            d["cached_tokens_details"][f"{kind}_tokens"] for d in details
        ), kind
    assert any(u["output_token_details"]["audio_tokens"] for u in sent)
    expected = sum(realtime_usage_cost(u, REALTIME_PRICES) for u in sent) + transcription
    summary = json.loads((run_dir / "summary.json").read_text())
    cost = summary["cost"]["conditions"]["baseline"]
    assert cost["candidate_usd"] == pytest.approx(expected, rel=1e-9)
    assert cost["transcription_usd"] == pytest.approx(transcription, rel=1e-9)  # shown apart, part of the above
    assert cost["judge_usd"] == 0 and cost["trials"] == 3 and cost["unknown"] == []
    assert summary["cost"]["run"]["candidate_usd"] == pytest.approx(expected, rel=1e-9)
    assert summary["cost"]["run"]["transcription"][TRANSCRIBE]["turns"] == len(transcribed)
    # --budget counted the same spend as it arrived
    assert json.loads((run_dir / "budget.json").read_text())["spent_usd"] == pytest.approx(expected, rel=1e-6)
    # every response the server sent is a recorded reply, with its split as sent
    records = [json.loads(line) for line in (run_dir / "transcripts.jsonl").read_text().splitlines()]
    replies = [t["reply"]["usage"] for r in records for t in r["turns"]]
    assert len(replies) == len(sent)
    # each turn's transcription recorded beside its reply's usage, as the server sent it
    kept = [t["reply"]["transcription"] for r in records for t in r["turns"] if t["reply"]["transcription"]]
    assert len(kept) == len(transcribed) == len(replies)
    assert all(k["model"] == TRANSCRIBE and k["reported"] for k in kept)
    if shape == "duration":
        assert sum(k["seconds"] for k in kept) == pytest.approx(sum(u["seconds"] for u in transcribed))
    else:
        assert sum(k["input_audio_tokens"] for k in kept) == sum(
            u["input_token_details"]["audio_tokens"] for u in transcribed
        )
    assert sum(r["input_audio_tokens"] for r in replies) == sum(d["audio_tokens"] for d in details)
    assert sum(r["cached_image_tokens"] for r in replies) == sum(
        d["cached_tokens_details"]["image_tokens"] for d in details
    )
    # the manifest records the prices used, so the report can be recomputed anywhere
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert {
        k: v for k, v in manifest["prices"]["openai-realtime:gpt-realtime-x"].items() if k in REALTIME_PRICES
    } == REALTIME_PRICES
    assert {k: v for k, v in manifest["prices"][TRANSCRIBE].items() if k in TRANSCRIBE_PRICES} == TRANSCRIBE_PRICES
    findings = (run_dir / "findings.md").read_text()
    assert "## Cost" in findings and "cost (baseline): candidate $" in done.stdout
    assert "Input transcription" in findings
    assert f"Transcribed: `{TRANSCRIBE}` over {len(transcribed)} turns" in findings
    assert "input transcription $" in done.stdout


FLAT = {"text_input": 3000.0, "text_cached_input": 750.0, "text_output": 9000.0}  # dollars that add up quickly


def chat_cost(usage: dict) -> float:
    cached = usage["prompt_tokens_details"]["cached_tokens"]
    return (
        (usage["prompt_tokens"] - cached) * FLAT["text_input"]
        + cached * FLAT["text_cached_input"]
        + usage["completion_tokens"] * FLAT["text_output"]
    ) / MILLION


def cells_of(server: FakeOpenAI) -> list[float]:
    """Each cell's spend, in order: a cell starts with a request that holds no reply yet (Turn 1)."""
    cells: list[float] = []
    for request, usage in zip(server.requests, server.usages, strict=True):
        if not any(m["role"] == "assistant" for m in request["messages"]):
            cells.append(0.0)
        cells[-1] += chat_cost(usage)
    return cells


@pytest.mark.slow
def test_a_budget_stops_within_one_cells_spend_and_a_larger_one_finishes_the_run(tmp_path):
    prices = write_prices(tmp_path / "prices.toml", "openai:fake", FLAT)
    run_dir = tmp_path / "run"
    with FakeOpenAI(reply="The cordless drill in your hand now.", detailed_usage=True) as server:
        command = [
            "--model",
            "openai:fake",
            "--base-url",
            server.base_url,
            "--limit",
            "6",
            "--concurrency",
            "1",
            "--prices",
            str(prices),
            "--output-dir",
            str(run_dir),
        ]
        budget = 1.5
        first = bench(*command, "--budget", str(budget))
        cells = cells_of(server)
        assert first.returncode == 4, first.stderr  # stopped on the budget
        spent = sum(cells)
        assert 1 <= len(cells) < 6
        assert spent > budget >= spent - cells[-1]  # passed by the last cell started, not before it
        state = json.loads((run_dir / "budget.json").read_text())
        assert state["stopped_on_budget"] and state["cells_remaining"] == 6 - len(cells)
        assert state["spent_usd"] == pytest.approx(spent, rel=1e-9)
        assert f"{6 - len(cells)} cells remain" in first.stderr
        findings = (run_dir / "findings.md").read_text()
        assert "The run stopped on its budget" in findings and f"{6 - len(cells)} cells remain" in findings
        assert len((run_dir / "transcripts.jsonl").read_text().splitlines()) == len(cells)

        second = bench(*command, "--budget", "1000")  # the same command, a larger budget: it resumes
        assert second.returncode == 0, second.stderr
        all_cells = cells_of(server)
    assert f"{6 - len(cells)} cells to run ({len(cells)} already finished)" in second.stderr
    assert len(all_cells) == 6
    assert len((run_dir / "transcripts.jsonl").read_text().splitlines()) == 6
    state = json.loads((run_dir / "budget.json").read_text())
    assert not state["stopped_on_budget"] and state["spent_usd"] == pytest.approx(sum(all_cells), rel=1e-9)
    summary = json.loads((run_dir / "summary.json").read_text())
    cost = summary["cost"]["conditions"]["baseline"]
    assert cost["candidate_usd"] == pytest.approx(sum(all_cells), rel=1e-9) and cost["trials"] == 6
    correct = cost["correct_turn2"]
    assert cost["per_correct_turn2_usd"] == (pytest.approx(sum(all_cells) / correct, rel=1e-9) if correct else None)
    assert "stopped on its budget" not in (run_dir / "findings.md").read_text()


@pytest.mark.slow
def test_the_documented_price_example_keeps_a_budget_with_a_provider_that_does_not_split_cached_tokens(tmp_path):
    """docs/usage.md's `--prices` entry (cached text priced apart) for an endpoint whose usage has no cached
    split: the run is priced as not cached (an upper bound, said in findings) instead of stopping at once."""
    from tests.benchmark.run.test_prices import documented_example

    prices = tmp_path / "prices.toml"
    prices.write_text(documented_example().replace('["openai:my-model"]', '["openai:fake"]'))
    run_dir = tmp_path / "run"
    with FakeOpenAI(reply="The cordless drill in your hand now.") as server:  # usage: the two totals only
        done = bench(
            "--model",
            "openai:fake",
            "--base-url",
            server.base_url,
            "--limit",
            "2",
            "--concurrency",
            "1",
            "--prices",
            str(prices),
            "--budget",
            "1",
            "--output-dir",
            str(run_dir),
        )
        requests = list(server.requests)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not json.loads((run_dir / "budget.json").read_text())["stopped_on_budget"]
    cost = json.loads((run_dir / "summary.json").read_text())["cost"]["run"]
    replies = sum(len(json.loads(line)["turns"]) for line in (run_dir / "transcripts.jsonl").read_text().splitlines())
    assert replies == len(requests) >= 4
    outputs = sum(
        turn["reply"]["usage"]["output_tokens"]
        for line in (run_dir / "transcripts.jsonl").read_text().splitlines()
        for turn in json.loads(line)["turns"]
    )
    assert cost["candidate_usd"] == pytest.approx((11 * replies * 0.5 + outputs * 1.5) / MILLION)
    assert cost["upper_bound"] and "not cached" in cost["upper_bound"][0]
    assert "upper bound" in (run_dir / "findings.md").read_text()
