"""Issue 57 row 11: transcripts.jsonl as a FIFO or a link to /dev/zero: report stops at once with a
line naming the file (no hang, no spin), and merge refuses the shard instead of counting it empty."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from benchmark.merge.runs import MergeError, read_shard
from tests.paths import ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "transcripts" / "schema1_direct"


def run_with(tmp_path, kind: str):
    run = tmp_path / kind
    run.mkdir()
    shutil.copy(FIXTURE / "manifest.json", run / "manifest.json")
    if kind == "fifo":
        os.mkfifo(run / "transcripts.jsonl")
    else:
        os.symlink("/dev/zero", run / "transcripts.jsonl")
    return run


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_report_on_a_transcripts_file_that_is_no_file_stops_at_once_naming_it(tmp_path, kind):
    run = run_with(tmp_path, kind)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "benchmark", "report", str(run)], capture_output=True, text=True, timeout=60
    )
    assert time.monotonic() - started < 30
    assert done.returncode != 0
    assert "transcripts.jsonl" in done.stderr and "not a regular file" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_merge_refuses_a_shard_whose_transcripts_are_no_file(tmp_path, kind):
    run = run_with(tmp_path, kind)
    with pytest.raises(MergeError, match="transcripts.jsonl: not a regular file"):
        read_shard(run)
