"""`wearsim view` inlines a bounded page (issue 57 row 6): 40 sparse PNGs each just under the plot cap
made a 448 MB page and a 1.39 GB peak, since the cap was per plot only. Now one page inlines at most
`MAX_INLINE_IMAGES` images and `MAX_INLINE_BYTES` of them in all (plots first, then the scenario
frames), and names each one it left out and why. Caps lowered so the test is small."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchmark.report import write_report
from benchmark.report.viewer import write_viewer
from benchmark.scoring.summary_view import RunSummary
from tests.paths import FIXTURES

FIXTURE = FIXTURES / "transcripts" / "schema1_stream"
PNG_HEAD = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def run_dir(tmp_path) -> Path:
    path = tmp_path / "run"
    shutil.copytree(FIXTURE, path)
    return path


def _sparse_plots(run_dir: Path, count: int, size: int) -> None:
    for i in range(count):
        with (run_dir / "plots" / f"zz{i:02d}.png").open("wb") as handle:
            handle.write(PNG_HEAD)
            handle.truncate(size)


def test_many_plots_under_the_per_plot_cap_stop_at_the_pages_total_and_are_named(run_dir, monkeypatch):
    monkeypatch.setattr("benchmark.report.run_files.MAX_INLINE_BYTES", 4 << 20, raising=False)
    summary = write_report(run_dir)
    _sparse_plots(run_dir, 20, 1 << 20)  # 20 MB in all, each far under the 8 MB a plot may be
    page = write_viewer(run_dir, summary=RunSummary.from_json(summary), media_root=run_dir / "no-media")
    assert page.stat().st_size < 8 << 20  # 4 MB of images, base64, and the rest of the page
    text = page.read_text(encoding="utf-8")
    shown = text.count('src="data:image/png;base64,')
    assert 3 <= shown <= 6  # the run's own three plots first, then what fits of the rest
    left_out = [i for i in range(20) if f"zz{i:02d}.png: 1.0 MB, past what is left" in text]
    assert len(left_out) == 20 - (shown - 3)
    assert "of the 4 MB of images one page inlines in all" in text


def test_many_small_plots_stop_at_the_pages_count_and_are_named(run_dir, monkeypatch):
    monkeypatch.setattr("benchmark.report.run_files.MAX_INLINE_IMAGES", 10, raising=False)
    summary = write_report(run_dir)
    _sparse_plots(run_dir, 30, 4096)
    page = write_viewer(run_dir, summary=RunSummary.from_json(summary), media_root=run_dir / "no-media")
    text = page.read_text(encoding="utf-8")
    assert text.count('src="data:image/png;base64,') == 10
    assert text.count("past the 10 images one page inlines") == 23  # 3 of the run's own + 30, 10 shown
