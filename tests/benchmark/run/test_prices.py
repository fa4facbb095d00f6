"""The price table and the pricing rule: the shipped table, `--prices` files
and their errors (file, entry and field named; exit 2, nothing written), and
what a reply costs when the provider split its tokens or did not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmark.cost.prices import (
    PRICE_KEYS,
    SHIPPED,
    PriceFileError,
    load_price_file,
    price_table,
    reply_cost,
    table_from_manifest,
)
from core.candidate import Usage
from tests.paths import ROOT

REALTIME = {
    "text_input": 4.0,
    "text_cached_input": 0.4,
    "text_output": 16.0,
    "audio_input": 32.0,
    "audio_cached_input": 0.4,
    "audio_output": 64.0,
    "image_input": 5.0,
    "image_cached_input": 0.5,
}


def entry(model: str, rates: dict, date="2026-11-25", source="a test") -> str:
    lines = [f'["{model}"]', *(f"{k} = {v}" for k, v in rates.items()), f'date = "{date}"', f'source = "{source}"']
    return "\n".join(lines) + "\n"


def test_the_shipped_table_reads_and_prices_the_realtime_model_as_published():
    table = price_table()
    price = table.get("openai-realtime:gpt-realtime-1.5")
    assert price.rates == REALTIME and price.date and price.source
    for model in ("local", "local:/models/other.gguf"):  # any local model: no bill
        assert table.get(model).free and reply_cost(Usage(), table.get(model), model).usd == 0
    assert table.get("gpt-4o-mini") is table.get("openai:gpt-4o-mini")  # a bare id finds its provider form
    assert table.get("openai:some-model-nobody-priced") is None
    assert set(load_price_file(SHIPPED)) == set(table.entries)


def test_a_price_file_adds_entries_and_replaces_whole_ones(tmp_path):
    path = tmp_path / "prices.toml"
    path.write_text(
        entry("openai-realtime:gpt-realtime-1.5", {"text_input": 1.0})
        + entry("openai:mine", {"text_input": 0.5, "text_output": 1.5})
        + '["gemini:g"]\ntext_input = 2\ndate = 2026-01-31\nsource = "s"\n'
    )
    table = price_table(path)
    assert table.get("openai-realtime:gpt-realtime-1.5").rates == {"text_input": 1.0}  # replaced whole
    assert table.get("openai:mine").rates == {"text_input": 0.5, "text_output": 1.5}
    assert table.get("gemini:g").date == "2026-01-31"  # TOML's own date type is read as its text
    assert table.get("local").free and str(path) in table.origin
    recorded = table.for_manifest(["openai:mine", "openai:unpriced", None])
    assert recorded == {
        "openai:mine": {"text_input": 0.5, "text_output": 1.5, "date": "2026-11-25", "source": "a test"},
        "openai:unpriced": None,
    }
    again, problems = table_from_manifest({"prices": recorded})
    assert problems == [] and again.get("openai:mine").rates == table.get("openai:mine").rates
    assert again.get("openai:unpriced") is None and again.get("local") is None


PER_MILLION = 1_000_000


def test_a_reply_is_priced_by_modality_with_cached_input_apart():
    price = price_table().get("openai-realtime:gpt-realtime-1.5")
    usage = Usage(
        input_tokens=2530,
        output_tokens=180,
        input_text_tokens=430,
        input_audio_tokens=1930,
        input_image_tokens=170,
        cached_input_tokens=1536,
        cached_text_tokens=384,
        cached_audio_tokens=1152,
        cached_image_tokens=0,
        output_text_tokens=40,
        output_audio_tokens=140,
    )
    expected = (
        (430 - 384) * 4.0 + 384 * 0.4 + (1930 - 1152) * 32.0 + 1152 * 0.4 + 170 * 5.0 + 40 * 16.0 + 140 * 64.0
    ) / PER_MILLION
    cost = reply_cost(usage, price, "m")
    assert cost.usd == pytest.approx(expected, rel=1e-12) and cost.why == ()


def test_unknown_is_never_zero():
    price = price_table().get("openai-realtime:gpt-realtime-1.5")
    # no price for the model at all
    assert reply_cost(
        Usage(
            input_tokens=10,
            output_tokens=1,
            input_text_tokens=10,
            input_audio_tokens=0,
            input_image_tokens=0,
            cached_input_tokens=0,
            cached_text_tokens=0,
            cached_audio_tokens=0,
            cached_image_tokens=0,
            output_text_tokens=1,
            output_audio_tokens=0,
        ),
        None,
        "openai:x",
    ).why == ("no price for openai:x",)
    # a provider that did not split its input: text, audio and image input cost differently here
    unsplit = reply_cost(
        Usage(input_tokens=100, output_tokens=10, output_text_tokens=10, output_audio_tokens=0), price, "m"
    )
    assert unsplit.usd is None and "unknown kind" in unsplit.why[0] and "--prices" in unsplit.why[0]
    # usage not reported at all
    assert reply_cost(Usage(), price, "m").usd is None
    # a kind of token the entry has no price for
    text_only = price_table().get("openai:gpt-4o-mini")
    spoken = reply_cost(
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
        text_only,
        "openai:gpt-4o-mini",
    )
    assert spoken.usd is None and spoken.why[0].startswith("openai:gpt-4o-mini: audio output tokens have no price")
    assert "audio_output" in spoken.why[0]  # the key to add


def test_an_unknown_split_is_priced_when_every_price_it_could_fall_under_is_the_same(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(entry("openai:flat", {"text_input": 2.0, "text_cached_input": 2.0, "text_output": 6.0}))
    flat = price_table(path).get("openai:flat")
    # a text-only endpoint that does not say how much was cached: cached and fresh text cost alike here
    usage = Usage(
        input_tokens=1000,
        output_tokens=100,
        input_text_tokens=1000,
        input_audio_tokens=0,
        input_image_tokens=0,
        cached_input_tokens=None,
        cached_text_tokens=None,
        cached_audio_tokens=0,
        cached_image_tokens=0,
        output_text_tokens=100,
        output_audio_tokens=0,
    )
    assert reply_cost(usage, flat, "openai:flat").usd == pytest.approx((1000 * 2.0 + 100 * 6.0) / PER_MILLION)
    # with a discount for cached text, the same usage is priced as not cached: the most it can have cost
    discounted = price_table().get("openai:gpt-4o-mini")
    bound = reply_cost(usage, discounted, "openai:gpt-4o-mini")
    assert bound.usd == pytest.approx((1000 * 0.15 + 100 * 0.6) / PER_MILLION) and bound.notes
    # chat models bill an image's tokens at the text rate: an unsplit text-and-image prompt is still priced
    with_image = Usage(
        input_tokens=1000,
        output_tokens=100,
        input_text_tokens=None,
        input_audio_tokens=0,
        input_image_tokens=None,
        cached_input_tokens=0,
        cached_text_tokens=None,
        cached_audio_tokens=0,
        cached_image_tokens=None,
        output_text_tokens=100,
        output_audio_tokens=0,
    )
    assert reply_cost(with_image, discounted, "openai:gpt-4o-mini").usd == pytest.approx(
        (1000 * 0.15 + 100 * 0.6) / PER_MILLION
    )


def documented_example() -> str:
    """The `--prices` example in docs/usage.md, as written there."""
    lines = (ROOT / "docs" / "usage.md").read_text().splitlines()
    start = lines.index('    ["openai:my-model"]')
    block = []
    for line in lines[start:]:
        if not line.startswith("    "):
            break
        block.append(line[4:])
    return "\n".join(block) + "\n"


def test_the_documented_example_prices_a_provider_that_does_not_say_what_was_cached(tmp_path):
    """The docs' own entry prices cached text apart; an endpoint that reports no cached split (llama.cpp,
    vLLM, most OpenAI-compatible servers) is priced as not cached, the most it can have cost, and says so."""
    from candidates.usage import openai_chat_usage

    path = tmp_path / "prices.toml"
    path.write_text(documented_example())
    price = price_table(path).get("openai:my-model")
    assert price.rates["text_cached_input"] < price.rates["text_input"]
    plain = openai_chat_usage({"prompt_tokens": 1000, "completion_tokens": 100}, images_sent=False)
    cost = reply_cost(plain, price, "openai:my-model")
    assert cost.usd == pytest.approx((1000 * 0.5 + 100 * 1.5) / PER_MILLION)
    assert cost.why == () and "not cached" in cost.notes[0] and "upper bound" in cost.notes[0]
    # a provider that does say what was cached is priced exactly, with no note
    split = openai_chat_usage(
        {"prompt_tokens": 1000, "completion_tokens": 100, "prompt_tokens_details": {"cached_tokens": 400}},
        images_sent=False,
    )
    exact = reply_cost(split, price, "openai:my-model")
    assert exact.usd == pytest.approx((600 * 0.5 + 400 * 0.25 + 100 * 1.5) / PER_MILLION) and exact.notes == ()
    # a cached price above the input price makes "as not cached" no bound: unknown, naming what to change
    path.write_text(entry("openai:odd", {"text_input": 0.5, "text_cached_input": 0.75, "text_output": 1.5}))
    odd = reply_cost(plain, price_table(path).get("openai:odd"), "openai:odd")
    assert odd.usd is None and "--prices" in odd.why[0]


def test_a_budget_stopped_by_an_unknown_cost_says_what_to_change_not_a_larger_budget():
    from benchmark.cost.budget import Budget

    budget = Budget(10.0, price_table())
    budget.add("openai:gpt-4o-mini", Usage())  # the provider reported no usage at all
    assert budget.passed
    budget.skip()
    line = budget.describe()
    assert "usage was not reported" in line and "without --budget" in line
    assert "a larger --budget" in line and "does not help" in line


# ---------------------------------------------------------------- bad price files through `wearsim bench`


def bench(prices: Path, run_dir: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmark",
            "bench",
            "--model",
            "openai:fake",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--judge-family",
            "lexical",
            "--limit",
            "1",
            "--prices",
            str(prices),
            "--output-dir",
            str(run_dir),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
    )


MALFORMED = {
    "bad TOML": (
        '["openai:fake"]\ntext_input = 4.0.1\ndate = "d"\nsource = "s"\n',
        "openai:fake",
        "text_input",
        "not valid TOML",
    ),
    "a price that is not a number": (
        entry("openai:fake", {"text_output": '"cheap"'}),
        "openai:fake",
        "text_output",
        "must be a number",
    ),
    "an unknown key": (
        entry("openai:fake", {"text_input": 1.0}) + entry("openai:other", {"video_input": 2.0}),
        "openai:other",
        "video_input",
        "unknown key",
    ),
    "a negative price": (
        entry("openai:fake", {"audio_cached_input": -0.4}),
        "openai:fake",
        "audio_cached_input",
        "0 or more",
    ),
    "an unquoted model id": ("[openai:fake]\ntext_input = 1.0\n", "openai:fake", "(unknown)", "quote the table name"),
    "no source": (
        '["openai:fake"]\ntext_input = 1.0\ndate = "2026-11-25"\n',
        "openai:fake",
        "source",
        "needs its source",
    ),
}


@pytest.mark.parametrize("kind", list(MALFORMED))
def test_a_malformed_price_file_names_file_entry_and_field_and_writes_nothing(kind, tmp_path):
    text, entry_name, field, problem = MALFORMED[kind]
    path = tmp_path / "my prices.toml"
    path.write_text(text)
    with pytest.raises(PriceFileError) as info:
        load_price_file(path)
    run_dir = tmp_path / "run"
    done = bench(path, run_dir)
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr
    for needle in (str(path), f'entry ["{entry_name}"]', f"field '{field}'", problem):
        assert needle in lines[0] and needle in str(info.value), (needle, lines[0])
    assert not run_dir.exists()  # exit 2 before anything is written


def test_a_budget_with_a_model_that_has_no_price_is_refused_at_start(tmp_path):
    path = tmp_path / "prices.toml"
    path.write_text(entry("openai:other", {"text_input": 1.0}))
    done = bench(path, tmp_path / "run", "--budget", "1")
    assert done.returncode == 2
    assert "--budget needs a price" in done.stderr and "openai:fake (--model)" in done.stderr
    assert not (tmp_path / "run").exists()
    done = bench(path, tmp_path / "run", "--budget", "-1")
    assert done.returncode == 2 and "--budget" in done.stderr and not (tmp_path / "run").exists()


def test_every_price_key_is_documented():
    usage = (ROOT / "docs" / "usage.md").read_text()  # the README's cost task points there
    schema = (ROOT / "docs" / "schema.md").read_text()
    for key in PRICE_KEYS:
        assert f"`{key}`" in usage, key
        assert key in schema, key
