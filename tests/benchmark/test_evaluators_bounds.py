"""Validators on hostile input: bounded time and output, clear errors."""

from __future__ import annotations

import time

import pytest

from benchmark.evaluators.runner import run_validator


@pytest.mark.slow
def test_ocr_is_bounded_and_refuses_what_it_cannot_score():
    long = run_validator(
        "ocr", {"output": "lorem ipsum dolor sit amet " * 140, "expected_output": "lorem ipsum " * 300}
    )
    assert long["status"] == "processed" and 0 < long["score"] < 1  # scored, not timed out
    huge = run_validator("ocr", {"output": "x " * 4000, "expected_output": "y"})
    assert huge["status"] == "error" and "at most 4,000 characters" in huge["details"]["reason"]
    empty = run_validator("ocr", {"output": "", "expected_output": ""})
    assert empty["status"] == "error" and not empty["passed"]  # nothing to compare is not a pass


def test_count_reads_irregular_plurals():
    for output, expected in (
        ("I see two knives on the board", "2 knife"),
        ("three shelves", "3 shelves"),
        ("Two children and one person", "2 child"),
    ):
        result = run_validator("count", {"output": output, "expected_output": expected})
        assert result["passed"], (output, result)
    assert not run_validator("count", {"output": "three knives", "expected_output": "2 knives"})["passed"]


def test_deeply_nested_json_is_bad_input_in_every_validator():
    import json
    import subprocess
    import sys

    from benchmark.evaluators import VALIDATORS, VALIDATORS_DIR

    nested_input = '{"output": ' + "[" * 100_000 + "]" * 100_000 + ', "expected_output": "1"}'
    for name in ("count", "ocr", "json", "chart"):
        done = subprocess.run(
            [sys.executable, str(VALIDATORS_DIR / VALIDATORS[name])],
            input=nested_input,
            capture_output=True,
            text=True,
            timeout=60,
        )
        result = json.loads(done.stdout)
        assert result["status"] == "error" and result["details"]["reason"].startswith("bad input"), name
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    result = run_validator("json", {"output": deep, "expected_output": "1"})
    assert result["status"] == "error" and "cannot be sent as JSON" in result["details"]["reason"]


@pytest.mark.clock
def test_a_runaway_validator_is_cut_off(tmp_path):
    script = tmp_path / "runaway.py"
    script.write_text("import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n")
    started = time.monotonic()
    result = run_validator(str(script), {}, timeout=40, uv=False)
    assert result["status"] == "error" and "printed more than 1,000,000 bytes" in result["details"]["reason"]
    assert time.monotonic() - started < 20  # cut off at the output cap, not left to run until the timeout
    sleeper = tmp_path / "sleeper.py"
    sleeper.write_text(
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print(child.pid, flush=True)\ntime.sleep(60)\n"
    )
    result = run_validator(str(sleeper), {}, timeout=2, uv=False)
    assert result["details"]["reason"] == "timeout"
    assert time.monotonic() - started < 60  # neither waited for its child
