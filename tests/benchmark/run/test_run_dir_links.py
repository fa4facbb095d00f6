"""A run dir from someone else: outputs that are links to files outside it are
refused, never written through or read into a page, and text from the run
cannot put its own lines into findings.md."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from benchmark.cli import main
from benchmark.report import write_report
from core.safe_files import UnsafePathError, make_dirs, write_atomic
from tests.benchmark.test_proxy_report import runs  # noqa: F401  (fixture: two small runs)
from tests.paths import FIXTURES

FIXTURE = FIXTURES / "transcripts" / "schema1_stream"
PRECIOUS = "export PATH=$HOME/bin:$PATH  # the user's own file\n"


@pytest.fixture
def run_dir(tmp_path) -> Path:
    path = tmp_path / "downloaded-run"
    shutil.copytree(FIXTURE, path)
    return path


@pytest.fixture
def victim(tmp_path) -> Path:
    """A file of the user's, outside the run dir (think ~/.bashrc)."""
    path = tmp_path / "home" / ".bashrc"
    path.parent.mkdir()
    path.write_text(PRECIOUS)
    return path


@pytest.mark.parametrize("output", ["findings.md", "summary.json", "plots/balanced_accuracy.png", "plots"])
def test_report_refuses_a_run_dir_whose_output_links_out_and_leaves_the_target_alone(run_dir, victim, output, capsys):
    link = run_dir / output
    link.parent.mkdir(exist_ok=True)
    os.symlink(victim.parent if output == "plots" else victim, link)
    assert main(["report", str(run_dir)]) == 1
    err = capsys.readouterr().err
    assert "symbolic link" in err and str(link) in err and len(err.strip().splitlines()) == 1
    assert victim.read_text() == PRECIOUS and sorted(p.name for p in victim.parent.iterdir()) == [".bashrc"]


def test_view_never_inlines_a_linked_file_from_outside_the_run_dir(run_dir, tmp_path, capsys):
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-TOKEN-42")
    write_report(run_dir)
    (run_dir / "findings.md").unlink()
    os.symlink(secret, run_dir / "findings.md")
    assert main(["view", str(run_dir)]) == 1
    assert "symbolic link" in capsys.readouterr().err
    page = run_dir / "index.html"
    assert not page.exists() or "SECRET-TOKEN-42" not in page.read_text()


def test_view_refuses_an_index_html_that_is_a_link(run_dir, victim):
    write_report(run_dir)
    os.symlink(victim, run_dir / "index.html")
    assert main(["view", str(run_dir)]) == 1
    assert victim.read_text() == PRECIOUS


def test_a_newline_in_a_cue_type_cannot_start_a_line_of_its_own_in_findings(run_dir):
    path = run_dir / "transcripts.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records[0]["cue_type"] = "object_in_hand\n# Injected heading\r\n- [click](http://evil.example)"
    records[0]["condition"] = "baseline\n## another"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    write_report(run_dir)
    lines = (run_dir / "findings.md").read_text().splitlines()
    assert not any(line.startswith(("# Injected", "- [click]", "## another")) for line in lines)
    assert any("object_in_hand # Injected heading - [click]" in line for line in lines)  # shown, on its line


def test_a_bench_run_dir_with_a_linked_lock_or_transcript_is_refused_untouched(tmp_path, victim):
    from benchmark.run.errors import RunDirError
    from benchmark.run.outputs import LOCK_NAME
    from benchmark.run.run_dir import open_run_dir

    for name in (LOCK_NAME, "transcripts.jsonl", "logs"):
        run = tmp_path / f"run-{name.strip('.')}"
        run.mkdir()
        os.symlink(victim.parent if name == "logs" else victim, run / name)
        with pytest.raises(RunDirError, match="symbolic link"):
            open_run_dir(run, {"runner": "test"})
        assert victim.read_text() == PRECIOUS  # the old lock opened it and cut it to nothing


def test_rescore_and_proxy_report_refuse_linked_outputs(tmp_path, victim, runs, capsys):  # noqa: F811
    out = tmp_path / "rescored"
    out.mkdir()
    os.symlink(victim, out / "manifest.json")
    fixtures = FIXTURES / "transcripts"
    assert (
        main(
            [
                "rescore",
                str(fixtures / "rescore_run"),
                "--judge-family",
                "lexical",
                "--scenarios",
                str(fixtures / "bank"),
                "--output-dir",
                str(out),
            ]
        )
        != 0
    )
    assert victim.read_text() == PRECIOUS
    report = tmp_path / "proxy"
    report.mkdir()
    os.symlink(victim, report / "proxy_report.md")
    assert main(["proxy-report", str(runs[0]), str(runs[1]), "--output-dir", str(report)]) == 2
    assert "symbolic link" in capsys.readouterr().err
    assert victim.read_text() == PRECIOUS


def test_write_atomic_renames_a_temp_file_and_refuses_links_and_escaping_folders(tmp_path, victim):
    root = tmp_path / "run"
    root.mkdir()
    target = write_atomic(root / "summary.json", "{}\n", root)
    assert target.read_text() == "{}\n" and [p.name for p in root.iterdir()] == ["summary.json"]
    os.symlink(victim, root / "findings.md")
    with pytest.raises(UnsafePathError, match="symbolic link"):
        write_atomic(root / "findings.md", "x", root)
    os.symlink(victim.parent, root / "plots")
    with pytest.raises(UnsafePathError, match="leads out of"):
        write_atomic(root / "plots" / "a.png", b"png", root)
    with pytest.raises(UnsafePathError, match="leads out of"):
        make_dirs(root / "plots" / "sub", root)
    inner = make_dirs(root / "inner", root)
    os.symlink(inner, root / "alias")  # a link that stays inside the dir is fine
    write_atomic(root / "alias" / "x.txt", "ok", root)
    assert (inner / "x.txt").read_text() == "ok"
    assert victim.read_text() == PRECIOUS and sorted(p.name for p in victim.parent.iterdir()) == [".bashrc"]
