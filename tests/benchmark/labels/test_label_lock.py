"""Issue 57 rows 1 and 18: label writes from several processes at once (two pages of one annotator, a
Turn 2 and a Turn 3 tab, `labels import`) lose no label that was answered saved; the hidden temp files a
killed save left behind are removed, only ours and never through a link."""

from __future__ import annotations

import os
from pathlib import Path

from benchmark.labels.run import AnnotatorDesk, open_label_run
from benchmark.labels.store import label_path, make_label, read_label_file, write_labels
from tests.label_races import import_share, race
from tests.label_runs import build_run

WRITERS = 4
EACH = 40  # 4 pages x 40 labels + an import of 40: 200 labels answered saved


def _save_each(run_dir: str, keys: list[str], known: dict[str, str], start, done) -> None:
    start.wait()
    saved = 0
    for key in keys:
        write_labels(Path(run_dir), "ana", [make_label(key, "current", "ana", known, "test")], known)
        saved += 1
    done.put(saved)


def test_pages_and_an_import_saving_one_annotators_labels_at_once_lose_none(tmp_path):
    run = open_label_run(build_run(tmp_path / "run", ["current"] * (WRITERS + 1) * EACH))
    keys = sorted(run.known)
    assert len(keys) == (WRITERS + 1) * EACH
    shares = [keys[i * EACH : (i + 1) * EACH] for i in range(WRITERS + 1)]
    run_dir = str(run.run_dir)
    writers = [(_save_each, (run_dir, share, run.known)) for share in shares[:-1]]
    answered = race(writers + [(import_share, (run_dir, shares[-1], run.known))], timeout=120)
    assert answered == len(keys)
    on_disk = read_label_file(label_path(run.run_dir, "ana"), run.run_dir, run.known)
    missing = set(keys) - set(on_disk)
    assert not missing, f"{len(missing)} of {len(keys)} labels answered saved are missing"
    assert {on_disk[key].label for key in shares[-1]} == {"prior"}


def test_temp_files_a_killed_save_left_are_removed_at_start_and_only_ours(tmp_path):
    run = open_label_run(build_run(tmp_path / "run", ["current"] * 4))
    folder = run.run_dir / "labels"
    folder.mkdir()
    left = [folder / f".ana.jsonl.{4000 + i}.{i:012x}.tmp" for i in range(3)]
    for path in left:
        path.write_text('{"half": ', encoding="utf-8")
    outside = tmp_path / "precious.txt"
    outside.write_text("keep", encoding="utf-8")
    linked = folder / ".ben.jsonl.4100.0123456789ab.tmp"
    os.symlink(outside, linked)
    theirs = [folder / ".notes.tmp", folder / "ana.jsonl.tmp", folder / ".ana.jsonl.12.xyz.tmp"]
    for path in theirs:
        path.write_text("someone else's", encoding="utf-8")
    AnnotatorDesk(run=run, annotator="ana", what="turn2", sample=run.sample("turn2", None, 47))
    assert not any(path.exists() or path.is_symlink() for path in [*left, linked])
    assert outside.read_text(encoding="utf-8") == "keep"  # the link was removed, never followed
    assert all(path.read_text(encoding="utf-8") == "someone else's" for path in theirs)


def test_a_lock_file_swapped_for_a_link_is_refused(tmp_path):
    run = open_label_run(build_run(tmp_path / "run", ["current"] * 4))
    (run.run_dir / "labels").mkdir()
    target = tmp_path / "elsewhere"
    target.write_text("", encoding="utf-8")
    os.symlink(target, run.run_dir / "labels" / ".lock")
    key = sorted(run.known)[0]
    try:
        write_labels(run.run_dir, "ana", [make_label(key, "current", "ana", run.known, "test")], run.known)
    except ValueError as exc:
        assert ".lock: is a symbolic link" in str(exc)
    else:
        raise AssertionError("a lock file that is a link was followed")
    assert not label_path(run.run_dir, "ana").exists()
