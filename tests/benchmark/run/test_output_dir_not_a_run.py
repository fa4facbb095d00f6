"""Issue 57 rows 7 and 10: `bench --output-dir` at a folder that is not empty and holds no run (its own
findings.md and summary.json, or someone else's manifest.json) is refused with one line and nothing
written; a run whose manifest.json is a sparse giant is refused without reading it."""

from __future__ import annotations

import resource

import pytest

from benchmark import cli
from benchmark.run.errors import RunDirError
from benchmark.run.run_dir import open_run_dir
from tests.fake_openai import FakeOpenAI

MANIFEST = {"benchmark_version": "v1", "timestamp_utc": "2026-11-29T00:00:00Z"}


def snapshot(folder) -> dict:
    return {p.name: (p.read_bytes() if p.is_file() else None) for p in folder.iterdir()}


def folder_of_someone(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "findings.md").write_text("# my own findings\n", encoding="utf-8")
    (folder / "summary.json").write_text('{"mine": true}\n', encoding="utf-8")
    return folder


def test_a_folder_with_other_files_and_no_manifest_is_refused_writing_nothing(tmp_path):
    folder = folder_of_someone(tmp_path)
    before = snapshot(folder)
    with pytest.raises(RunDirError, match="is not empty and holds no wearsim run .*no manifest.json"):
        open_run_dir(folder, dict(MANIFEST))
    assert snapshot(folder) == before  # not even the lock file


def test_a_folder_whose_manifest_is_not_ours_is_refused(tmp_path):
    folder = folder_of_someone(tmp_path)
    (folder / "manifest.json").write_text('{"name": "my-app", "version": "1.0"}', encoding="utf-8")
    before = snapshot(folder)
    with pytest.raises(RunDirError, match="its manifest.json is not a wearsim run's"):
        open_run_dir(folder, dict(MANIFEST))
    assert snapshot(folder) == before


def test_an_empty_folder_or_a_new_one_still_takes_a_run(tmp_path):
    for folder in (tmp_path / "empty", tmp_path / "new"):
        if folder.name == "empty":
            folder.mkdir()
        open_run_dir(folder, dict(MANIFEST)).close()


def test_a_sparse_giant_manifest_is_refused_by_its_size_without_reading_it(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    with (folder / "manifest.json").open("wb") as handle:
        handle.truncate(512 << 20)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(RunDirError, match="manifest.json: 512.0 MB, larger than a manifest can be"):
        open_run_dir(folder, dict(MANIFEST))
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 64 * 1024  # KB: nothing read whole


def test_bench_at_someones_folder_exits_2_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "")
    folder = folder_of_someone(tmp_path)
    before = snapshot(folder)
    with FakeOpenAI(reply="The screwdriver.") as server:
        code = cli.main(
            ["bench", "--model", "openai:fake", "--base-url", server.base_url, "--judge-family", "lexical"]
            + ["--ids", "sc-01", "--output-dir", str(folder)]
        )
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "holds no wearsim run" in err, err
    assert snapshot(folder) == before
