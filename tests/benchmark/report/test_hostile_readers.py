"""Run-dir readers refuse giants (issue 49, rows 1, 6, 7 and 8): sparse files far over what a run
writes, a record line of millions of tiny values, a line nested past the parser's depth, an
integer of thousands of digits. Each is refused by name (file, and line where there are lines),
before it is read into memory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmark.report import read_manifest, write_report
from benchmark.report.viewer import write_viewer
from benchmark.scoring.summary_view import RunSummary
from benchmark.scoring.trials import MAX_LINE_VALUES, scan_transcripts
from tests.paths import FIXTURES, ROOT

FIXTURE = FIXTURES / "transcripts" / "schema1_stream"


@pytest.fixture
def run_dir(tmp_path) -> Path:
    path = tmp_path / "run"
    shutil.copytree(FIXTURE, path)
    return path


def sparse(path: Path, size: int, head: bytes = b"") -> Path:
    """A file of `size` bytes that takes almost no disk: `head`, then a hole."""
    with path.open("wb") as handle:
        handle.write(head)
        handle.truncate(size)
    return path


def test_the_viewer_inlines_no_giant_plot_or_findings_and_names_each(run_dir):
    summary = write_report(run_dir)
    sparse(run_dir / "plots" / "zz.png", 300 << 20, b"\x89PNG\r\n\x1a\n")
    sparse(run_dir / "findings.md", 200 << 20, b"# Findings\n")
    (run_dir / "plots" / "fake.png").write_bytes(b"GIF89a not a png at all")
    page = write_viewer(run_dir, summary=RunSummary.from_json(summary))
    assert page.stat().st_size < 20 << 20
    text = page.read_text(encoding="utf-8")
    assert "zz.png: 300.0 MB, larger than a plot can be (8.0 MB), and sparse (mostly holes)" in text
    assert "fake.png: not a PNG (its first bytes are not a PNG header)" in text
    assert "findings.md: 200.0 MB, larger than a findings.md can be (4.0 MB)" in text
    assert text.count('src="data:image/png;base64,') == 3  # the run's own three plots, still shown


def test_a_giant_manifest_is_refused_by_name_before_it_is_read(run_dir):
    sparse(run_dir / "manifest.json", 512 << 20, b"{")
    with pytest.raises(ValueError, match=r"manifest.json: 512.0 MB, larger than a manifest can be"):
        read_manifest(run_dir)
    done = subprocess.run(
        [sys.executable, "-m", "benchmark", "report", str(run_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode != 0 and "manifest.json: 512.0 MB, larger than a manifest can be" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_linked_manifest_is_not_read(run_dir, tmp_path):
    secret = tmp_path / "elsewhere.json"
    secret.write_text(json.dumps({"secret": "not yours"}))
    (run_dir / "manifest.json").unlink()
    (run_dir / "manifest.json").symlink_to(secret)
    with pytest.raises(ValueError, match="manifest.json: not a regular file inside the folder"):
        read_manifest(run_dir)


def _transcripts_with(run_dir: Path, *bad: bytes) -> tuple[Path, list[str]]:
    """The run's transcripts with hostile lines put between its records; their line numbers."""
    path = run_dir / "transcripts.jsonl"
    lines = path.read_bytes().splitlines()
    body = [lines[0], *bad, *lines[1:]]
    path.write_bytes(b"\n".join(body) + b"\n")
    return path, [f"line {2 + i}" for i in range(len(bad))]


def test_a_line_of_millions_of_tiny_values_is_refused_undecoded(run_dir):
    giant = b"[" + b"[]," * (5 << 20) + b"[]]"
    assert len(giant) < 16 * 2**20  # under the line cap: only the count of values refuses it
    path, [where] = _transcripts_with(run_dir, giant)
    scanned = scan_transcripts(path)
    [problem] = scanned.problems
    assert problem.startswith(f"{path}: {where}: about ") and f"over the {MAX_LINE_VALUES:,}" in problem
    assert len(scanned.records) == 5


def test_a_line_nested_past_the_parser_and_a_huge_integer_are_named_by_file_and_line(run_dir):
    deep = b"[" * 100_000 + b"]" * 100_000
    digits = b'{"trial": ' + b"7" * 5000 + b"}"
    path, (first, second) = _transcripts_with(run_dir, deep, digits)
    scanned = scan_transcripts(path)
    assert [p.split(": ", 2)[:2] for p in scanned.problems] == [[str(path), first], [str(path), second]]
    assert "nested deeper than the parser reads" in scanned.problems[0]
    assert "digits" in scanned.problems[1]
    assert len(scanned.records) == 5 and scanned.torn_tail is None


def test_a_deep_last_line_is_a_torn_tail_like_any_line_that_does_not_parse(run_dir):
    path = run_dir / "transcripts.jsonl"
    with path.open("ab") as handle:
        handle.write(b"[" * 100_000)
    scanned = scan_transcripts(path)
    assert scanned.problems == () and scanned.torn_tail is not None and len(scanned.records) == 5


def test_the_cli_names_the_line_in_one_line_without_a_traceback(run_dir):
    _transcripts_with(run_dir, b"[" * 100_000 + b"]" * 100_000)
    done = subprocess.run(
        [sys.executable, "-m", "benchmark", "report", str(run_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ},
    )
    assert done.returncode != 0 and "transcripts.jsonl: line 2: JSON nested deeper" in done.stderr
    assert "Traceback" not in done.stderr
