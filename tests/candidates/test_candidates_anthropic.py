"""The Claude candidate through the real `anthropic` SDK against a local
server speaking the Messages API's streamed events (tests/fake_anthropic.py):
the request it sends, the streamed reply, usage, a 429 retried after its
Retry-After, and a bench run with it as the candidate."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from candidates import GenerationConfig, Image, Message, open_candidate
from tests.fake_anthropic import FakeAnthropic

SECRET = "sk-ant-test-never-in-a-record"


def _ask(base_url, messages, on_delta=None):
    async def go():
        async with open_candidate("anthropic:claude-test", base_url=base_url) as candidate:
            return await candidate.respond(messages, "Be brief.", GenerationConfig(max_tokens=64), on_delta)

    return asyncio.run(go())


@pytest.mark.slow
def test_the_request_and_the_streamed_reply(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    pieces = []
    messages = [
        Message(
            role="user",
            text="[Camera: a drill]\nWhich one?",
            images=(Image(data=b"\xff\xd8jpeg", mime_type="image/jpeg"),),
        ),
        Message(role="assistant", text="The drill."),
        Message(role="user", text="And now?"),
    ]
    with FakeAnthropic(reply="The cordless drill in your hand now.") as server:
        reply = _ask(server.base_url, messages, pieces.append)
    assert server.problems == []
    [request] = server.requests
    headers = request["headers"]
    assert SECRET in (headers.get("x-api-key"), headers.get("Authorization", "").removeprefix("Bearer "))
    body = request["body"]
    assert (body["model"], body["system"], body["max_tokens"], body["temperature"]) == (
        "claude-test",
        "Be brief.",
        64,
        0.0,
    )
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    first = body["messages"][0]["content"]
    assert first[0] == {"type": "text", "text": "[Camera: a drill]\nWhich one?"}
    assert first[1]["type"] == "image" and first[1]["source"]["media_type"] == "image/jpeg"
    assert reply.text == "The cordless drill in your hand now." and "".join(pieces) == reply.text
    assert len(pieces) == 7 and reply.first_token_s is not None
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (21, 7)


@pytest.mark.slow
def test_a_rate_limit_is_retried_after_its_retry_after(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    with FakeAnthropic(fail_first=2, retry_after="0") as server:
        reply = _ask(server.base_url, [Message(role="user", text="Which one?")])
    assert len(server.requests) == 3 and reply.text == "The cordless drill in your hand now."


@pytest.mark.clock
def test_bench_with_claude_as_the_candidate(tmp_path):
    with FakeAnthropic() as server:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmark",
                "bench",
                "--model",
                "anthropic:claude-test",
                "--base-url",
                server.base_url,
                "--judge-family",
                "lexical",
                "--conditions",
                "baseline",
                "--limit",
                "2",
                "--output-dir",
                str(tmp_path / "run"),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "ANTHROPIC_API_KEY": SECRET},
        )
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (tmp_path / "run" / "transcripts.jsonl").read_text().splitlines()]
    assert [r["error"] for r in records] == [None, None]
    assert all(t["reply"]["text"] == "The cordless drill in your hand now." for r in records for t in r["turns"])
    assert SECRET not in (tmp_path / "run" / "transcripts.jsonl").read_text()
    assert SECRET not in (tmp_path / "run" / "manifest.json").read_text()
