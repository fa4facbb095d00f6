"""Candidates and the runner: real llama.cpp, retries, resume after kill -9."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from candidates import GenerationConfig, Message, parse_model_id
from candidates.openai_chat import OpenAIChatCandidate
from candidates.retry import backoff_delay
from tests.fake_openai import FakeOpenAI


def test_model_id_inference():
    assert parse_model_id("gpt-4o") == ("openai", "gpt-4o")
    assert parse_model_id("o3-mini") == ("openai", "o3-mini")
    assert parse_model_id("gemini-2.5-flash") == ("gemini", "gemini-2.5-flash")
    assert parse_model_id("claude-sonnet-4-5") == ("anthropic", "claude-sonnet-4-5")
    assert parse_model_id("local") == ("local", "")
    assert parse_model_id("local:/m/x.gguf") == ("local", "/m/x.gguf")
    with pytest.raises(ValueError, match="cannot tell the provider"):
        parse_model_id("mystery-7b")


@pytest.mark.llama
def test_openai_adapter_against_the_real_llama_server(local_llama_url):
    async def talk():
        candidate = OpenAIChatCandidate("smollm2", base_url=local_llama_url, api_key="x")
        deltas = []
        streamed = await candidate.respond(
            [Message(role="user", text="[Camera: a red round fruit on a counter]\nIs this ripe?")],
            "You are a helpful assistant.",
            GenerationConfig(max_tokens=40),
            on_delta=deltas.append,
        )
        plain = await candidate.respond([Message(role="user", text="Say hello.")], "", GenerationConfig(max_tokens=20))
        await candidate.aclose()
        return streamed, deltas, plain

    reply, deltas, plain = asyncio.run(talk())
    assert reply.text.strip() and "".join(deltas) == reply.text
    assert reply.first_token_s is not None and reply.latency_s >= reply.first_token_s
    assert plain.usage.output_tokens > 0 and plain.usage.input_tokens > 0


def test_retry_on_429_honours_retry_after():
    with FakeOpenAI(fail_first=2, retry_after="0") as server:
        candidate = OpenAIChatCandidate("fake", base_url=server.base_url, api_key="x")
        reply = asyncio.run(candidate.respond([Message(role="user", text="hi")], "", GenerationConfig()))
    assert server.statuses == [429, 429, 200]
    assert reply.text.startswith("The cross-tip") and reply.usage.output_tokens == 7
    assert backoff_delay(3, retry_after=2.5) == 2.5
    assert 0 <= backoff_delay(3) <= 8


@pytest.mark.clock
def test_a_cell_that_keeps_failing_is_recorded_as_an_error(tmp_path):
    with FakeOpenAI(fail_first=100, retry_after="0") as server:
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmark",
                "bench",
                "--model",
                "openai:fake",
                "--base-url",
                server.base_url,
                "--judge-family",
                "lexical",
                "--conditions",
                "baseline",
                "--limit",
                "1",
                "--output-dir",
                str(tmp_path / "run"),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "OPENAI_API_KEY": ""},
        )
    assert out.returncode == 3, out.stderr  # every cell errored: the run failed, and says so
    assert "1 of 1 cells errored" in out.stderr
    record = json.loads((tmp_path / "run" / "transcripts.jsonl").read_text())
    assert record["error"].startswith("RetryableError") and "429" in record["error"]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["counts"]["errored"] == 1


def _cells(path: Path):
    return [(r["condition"], r["scenario_id"], r["trial"]) for r in map(json.loads, path.read_text().splitlines())]


@pytest.mark.clock
def test_resume_after_kill_loses_nothing_and_duplicates_nothing(tmp_path):
    run_dir = tmp_path / "run"
    with FakeOpenAI(delay=0.15) as server:
        command = [
            sys.executable,
            "-m",
            "benchmark",
            "bench",
            "--model",
            "openai:fake",
            "--base-url",
            server.base_url,
            "--judge-family",
            "lexical",
            "--conditions",
            "baseline",
            "--limit",
            "12",
            "--concurrency",
            "2",
            "--output-dir",
            str(run_dir),
        ]
        env = {**os.environ, "OPENAI_API_KEY": ""}
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        transcripts = run_dir / "transcripts.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if transcripts.exists() and len(transcripts.read_text().splitlines()) >= 3:
                break
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        before = _cells(transcripts)
        assert 3 <= len(before) < 12
        out = subprocess.run(command + ["--resume"], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    after = _cells(transcripts)
    assert after[: len(before)] == before
    assert len(after) == len(set(after)) == 12
    assert f"{12 - len(before)} cells to run ({len(before)} already finished)" in out.stderr


@pytest.mark.clock
def test_a_run_dir_with_other_settings_is_refused(tmp_path):
    with FakeOpenAI() as server:
        base = [
            sys.executable,
            "-m",
            "benchmark",
            "bench",
            "--base-url",
            server.base_url,
            "--judge-family",
            "lexical",
            "--conditions",
            "baseline",
            "--limit",
            "1",
            "--output-dir",
            str(tmp_path / "run"),
        ]
        env = {**os.environ, "OPENAI_API_KEY": ""}
        assert (
            subprocess.run(base + ["--model", "openai:one"], capture_output=True, env=env, timeout=300).returncode == 0
        )
        out = subprocess.run(base + ["--model", "openai:two"], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 2
    assert "different candidate_model" in out.stderr


@pytest.mark.clock
def test_bench_end_to_end_on_the_local_model(tmp_path):
    run_dir = tmp_path / "local"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmark",
            "bench",
            "--limit",
            "2",
            "--conditions",
            "baseline",
            "--max-tokens",
            "60",
            "--output-dir",
            str(run_dir),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")},
    )
    assert out.returncode == 0, out.stderr
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["candidate_model"] == "local" and manifest["judge_family"] == "lexical"
    assert manifest["candidate_model_file"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    for key in (
        "benchmark_version",
        "schema_revision",
        "camera_injection",
        "scenarios_sha256",
        "expected_answers_sha256",
        "interventions_sha256",
        "judge_prompt_version",
        "judge_prompt_sha256",
        "judge_model",
        "judge_family_resolution",
        "trials",
        "temperature",
        "ranking_condition",
        "timestamp_utc",
        "runner_git_commit",
    ):
        assert manifest[key] is not None, key
    records = [json.loads(line) for line in (run_dir / "transcripts.jsonl").read_text().splitlines()]
    assert sorted(r["scenario_id"] for r in records) == ["sc-01", "sc-02"]
    assert all(r["error"] is None and r["turn_2_response"] for r in records)
    assert (run_dir / "logs" / "llama_server.log").exists()
    assert (run_dir / "summary.json").exists() and (run_dir / "findings.md").exists()
