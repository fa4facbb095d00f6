"""The response cache (issue 12): a rerun asks nothing twice, a changed
prompt is a miss, judges and candidates are keyed as documented, and
`wearsim cache stats|clear`."""

import json
import os
import subprocess
import sys
from dataclasses import replace

import pytest

from candidates import GenerationConfig, Message, Reply, Usage
from candidates.cache import (
    CachedCandidate,
    CellCache,
    ResponseCache,
    default_cache_dir,
    request_key,
    safe_endpoint,
)
from tests.fake_openai import FakeOpenAI
from tests.paths import ROOT

VERDICT = json.dumps({"label": "prior", "rationale": "answers about the earlier object"})
NO_KEYS = {
    k: v
    for k, v in os.environ.items()
    if not k.endswith("_API_KEY") and k not in ("OPENAI_BASE_URL", "WEARSIM_JUDGE_BASE_URL")
}
CONFIG = GenerationConfig(temperature=0.0, max_tokens=50)


class CountingModel:
    model_id, family, endpoint = "openai:counting", "openai", "http://127.0.0.1:1/v1"

    def __init__(self):
        self.calls = 0

    async def respond(self, messages, system, config, on_delta=None):
        self.calls += 1
        return Reply(
            text=f"reply {self.calls}",
            model=self.model_id,
            usage=Usage(input_tokens=3, output_tokens=4),
            latency_s=0.25,
            first_token_s=0.1,
        )

    async def aclose(self):
        pass


# ---- keys and the store ---------------------------------------------------------------


def test_the_key_covers_every_part_of_the_request():
    messages = [Message(role="user", text="[Camera: a pan]\nIs it hot?")]
    base = request_key("openai:m", "http://h/v1", "sys", messages, CONFIG, 0)
    assert base == request_key("openai:m", "http://h/v1", "sys", list(messages), CONFIG, 0)
    changed = [
        request_key("openai:other", "http://h/v1", "sys", messages, CONFIG, 0),
        request_key("openai:m", "http://elsewhere/v1", "sys", messages, CONFIG, 0),
        request_key("openai:m", "http://h/v1", "another system prompt", messages, CONFIG, 0),
        request_key(
            "openai:m", "http://h/v1", "sys", [Message(role="user", text="[Camera: a pan]\nIs it hot now?")], CONFIG, 0
        ),
        request_key("openai:m", "http://h/v1", "sys", messages, GenerationConfig(temperature=0.7, max_tokens=50), 0),
        request_key("openai:m", "http://h/v1", "sys", messages, GenerationConfig(temperature=0.0, max_tokens=51), 0),
        request_key(
            "openai:m",
            "http://h/v1",
            "sys",
            messages,
            GenerationConfig(temperature=0.0, max_tokens=50, json_mode=True),
            0,
        ),
        request_key("openai:m", "http://h/v1", "sys", messages, CONFIG, 1),
        request_key("openai:m", "http://h/v1", "sys", messages + [Message(role="assistant", text="yes")], CONFIG, 0),
    ]
    assert base not in changed and len(set(changed)) == len(changed)


def test_endpoints_are_stored_without_credentials():
    assert safe_endpoint("https://user:pw@host.example:8443/v1/?key=1") == "https://host.example:8443/v1"
    assert safe_endpoint(None) == "default"


def test_default_directory(tmp_path):
    assert default_cache_dir({"WEARSIM_CACHE_DIR": str(tmp_path)}) == tmp_path
    assert default_cache_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "wearsim"


async def test_hit_on_the_same_request_miss_on_a_changed_one(tmp_path):
    inner = CountingModel()
    model = CachedCandidate(inner, ResponseCache(tmp_path), role="candidate")
    messages = [Message(role="user", text="Which one is it?")]
    first = await model.respond(messages, "sys", CONFIG)
    again = await model.respond(messages, "sys", CONFIG)
    assert inner.calls == 1 and not first.cached and again.cached
    assert again == replace(first, cached=True)  # text, usage and timings as first recorded
    deltas = []
    await model.respond(messages, "sys", CONFIG, on_delta=deltas.append)
    assert deltas == [first.text]  # a streamed call gets the cached text as one piece
    changed = await model.respond([Message(role="user", text="Which one is it now?")], "sys", CONFIG)
    assert inner.calls == 2 and changed.text == "reply 2"
    # a new process (a new cache object on the same directory) still hits
    reopened = CachedCandidate(CountingModel(), ResponseCache(tmp_path))
    assert (await reopened.respond(messages, "sys", CONFIG)).text == first.text
    assert reopened.inner.calls == 0


async def test_candidates_are_keyed_by_trial_and_judges_are_not(tmp_path):
    cache = ResponseCache(tmp_path)
    candidate_inner, judge_inner = CountingModel(), CountingModel()
    candidate = CachedCandidate(candidate_inner, cache, role="candidate")
    judge = CachedCandidate(judge_inner, cache, role="judge", keyed_by_trial=False)
    messages = [Message(role="user", text="Is this ripe?")]
    for trial in (0, 1, 0):
        cell = CellCache(trial=trial)
        await candidate.for_cell(cell).respond(messages, "sys", CONFIG)
        await judge.for_cell(cell).respond(messages, "judge sys", CONFIG)
    assert candidate_inner.calls == 2  # trial 0 and trial 1; trial 0 again is a hit
    assert judge_inner.calls == 1


async def test_the_cell_log_records_which_replies_came_from_the_cache(tmp_path):
    model = CachedCandidate(CountingModel(), ResponseCache(tmp_path), role="judge", keyed_by_trial=False)
    cell = CellCache()
    events = cell.events
    await model.for_cell(cell).respond([Message(role="user", text="a")], "", CONFIG)
    await model.for_cell(cell).respond([Message(role="user", text="a")], "", CONFIG)
    assert events == [("judge", False), ("judge", True)]


async def test_errors_are_not_cached(tmp_path):
    class Failing(CountingModel):
        async def respond(self, *args, **kwargs):
            self.calls += 1
            raise RuntimeError("HTTP 500")

    inner = Failing()
    model = CachedCandidate(inner, ResponseCache(tmp_path))
    for _ in range(2):
        try:
            await model.respond([Message(role="user", text="a")], "", CONFIG)
        except RuntimeError:
            pass
    assert inner.calls == 2 and ResponseCache(tmp_path).stats().entries == 0


# ---- bench, resume and rescore --------------------------------------------------------------


def wearsim(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "benchmark", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=env or NO_KEYS,
    )


def bench_args(candidate, judge, run_dir, cache_dir, *extra):
    return [
        "bench",
        "--model",
        "openai:cand",
        "--base-url",
        candidate.base_url,
        "--judge-family",
        "openai",
        "--judge-model",
        "openai:judge",
        "--judge-base-url",
        judge.base_url,
        "--conditions",
        "baseline",
        "--limit",
        "3",
        "--output-dir",
        str(run_dir),
        "--cache",
        "--cache-dir",
        str(cache_dir),
        *extra,
    ]


def cache_log(run_dir):
    return [json.loads(line) for line in (run_dir / "cache_log.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_a_rerun_costs_no_request_and_a_changed_prompt_does(tmp_path):
    cache_dir = tmp_path / "cache"
    with FakeOpenAI(reply="The hammer from before.") as candidate, FakeOpenAI(reply=VERDICT) as judge:
        first = wearsim(*bench_args(candidate, judge, tmp_path / "one", cache_dir))
        assert first.returncode == 0, first.stderr
        asked = (len(candidate.requests), len(judge.requests))
        assert asked[0] >= 9 and asked[1] >= 6  # 3 cells, each a miss: turns 1-3 and two verdicts
        again = wearsim(*bench_args(candidate, judge, tmp_path / "two", cache_dir))
        assert again.returncode == 0, again.stderr
        assert (len(candidate.requests), len(judge.requests)) == asked  # nothing asked twice
        changed = wearsim(*bench_args(candidate, judge, tmp_path / "three", cache_dir, "--no-camera"))
        assert changed.returncode == 0, changed.stderr
        assert len(candidate.requests) == 2 * asked[0] and len(judge.requests) == 2 * asked[1]
    one = [json.loads(line) for line in (tmp_path / "one" / "transcripts.jsonl").read_text().splitlines()]
    two = [json.loads(line) for line in (tmp_path / "two" / "transcripts.jsonl").read_text().splitlines()]

    def flags(record):  # which replies and verdicts the record says came from the cache
        return [t["reply"]["cached"] for t in record["turns"]] + [record[f"turn_{n}_judge_cached"] for n in (2, 3)]

    assert all(flags(r) == [False] * 5 for r in one) and all(flags(r) == [True] * 5 for r in two)

    def strip(record):  # the same record, but for its wall time and the cache flags
        record = {k: v for k, v in record.items() if k != "wall_s" and not k.endswith("_cached")}
        record["turns"] = [
            {**t, "reply": {k: v for k, v in t["reply"].items() if k != "cached"}} for t in record["turns"]
        ]
        return record

    assert sorted(map(json.dumps, map(strip, one))) == sorted(map(json.dumps, map(strip, two)))
    assert all(
        line["replies"]["candidate"] == {"from_cache": 0, "requested": 3} for line in cache_log(tmp_path / "one")
    )
    assert all(
        line["replies"]["candidate"] == {"from_cache": 3, "requested": 0}
        and line["replies"]["judge"] == {"from_cache": 2, "requested": 0}
        for line in cache_log(tmp_path / "two")
    )
    assert len(cache_log(tmp_path / "two")) == 3
    assert "replies from the cache" in again.stderr
    m = json.loads((tmp_path / "two" / "manifest.json").read_text())
    assert m["response_cache"]["candidate"] is True and m["response_cache"]["log"] == "cache_log.jsonl"


@pytest.mark.slow
def test_candidates_above_temperature_0_are_cached_only_when_asked(tmp_path):
    cache_dir = tmp_path / "cache"
    with FakeOpenAI(reply="The hammer from before.") as candidate, FakeOpenAI(reply=VERDICT) as judge:
        for name in ("a", "b"):
            done = wearsim(*bench_args(candidate, judge, tmp_path / name, cache_dir, "--temperature", "0.7"))
            assert done.returncode == 0, done.stderr
        assert "are not cached" in done.stderr
        judge_asked = len(judge.requests)
        assert len(candidate.requests) == 2 * 9  # asked both times
        for name in ("c", "d"):
            done = wearsim(
                *bench_args(candidate, judge, tmp_path / name, cache_dir, "--temperature", "0.7", "--cache", "all")
            )
            assert done.returncode == 0, done.stderr
        assert len(candidate.requests) == 3 * 9  # once more, then from the cache
        assert len(judge.requests) == judge_asked  # the judge replies were cached from the first run


@pytest.mark.slow
def test_resume_after_a_crash_asks_nothing_for_finished_requests(tmp_path):
    cache_dir = tmp_path / "cache"
    with FakeOpenAI(reply="The hammer from before.") as candidate, FakeOpenAI(reply=VERDICT) as judge:
        assert wearsim(*bench_args(candidate, judge, tmp_path / "run", cache_dir)).returncode == 0
        asked = len(candidate.requests)
        lines = (tmp_path / "run" / "transcripts.jsonl").read_text().splitlines()
        (tmp_path / "run" / "transcripts.jsonl").write_text(lines[0] + "\n")  # as if killed after one cell
        resumed = wearsim(*bench_args(candidate, judge, tmp_path / "run", cache_dir), "--resume")
        assert resumed.returncode == 0, resumed.stderr
        assert "2 cells to run" in resumed.stderr and len(candidate.requests) == asked


@pytest.mark.slow
def test_rescore_with_the_same_judge_twice_asks_it_once(tmp_path):
    cache_dir = tmp_path / "cache"
    with FakeOpenAI(reply="The hammer from before.") as candidate, FakeOpenAI(reply=VERDICT) as judge:
        done = wearsim(
            "bench",
            "--model",
            "openai:cand",
            "--base-url",
            candidate.base_url,
            "--judge-family",
            "lexical",
            "--conditions",
            "baseline",
            "--limit",
            "3",
            "--output-dir",
            str(tmp_path / "run"),
        )
        assert done.returncode == 0, done.stderr
        for name in ("r1", "r2"):
            done = wearsim(
                "rescore",
                str(tmp_path / "run"),
                "--judge-family",
                "openai",
                "--judge-model",
                "openai:judge",
                "--judge-base-url",
                judge.base_url,
                "--cache",
                "--cache-dir",
                str(cache_dir),
                "--output-dir",
                str(tmp_path / name),
            )
            assert done.returncode == 0, done.stderr
            if name == "r1":
                asked = len(judge.requests)
        assert asked > 0 and len(judge.requests) == asked
        assert f"{asked} judge replies from the cache, 0 requested" in done.stderr


@pytest.mark.slow
def test_cache_stats_and_clear(tmp_path):
    cache_dir = tmp_path / "cache"
    with FakeOpenAI(reply="The hammer from before.") as candidate, FakeOpenAI(reply=VERDICT) as judge:
        assert wearsim(*bench_args(candidate, judge, tmp_path / "run", cache_dir)).returncode == 0
    stats = wearsim("cache", "stats", "--cache-dir", str(cache_dir), "--json")
    assert stats.returncode == 0, stats.stderr
    data = json.loads(stats.stdout)
    assert data["entries"] > 0 and set(data["by_model"]) == {"openai:cand", "openai:judge"}
    assert set(data["by_role"]) == {"candidate", "judge"}
    text = wearsim("cache", "stats", "--cache-dir", str(cache_dir))
    assert f"entries: {data['entries']}" in text.stdout
    cleared = wearsim("cache", "clear", "--cache-dir", str(cache_dir), "--model", "openai:judge")
    assert cleared.returncode == 0 and f"removed {data['by_model']['openai:judge']} cached" in cleared.stdout
    assert json.loads(wearsim("cache", "stats", "--cache-dir", str(cache_dir), "--json").stdout)["by_model"] == {
        "openai:cand": data["by_model"]["openai:cand"]
    }
    assert wearsim("cache", "clear", "--cache-dir", str(cache_dir)).returncode == 0
    assert json.loads(wearsim("cache", "stats", "--cache-dir", str(cache_dir), "--json").stdout)["entries"] == 0
