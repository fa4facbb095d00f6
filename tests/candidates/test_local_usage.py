"""The embedded model's tokens on the stream path (issue 34, item 3).

llama-cpp-python's server streams a chat reply without its token counts (it
ignores `stream_options.include_usage`), so every stream turn of the `local`
model was recorded as 0 tokens in and out, and a price for `local` stopped
`--budget` after one cell. These run the real server with the bundled
SmolLM2; a reply whose usage nobody reported is recorded as unknown (null).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from candidates import GenerationConfig, Message
from candidates.openai_chat import OpenAIChatCandidate
from core.candidate import Reply, Usage
from core.records import TurnInput, TurnResult
from tests.paths import ROOT

MILLION = 1_000_000


def test_a_streamed_reply_of_the_real_llama_server_counts_the_tokens_its_plain_reply_counts(local_llama_url):
    """The same request at temperature 0, streamed and not: the same prompt and reply tokens."""
    messages = [Message(role="user", text="[Camera: a red mug on a desk]\nWhat is in front of me?")]
    config = GenerationConfig(max_tokens=24)

    async def talk():
        candidate = OpenAIChatCandidate("smollm2", base_url=local_llama_url, api_key="x")
        deltas: list[str] = []
        streamed = await candidate.respond(messages, "Be brief.", config, on_delta=deltas.append)
        plain = await candidate.respond(messages, "Be brief.", config)
        await candidate.aclose()
        return streamed, plain, deltas

    streamed, plain, deltas = asyncio.run(talk())
    assert streamed.text == plain.text and "".join(deltas) == streamed.text
    assert plain.usage.input_tokens > 0 and plain.usage.output_tokens > 0
    assert streamed.usage.reported
    assert (streamed.usage.input_tokens, streamed.usage.output_tokens) == (
        plain.usage.input_tokens,
        plain.usage.output_tokens,
    )


@pytest.mark.llama
def test_a_local_stream_run_records_each_turns_tokens_and_a_price_for_local_is_kept_to(tmp_path):
    """`wearsim bench --via stream --model local` with a price for `local` and a budget it stays under:
    every turn's tokens recorded, the run not stopped by an unknown cost, and its cost the tokens
    times the prices."""
    prices = tmp_path / "prices.toml"
    prices.write_text(
        '["local"]\ntext_input = 2.0\ntext_cached_input = 2.0\ntext_output = 8.0\n'
        'date = "2026-11-25"\nsource = "made up for a test"\n'
    )
    run = tmp_path / "run"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmark",
            "bench",
            "--via",
            "stream",
            "--model",
            "local",
            "--judge-family",
            "lexical",
            "--conditions",
            "baseline",
            "--limit",
            "2",
            "--concurrency",
            "1",
            "--prices",
            str(prices),
            "--budget",
            "1",
            "--output-dir",
            str(run),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = (run / "transcripts.jsonl").read_text().splitlines()
    assert len(lines) == 2
    spent = 0.0
    for line in lines:
        record = json.loads(line)
        assert record["via"] == "stream" and record["turns"]
        for turn in record["turns"]:
            usage = turn["reply"]["usage"]
            assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0, (record["scenario_id"], turn["turn"])
            spent += (usage["input_tokens"] * 2.0 + usage["output_tokens"] * 8.0) / MILLION
    budget = json.loads((run / "budget.json").read_text())
    assert not budget["stopped_on_budget"]
    cost = json.loads((run / "summary.json").read_text())["cost"]["run"]
    assert cost["candidate_usd"] is not None and abs(cost["candidate_usd"] - spent) < 1e-9


def test_a_reply_whose_usage_was_not_reported_is_recorded_as_unknown_not_zero():
    unreported = TurnResult(
        turn=1,
        input=TurnInput(
            turn=1, camera_block="a mug", speech="what is this", camera_source="authored", speech_source="authored"
        ),
        reply=Reply(text="A mug.", model="openai:x", usage=Usage()),
    )
    assert unreported.to_json()["reply"]["usage"] is None
    counted = TurnResult(
        turn=1,
        input=unreported.input,
        reply=Reply(text="A mug.", model="openai:x", usage=Usage(input_tokens=12, output_tokens=3)),
    )
    assert counted.to_json()["reply"]["usage"]["input_tokens"] == 12
    from benchmark.report.viewer import turn_facts

    facts = turn_facts(unreported)
    assert facts["tokens in/out"] == "unknown" and "0/0" not in " ".join(facts.values())
    read_back = TurnResult.from_json(json.loads(json.dumps(unreported.to_json())), "turn")
    assert not read_back.reply.usage.reported
    from benchmark.report.cost import tokens_text
    from benchmark.scoring.cost import _tokens

    summed = _tokens([Usage(input_tokens=12, output_tokens=3), Usage()])
    assert summed["input_tokens"] is None and summed["output_tokens"] is None
    assert tokens_text(summed).startswith("in ? (")
