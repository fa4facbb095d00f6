"""A long lexical rescore is judged in forked worker processes (`benchmark.rescore`, from
`PARALLEL_FROM` records on Linux): its output is the same, byte for byte, as judging the records one
by one in this process."""

from __future__ import annotations

import json
import shutil
import sys

import pytest

from benchmark import rescore as rescore_module
from tests.paths import FIXTURES

RUN = FIXTURES / "transcripts" / "rescore_run"
BANK = FIXTURES / "transcripts" / "bank"


def long_run(tmp_path, copies: int):
    """The fixture run with its records repeated under new trial numbers: `copies` x 4 records."""
    run = tmp_path / "long_run"
    shutil.copytree(RUN, run)
    records = [json.loads(line) for line in (RUN / "transcripts.jsonl").read_text().splitlines() if line]
    lines = []
    for copy in range(copies):
        for record in records:
            lines.append(json.dumps({**record, "trial": record["trial"] + 2 * copy}))
    (run / "transcripts.jsonl").write_text("\n".join(lines) + "\n")
    return run


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="worker processes are forked on Linux only")
def test_a_long_rescore_in_worker_processes_writes_what_one_process_writes(tmp_path, monkeypatch):
    run = long_run(tmp_path, copies=110)  # 440 records, past PARALLEL_FROM
    assert 440 >= rescore_module.PARALLEL_FROM
    used = []
    real = rescore_module._judged_in_workers
    monkeypatch.setattr(rescore_module, "_judged_in_workers", lambda *a, **k: used.append(a[-1]) or real(*a, **k))
    parallel = tmp_path / "parallel"
    rescore_module.rescore(run, judge_family="lexical", scenarios=BANK, output_dir=parallel, progress=lambda _: None)
    assert used and used[0] >= 1  # the worker path ran
    monkeypatch.setattr(rescore_module, "PARALLEL_FROM", 10**9)
    serial = tmp_path / "serial"
    rescore_module.rescore(run, judge_family="lexical", scenarios=BANK, output_dir=serial, progress=lambda _: None)
    assert (parallel / "transcripts.jsonl").read_bytes() == (serial / "transcripts.jsonl").read_bytes()
    assert (
        json.loads((parallel / "summary.json").read_text())["primary"]
        == json.loads((serial / "summary.json").read_text())["primary"]
    )
