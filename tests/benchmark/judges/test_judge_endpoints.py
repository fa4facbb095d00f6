"""Judge endpoints and families (issue 12): the candidate and each judge on
their own OpenAI-compatible server, the manifest naming a non-default
endpoint by host only, and explicit families without a key failing loudly."""

import asyncio
import json
import os
import subprocess
import sys

import pytest

from benchmark.judges import JudgeFamilyError, resolve_judge_family
from benchmark.judges.family import endpoint_host, is_custom_endpoint
from candidates import GenerationConfig, Message
from candidates.openai_chat import OpenAIChatCandidate
from candidates.retry import RetryableError
from tests.fake_openai import FakeOpenAI
from tests.paths import ROOT

VERDICT = json.dumps({"label": "current", "rationale": "grounded in the object in hand now"})
NO_KEYS = {
    k: v
    for k, v in os.environ.items()
    if not k.endswith("_API_KEY") and k not in ("OPENAI_BASE_URL", "WEARSIM_JUDGE_BASE_URL")
}


def bench(args, run_dir, env=None):
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmark",
            "bench",
            "--conditions",
            "baseline",
            "--limit",
            "2",
            "--output-dir",
            str(run_dir),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=env or NO_KEYS,
    )


def manifest(run_dir):
    return json.loads((run_dir / "manifest.json").read_text())


# ---- resolution -----------------------------------------------------------------


def test_explicit_family_without_its_key_names_the_variable():
    with pytest.raises(JudgeFamilyError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        resolve_judge_family("gemini", "openai", env={"OPENAI_API_KEY": "k"})
    with pytest.raises(JudgeFamilyError, match="OPENAI_API_KEY.*--judge-base-url"):
        resolve_judge_family("openai", "local", env={})
    with pytest.raises(JudgeFamilyError, match="--ranking-judge-family claude needs credentials"):
        resolve_judge_family("claude", "openai", env={}, flag="--ranking-judge-family")
    # a judge endpoint counts for an OpenAI-compatible judge
    assert resolve_judge_family("openai", "local", env={}, base_url="http://127.0.0.1:9/v1")[0] == "openai"


def test_auto_asks_for_an_explicit_family_for_an_open_weights_model_on_a_custom_endpoint():
    keys = {"OPENAI_API_KEY": "k", "GEMINI_API_KEY": "g"}
    with pytest.raises(JudgeFamilyError, match="open-weights.*127.0.0.1:8000.*explicit --judge-family"):
        resolve_judge_family("auto", "openai", env=keys, candidate_base_url="http://127.0.0.1:8000/v1")
    # OpenAI's own endpoint is not custom: auto still picks gemini
    assert (
        resolve_judge_family("auto", "openai", env=keys, candidate_base_url="https://api.openai.com/v1")[0] == "gemini"
    )
    # and with no judge credentials at all, auto falls back to lexical, saying so
    family, text = resolve_judge_family("auto", "openai", env={}, candidate_base_url="http://10.0.0.5:8000/v1")
    assert family == "lexical" and "open-weights" in text


def test_endpoint_host_keeps_neither_path_nor_credentials():
    assert endpoint_host(None) is None
    assert endpoint_host("http://127.0.0.1:8000/v1") == "127.0.0.1:8000"
    assert endpoint_host("https://user:s3cret@llm.example.org/v1?key=abc") == "llm.example.org"
    assert not is_custom_endpoint("https://api.openai.com/v1") and is_custom_endpoint("http://localhost:1/v1")


# ---- bench against separate servers -----------------------------------------------


@pytest.mark.slow
def test_judge_and_candidate_on_their_own_servers(tmp_path):
    with FakeOpenAI(reply="That is the screwdriver in your hand now.") as candidate, FakeOpenAI(reply=VERDICT) as judge:
        done = bench(
            [
                "--model",
                "openai:cand",
                "--base-url",
                candidate.base_url,
                "--judge-family",
                "openai",
                "--judge-model",
                "openai:judge-m",
                "--judge-base-url",
                judge.base_url,
            ],
            tmp_path / "run",
        )
    assert done.returncode == 0, done.stderr
    assert candidate.requests and judge.requests
    assert {r["model"] for r in candidate.requests} == {"cand"}
    assert {r["model"] for r in judge.requests} == {"judge-m"}
    assert all(r.get("response_format") for r in judge.requests)  # JSON mode: only judge requests there
    m = manifest(tmp_path / "run")
    assert m["candidate_endpoint"] == endpoint_host(candidate.base_url)
    assert m["judge_endpoint"] == endpoint_host(judge.base_url)
    assert m["judge_model"] == "openai:judge-m" and m["judge_family"] == "openai"
    assert "/" not in m["candidate_endpoint"] + m["judge_endpoint"]  # hosts only: never a path
    assert "judge openai:judge-m at 127.0.0.1" in done.stderr


@pytest.mark.slow
def test_judge_base_url_from_the_environment_and_a_ranking_judge_elsewhere(tmp_path):
    with (
        FakeOpenAI(reply="The screwdriver you hold now.") as candidate,
        FakeOpenAI(reply=VERDICT) as judge,
        FakeOpenAI(reply=VERDICT) as ranking,
    ):
        env = {**NO_KEYS, "WEARSIM_JUDGE_BASE_URL": judge.base_url}
        done = bench(
            [
                "--model",
                "openai:cand",
                "--base-url",
                candidate.base_url,
                "--judge-family",
                "openai",
                "--judge-model",
                "openai:j1",
                "--ranking-judge-family",
                "openai",
                "--ranking-judge-model",
                "openai:j2",
                "--ranking-judge-base-url",
                ranking.base_url,
            ],
            tmp_path / "run",
            env,
        )
    assert done.returncode == 0, done.stderr
    assert {r["model"] for r in judge.requests} == {"j1"}
    assert {r["model"] for r in ranking.requests} == {"j2"}
    assert {r["model"] for r in candidate.requests} == {"cand"}
    m = manifest(tmp_path / "run")
    assert m["judge_endpoint"] == endpoint_host(judge.base_url)
    assert m["ranking_judge_endpoint"] == endpoint_host(ranking.base_url)


@pytest.mark.slow
def test_credentials_in_an_endpoint_never_reach_the_manifest(tmp_path):
    with FakeOpenAI(reply="The screwdriver now.") as candidate, FakeOpenAI(reply=VERDICT) as judge:
        done = bench(
            [
                "--model",
                "openai:cand",
                "--base-url",
                candidate.base_url,
                "--judge-family",
                "openai",
                "--judge-model",
                "openai:j",
                "--judge-base-url",
                judge.base_url.replace("http://", "http://user:hunter2@"),
            ],
            tmp_path / "run",
        )
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "run" / "manifest.json").read_text()
    assert "hunter2" not in text and "user" not in manifest(tmp_path / "run")["judge_endpoint"]
    assert "hunter2" not in done.stderr


def test_explicit_family_without_key_stops_bench_before_anything_is_written(tmp_path):
    with FakeOpenAI() as candidate:
        done = bench(
            ["--model", "openai:cand", "--base-url", candidate.base_url, "--judge-family", "gemini"], tmp_path / "run"
        )
    assert done.returncode == 2
    assert "GEMINI_API_KEY" in done.stderr and "lexical" in done.stderr
    assert not (tmp_path / "run").exists()
    assert candidate.requests == []


def test_auto_with_an_open_weights_candidate_on_a_custom_url_asks_for_a_family(tmp_path):
    with FakeOpenAI() as candidate:
        env = {**NO_KEYS, "GEMINI_API_KEY": "g-test-not-real"}
        done = bench(["--model", "openai:qwen2.5", "--base-url", candidate.base_url], tmp_path / "run", env)
    assert done.returncode == 2
    assert "explicit --judge-family" in done.stderr and "g-test-not-real" not in done.stderr
    assert candidate.requests == []


def test_the_judge_does_not_follow_the_candidate_base_url(tmp_path):
    """`--base-url` reaches the candidate only: an openai judge without its own endpoint or key is an error
    that says how to give it one, not a run where every judge call goes to the candidate's server."""
    with FakeOpenAI() as candidate:
        done = bench(
            ["--model", "openai:cand", "--base-url", candidate.base_url, "--judge-family", "openai"], tmp_path / "run"
        )
    assert done.returncode == 2 and "--judge-base-url" in done.stderr
    assert candidate.requests == []


# ---- the chat adapter's HTTP path ------------------------------------------------------


@pytest.mark.slow
async def test_the_chat_adapter_sends_what_the_openai_sdk_would():
    """The adapter reads and writes the wire format itself; its requests are the SDK's, byte for byte in JSON."""
    from openai import AsyncOpenAI

    with FakeOpenAI(reply="hello there") as server:
        candidate = OpenAIChatCandidate("m", base_url=server.base_url, api_key="x")
        plain = await candidate.respond([Message(role="user", text="hi")], "sys", GenerationConfig(max_tokens=9))
        deltas = []
        streamed = await candidate.respond(
            [Message(role="user", text="hi")], "sys", GenerationConfig(max_tokens=9), on_delta=deltas.append
        )
        await candidate.aclose()
        assert plain.text == streamed.text == "".join(deltas) == "hello there"
        assert plain.usage.input_tokens == 11 and streamed.usage.output_tokens == 2
        ours = server.requests[-2:]
        server.requests.clear()
        sdk = AsyncOpenAI(api_key="x", base_url=server.base_url, max_retries=0)
        messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]
        await sdk.chat.completions.create(model="m", messages=messages, temperature=0.0, max_tokens=9)
        stream = await sdk.chat.completions.create(
            model="m",
            messages=messages,
            temperature=0.0,
            max_tokens=9,
            stream=True,
            stream_options={"include_usage": True},
        )
        async for _ in stream:
            pass
        await sdk.close()
    assert ours == server.requests[-2:]


async def test_http_errors_are_final_or_retried_as_before():
    with FakeOpenAI(fail_first=1, retry_after="0") as server:
        candidate = OpenAIChatCandidate("m", base_url=server.base_url, api_key="x")
        reply = await candidate.respond([Message(role="user", text="hi")], "", GenerationConfig())
        await candidate.aclose()
    assert server.statuses == [429, 200] and reply.text
    candidate = OpenAIChatCandidate("m", base_url="http://127.0.0.1:9/v1", api_key="x", attempts=1)
    with pytest.raises(RetryableError, match="cannot connect: ConnectionRefusedError"):
        await candidate.respond([Message(role="user", text="hi")], "", GenerationConfig())
    await candidate.aclose()


@pytest.mark.filterwarnings("error::ResourceWarning", "error::pytest.PytestUnraisableExceptionWarning")
async def test_a_request_cancelled_before_the_reply_closes_its_connection():
    """A barge-in cancels the request while the model has not answered yet: the connection is
    closed (the server sees it end), not kept for the next request, and not left for the
    garbage collector to find unclosed (a ResourceWarning, an error here)."""
    asked, ended = asyncio.Event(), asyncio.Event()

    async def never_answer(reader, writer):
        await reader.readuntil(b"\r\n\r\n")  # the request's head: the client is waiting for a reply now
        asked.set()
        await reader.read()  # until the client closes
        ended.set()
        writer.close()

    server = await asyncio.start_server(never_answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    candidate = OpenAIChatCandidate("m", base_url=f"http://127.0.0.1:{port}/v1", api_key="x", attempts=1)
    request = asyncio.create_task(
        candidate.respond([Message(role="user", text="hi")], "", GenerationConfig(), on_delta=lambda piece: None)
    )
    await asyncio.wait_for(asked.wait(), 5)
    request.cancel()
    with pytest.raises(asyncio.CancelledError):
        await request
    await asyncio.wait_for(ended.wait(), 5)
    await candidate.aclose()
    server.close()
    await server.wait_closed()
