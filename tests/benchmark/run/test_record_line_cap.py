"""A record line far longer than any record is refused before it is decoded (issue 34, item 15):
`wearsim report` read the whole file, split it, decoded it and parsed it, about four times the
line's size in memory, before the field cap (records.TEXT_LIMIT) refused it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmark.scoring import trials as trials_module
from tests.paths import ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "transcripts" / "ours_small"
MB = 2**20

# runs `wearsim report DIR` and prints its exit status, first stderr line and peak RSS in KB
MEASURED = (
    "import json, resource, subprocess, sys; done = subprocess.run([sys.executable, '-m', 'benchmark', "
    "'report', sys.argv[1]], capture_output=True, text=True); print(json.dumps([done.returncode, "
    "(done.stderr.strip().splitlines() or [''])[0], resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))"
)


def report_peak(run: Path) -> tuple[int, str, float]:
    done = subprocess.run(
        [sys.executable, "-c", MEASURED, str(run)], cwd=ROOT, capture_output=True, text=True, timeout=300, check=True
    )
    status, said, kb = json.loads(done.stdout)
    return status, said, kb / 1024


def run_dir(folder: Path, extra_line: str | None) -> Path:
    folder.mkdir()
    (folder / "manifest.json").write_text((FIXTURE / "manifest.json").read_text())
    lines = (FIXTURE / "transcripts.jsonl").read_text().splitlines()
    if extra_line is not None:
        lines.insert(1, extra_line)
    (folder / "transcripts.jsonl").write_text("\n".join(lines) + "\n")
    return folder


@pytest.mark.slow
def test_report_refuses_a_huge_record_line_without_holding_it_in_memory(tmp_path):
    ordinary = json.loads((FIXTURE / "transcripts.jsonl").read_text().splitlines()[0])
    huge = json.dumps(dict(ordinary, trial=99, turn_2_response="x" * (96 * MB)))
    _, _, normal_mb = report_peak(run_dir(tmp_path / "normal", None))
    status, said, huge_mb = report_peak(run_dir(tmp_path / "huge", huge))
    assert huge_mb < normal_mb + 40, (huge_mb, normal_mb)  # it was normal + about 4 x 96 MB
    assert status != 0 and "line 2" in said and "not read" in said, said
    assert f"{len(huge):,} bytes" in said


def test_a_line_over_the_cap_is_a_problem_and_the_lines_around_it_are_read(tmp_path, monkeypatch):
    monkeypatch.setattr(trials_module, "MAX_LINE_BYTES", 4096)
    lines = (FIXTURE / "transcripts.jsonl").read_text().splitlines()
    path = tmp_path / "transcripts.jsonl"
    path.write_text("\n".join([lines[0], "[" + "1," * 5000 + "1]", *lines[1:3]]) + "\n")
    scanned = trials_module.scan_transcripts(path)
    assert len(scanned.records) == 3 and scanned.torn_tail is None
    [problem] = scanned.problems
    assert problem.startswith(f"{path}: line 2: ") and "over the 4,096" in problem
    # a torn last line is still a torn tail, at its offset, after a line over the cap
    path.write_text("\n".join([lines[0], "[" + "1," * 5000 + "1]", lines[1], lines[2][:40]]))
    scanned = trials_module.scan_transcripts(path)
    assert scanned.torn_tail is not None and scanned.torn_tail.line == 4
    assert scanned.torn_tail.offset == path.read_bytes().rindex(b"\n") + 1 and scanned.torn_tail.size == 40
