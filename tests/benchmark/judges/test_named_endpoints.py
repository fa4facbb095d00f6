"""What a run cites is what ran (issue 58): a judge reached through `--judge-base-url` without
`--judge-model` is recorded, cited and priced as the model its endpoint names (the `model` field of its
reply), with the endpoint's host; a price the table has not got is shown unpriced, never another
model's. The same for `wearsim rescore` and for a candidate at a custom `--base-url`. An endpoint that
names nothing (or only repeats the name it was sent) stops the command with one line."""

import json
import os
import subprocess
import sys

import pytest

from benchmark.judges.family import endpoint_host
from tests.fake_openai import FakeOpenAI
from tests.paths import ROOT

VERDICT = json.dumps({"label": "current", "rationale": "grounded in the object in hand now"})
NO_KEYS = {
    k: v
    for k, v in os.environ.items()
    if not k.endswith("_API_KEY") and k not in ("OPENAI_BASE_URL", "WEARSIM_JUDGE_BASE_URL")
}
SECRET = "sk-test-not-a-real-key-58"


def wearsim(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "benchmark", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=env or NO_KEYS,
    )


def bench(run_dir, *args, env=None):
    return wearsim("bench", "--conditions", "baseline", "--limit", "2", "--output-dir", str(run_dir), *args, env=env)


def read(run_dir, name):
    return (run_dir / name).read_text(encoding="utf-8")


def cite(run_dir) -> str:
    return read(run_dir, "findings.md").rstrip().splitlines()[-1]


@pytest.mark.slow
def test_a_judge_the_endpoint_names_is_what_the_run_records_cites_and_leaves_unpriced(tmp_path):
    run_dir = tmp_path / "run"
    with (
        FakeOpenAI(reply="That is the screwdriver in your hand now.") as candidate,
        FakeOpenAI(reply=VERDICT, model="fake-judge-7b") as judge,
        FakeOpenAI(reply=VERDICT, model="fake-ranker-2b") as ranking,
    ):
        done = bench(
            run_dir,
            *("--model", "openai:cand", "--base-url", candidate.base_url),
            *("--judge-family", "openai", "--judge-base-url", judge.base_url),
            *("--ranking-judge-family", "openai", "--ranking-judge-base-url", ranking.base_url),
        )
        judge_host, candidate_host = endpoint_host(judge.base_url), endpoint_host(candidate.base_url)
        asked = [r["model"] for r in judge.requests]
    assert done.returncode == 0, done.stderr
    # one naming request (with the family's default), then every verdict asked of the model named
    assert asked[0] == "gpt-4o-mini" and set(asked[1:]) == {"fake-judge-7b"} and len(asked) > 1
    assert f"judge openai:fake-judge-7b at {judge_host}" in done.stderr
    manifest = json.loads(read(run_dir, "manifest.json"))
    assert manifest["judge_model"] == "openai:fake-judge-7b" and manifest["judge_endpoint"] == judge_host
    assert manifest["candidate_endpoint"] == candidate_host
    assert manifest["ranking_judge_model"] == "openai:fake-ranker-2b"
    assert manifest["prices"]["openai:fake-judge-7b"] is None and "openai:gpt-4o-mini" not in manifest["prices"]
    line = cite(run_dir)
    assert f"judge openai `openai:fake-judge-7b` at {judge_host}" in line
    assert f"candidate `openai:cand` at {candidate_host} via direct" in line and "gpt-4o-mini" not in line
    cost = json.loads(read(run_dir, "summary.json"))["cost"]["conditions"]["baseline"]
    assert cost["judge_usd"] is None and sorted(cost["judge_unknown"]) == [
        "no price for openai:fake-judge-7b",
        "no price for openai:fake-ranker-2b",
    ]
    findings = read(run_dir, "findings.md")
    assert "| baseline | unpriced | unpriced |" in findings and "gpt-4o-mini" not in findings
    assert wearsim("view", str(run_dir)).returncode == 0
    viewer = read(run_dir, "index.html")
    assert f"openai (openai:fake-judge-7b) at {judge_host}" in viewer and "<td>unpriced</td>" in viewer
    assert f"judge openai `openai:fake-judge-7b` at {judge_host}" in viewer


@pytest.mark.slow
def test_an_endpoint_that_names_no_model_stops_the_run_with_one_line(tmp_path):
    """A server that only repeats the model it was sent (as some do) cannot say what ran."""
    with FakeOpenAI(reply="The screwdriver now.") as candidate, FakeOpenAI(reply=VERDICT) as judge:
        done = bench(
            tmp_path / "run",
            *("--model", "openai:cand", "--base-url", candidate.base_url),
            *("--judge-family", "openai", "--judge-base-url", judge.base_url.replace("http://", "http://u:hunter2@")),
        )
        assert candidate.requests == [] and len(judge.requests) == 1
    assert done.returncode == 2
    [line] = [text for text in done.stderr.splitlines() if text.strip()]
    assert f"--judge-base-url {endpoint_host(judge.base_url)}" in line and "only repeats the 'gpt-4o-mini'" in line
    assert "pass --judge-model NAME" in line and "hunter2" not in line
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_a_candidate_at_a_custom_endpoint_without_model_is_the_model_it_names(tmp_path):
    run_dir = tmp_path / "run"
    with FakeOpenAI(reply="The screwdriver in your hand now.", model="served-cand-3b") as candidate:
        done = bench(
            run_dir,
            "--base-url",
            candidate.base_url,
            "--judge-family",
            "lexical",
            env={**NO_KEYS, "OPENAI_API_KEY": SECRET},
        )
        asked = [r["model"] for r in candidate.requests]
    assert done.returncode == 0, done.stderr
    assert asked[0] == "gpt-4o-mini" and set(asked[1:]) == {"served-cand-3b"}
    manifest = json.loads(read(run_dir, "manifest.json"))
    assert manifest["candidate_model"] == "openai:served-cand-3b"
    assert f"candidate `openai:served-cand-3b` at {endpoint_host(candidate.base_url)} via direct" in cite(run_dir)
    cost = json.loads(read(run_dir, "summary.json"))["cost"]["conditions"]["baseline"]
    assert cost["candidate_usd"] is None and cost["candidate_unknown"] == ["no price for openai:served-cand-3b"]
    for path in run_dir.rglob("*"):  # the key goes in a header only: never into a file of the run
        assert not path.is_file() or SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in done.stderr


@pytest.mark.slow
def test_rescore_records_and_cites_the_judge_its_endpoint_names_and_its_host(tmp_path):
    source = tmp_path / "run"
    with FakeOpenAI(reply="The screwdriver in your hand now.") as candidate:
        done = bench(source, "--model", "openai:cand", "--base-url", candidate.base_url, "--judge-family", "lexical")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "rescored"
    with FakeOpenAI(reply=VERDICT, model="fake-judge-7b") as judge:
        done = wearsim(
            "rescore",
            str(source),
            "--judge-family",
            "openai",
            "--judge-base-url",
            judge.base_url,
            "--output-dir",
            str(out),
        )
        host = endpoint_host(judge.base_url)
        asked = [r["model"] for r in judge.requests]
    assert done.returncode == 0, done.stderr
    assert asked[0] == "gpt-4o-mini" and set(asked[1:]) == {"fake-judge-7b"}
    manifest = json.loads(read(out, "manifest.json"))
    assert manifest["judge_model"] == "openai:fake-judge-7b" and manifest["judge_endpoint"] == host
    assert manifest["rescore"]["previous_judge_model"] == "lexical"
    assert f"judge openai `openai:fake-judge-7b` at {host}" in cite(out)
    cost = json.loads(read(out, "summary.json"))["cost"]["run"]
    assert cost["judge_usd"] is None and cost["judge_unknown"] == ["no price for openai:fake-judge-7b"]

    with FakeOpenAI(reply=VERDICT) as echoing:  # names nothing: refused, nothing written
        done = wearsim(
            "rescore", str(source), "--judge-family", "openai", "--judge-base-url", echoing.base_url,
            "--output-dir", str(tmp_path / "again"),
        )  # fmt: skip
    assert done.returncode == 2 and "pass --judge-model NAME" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "again").exists()
