"""Issue 57 rows 15, 8 and 9: every number `wearsim bench` takes is range-checked at the start, from a
flag or a `--config` key, with one line naming it (trials bounded, limit >= 0, speed > 0, temperature
finite and in range); a deeply nested TOML is one clear line, not a RecursionError; a config that is a
FIFO, a device, a sparse giant or a link to one is refused by its kind or size before a byte is read; NaN
never reaches manifest.json."""

from __future__ import annotations

import math
import os
import threading
import time

import pytest

from benchmark import cli
from benchmark.run.manifest import write_manifest

MAX_CONFIG_BYTES = 1 << 20  # run_config.MAX_CONFIG_BYTES


def one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    return err


def refused_config(capsys, config) -> str:
    started = time.monotonic()
    with pytest.raises(SystemExit) as stopped:
        cli.main(["bench", "--config", str(config)])
    assert stopped.value.code == 2
    assert time.monotonic() - started < 10
    err = one_line(capsys)
    assert err.startswith(f"error: --config {config}"), err
    return err


@pytest.mark.parametrize(
    "line, words",
    [
        ("trials = 1000000000", "trials = 1000000000: 1e+09 is out of range: trials per cell, from 1 to 1000"),
        ("limit = -1", "limit = -1: -1 is out of range: a count of scenarios, from 0"),
        ("temperature = nan", "temperature = NaN: nan is not a finite number"),
        ("temperature = inf", "temperature = Infinity: inf is not a finite number"),
        ("temperature = 7.5", "temperature = 7.5: 7.5 is out of range: a sampling temperature"),
        ("speed = 0", "speed = 0.0: 0 is out of range: a pacing factor (1.0 is real time), more than 0 to 1000"),
        ("speed = -2.0", "speed = -2.0: -2 is out of range"),
        ("max-error-rate = nan", "max-error-rate = NaN: nan is not a finite number"),
        ("concurrency = 100000", "concurrency = 100000: 100000 is out of range"),
    ],
)
def test_a_config_number_out_of_range_is_one_line_naming_the_key(tmp_path, capsys, line, words):
    config = tmp_path / "run.toml"
    config.write_text(line + "\n")
    assert words in refused_config(capsys, config)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "flags, words",
    [
        (["--trials", "1000000000"], "--trials: 1e+09 is out of range: trials per cell, from 1 to 1000"),
        (["--limit", "-1"], "--limit: -1 is out of range"),
        (["--temperature", "nan"], "--temperature: nan is not a finite number"),
        (["--budget", "inf"], "--budget: inf is not a finite number"),
        (["--via", "stream", "--speed", "0"], "--speed: 0 is out of range"),
    ],
)
def test_a_flag_out_of_range_is_one_line_naming_the_flag_and_writes_nothing(tmp_path, capsys, flags, words):
    out = tmp_path / "run"
    started = time.monotonic()
    code = cli.main(["bench", "--model", "openai:fake", "--judge-family", "lexical", *flags, "--output-dir", str(out)])
    assert code == 2 and time.monotonic() - started < 10
    assert words in one_line(capsys)
    assert not out.exists()


def test_a_deeply_nested_toml_is_one_clear_line(tmp_path, capsys):
    config = tmp_path / "deep.toml"
    config.write_text("ids = " + "[" * 50_000 + "]" * 50_000 + "\n")
    err = refused_config(capsys, config)
    assert "nested too deeply" in err and "RecursionError" not in err


def test_a_config_that_is_a_fifo_a_device_or_a_sparse_giant_is_refused_before_reading(tmp_path, capsys):
    fifo = tmp_path / "run.toml"
    os.mkfifo(fifo)
    done = threading.Event()
    unblock = threading.Timer(15, lambda: done.is_set() or open(fifo, "wb").close())  # never hang the suite
    unblock.daemon = True
    unblock.start()
    assert "is a FIFO, a device or a socket, not a regular file" in refused_config(capsys, fifo)
    done.set()
    zero = tmp_path / "zero.toml"
    os.symlink("/dev/zero", zero)
    assert "is a FIFO, a device or a socket" in refused_config(capsys, zero)
    giant = tmp_path / "giant.toml"
    with giant.open("wb") as handle:
        handle.truncate(1 << 30)
    assert "1,024.0 MB, larger than a config file can be (1.0 MB), and sparse" in refused_config(capsys, giant)
    comment = tmp_path / "comment.toml"
    comment.write_bytes(b"# " + b"x" * MAX_CONFIG_BYTES + b"\n")
    assert "larger than a config file can be" in refused_config(capsys, comment)


def test_nan_never_reaches_the_manifest(tmp_path):
    with pytest.raises(ValueError):
        write_manifest(tmp_path / "manifest.json", {"temperature": math.nan})
    assert not (tmp_path / "manifest.json").exists()
