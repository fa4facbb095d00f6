"""Hostile label files: a link, a huge line, an unknown trial key, a label outside the allowed
ones. Each is refused with one line naming the file and the line, and nothing already saved is
lost; annotator names cannot make a path."""

from __future__ import annotations

import json
import os

import pytest

from benchmark.cli import main
from benchmark.labels.items import LabelError
from benchmark.labels.run import AnnotatorDesk, open_label_run
from benchmark.labels.store import MAX_LABEL_LINE_BYTES, check_annotator, read_all_labels
from tests.label_runs import build_run

JUDGE = ["current", "prior", "clarify", "abstain", "current", "prior"]
KEY = "sc-01|baseline|0"


@pytest.fixture
def run(tmp_path):
    run = open_label_run(build_run(tmp_path / "run", JUDGE))
    desk = AnnotatorDesk(run=run, annotator="ana", what="turn2", sample=run.sample("turn2", None, 47))
    desk.save(KEY, "prior", "first")
    return run


def line(key: str = KEY, label: str = "current", **extra) -> str:
    return json.dumps({"trial_key": key, "what": "turn2", "label": label, "annotator": "ana", **extra}) + "\n"


def refusal(run, capsys) -> str:
    """What `wearsim agreement` says of the run's labels: exit 2 and one line."""
    assert main(["agreement", str(run.run_dir)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    return err


def test_a_label_file_that_is_a_link_is_refused_and_its_target_left_alone(run, tmp_path, capsys):
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text(line("sc-02|baseline|0"), encoding="utf-8")
    os.symlink(outside, run.run_dir / "labels" / "ben.jsonl")
    err = refusal(run, capsys)
    assert "ben.jsonl: is a symbolic link" in err
    desk = AnnotatorDesk(run=run, annotator="ben", what="turn2", sample=run.sample("turn2", None, 47))
    with pytest.raises(LabelError, match="symbolic link"):
        desk.save(KEY, "current")
    assert outside.read_text(encoding="utf-8") == line("sc-02|baseline|0")  # never written through


def test_a_labels_folder_that_is_a_link_is_refused(tmp_path):
    run = open_label_run(build_run(tmp_path / "run", JUDGE))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, run.run_dir / "labels")
    with pytest.raises(LabelError, match="labels: is a symbolic link"):
        read_all_labels(run.run_dir, run.known)
    desk = AnnotatorDesk(run=run, annotator="ana", what="turn2", sample=run.sample("turn2", None, 47))
    with pytest.raises(LabelError, match="leads out of"):
        desk.save(KEY, "current")
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize(
    "bad, expected",
    [
        ("x" * (MAX_LABEL_LINE_BYTES + 10), f"line 2: {MAX_LABEL_LINE_BYTES + 10:,} bytes, over the"),
        (line("sc-99|baseline|0").strip(), "line 2: unknown trial key 'sc-99|baseline|0'"),
        (
            line(label="maybe").strip(),
            "line 2: label 'maybe' is not one of current, prior, clarify, abstain, cannot_tell",
        ),
        (line(label="hit").strip(), "line 2: label 'hit' is not one of"),
        ("[1, 2]", "line 2: expected a JSON object"),
        ("[" * 5000 + "]" * 5000, "line 2: not a JSON line (nested too deeply)"),
        (line(annotator="ben").strip(), "line 2: field 'annotator' is 'ben'"),
    ],
)
def test_a_hostile_line_is_refused_naming_file_and_line_and_nothing_saved_is_lost(run, capsys, bad, expected):
    path = run.run_dir / "labels" / "ana.jsonl"
    path.write_text(path.read_text(encoding="utf-8") + bad + "\n", encoding="utf-8")
    before = path.read_bytes()
    err = refusal(run, capsys)
    assert f"{path}: {expected}" in err
    desk = AnnotatorDesk(run=run, annotator="ana", what="turn2", sample=run.sample("turn2", None, 47))
    with pytest.raises(LabelError, match="line 2"):
        desk.save("sc-02|baseline|0", "current")  # a save into a refused file stops before writing
    assert path.read_bytes() == before
    assert [p.name for p in path.parent.iterdir() if p.name != ".lock"] == ["ana.jsonl"]  # no temp file left
    assert main(["annotate", str(run.run_dir), "--annotator", "ana", "--port", "0"]) == 2  # refused before serving
    assert str(path) in capsys.readouterr().err


@pytest.mark.parametrize("name", ["../evil", "a/b", ".hidden", "-x", "", "x" * 41, "ana\n"])
def test_annotator_names_cannot_make_a_path(run, name, capsys):
    with pytest.raises(LabelError, match="annotator name"):
        check_annotator(name)
    assert main(["annotate", str(run.run_dir), f"--annotator={name}"]) == 2
    assert "annotator name" in capsys.readouterr().err
    assert [p.name for p in (run.run_dir / "labels").iterdir() if p.name != ".lock"] == ["ana.jsonl"]


def test_labels_outside_the_sample_or_the_choices_are_refused_by_the_desk(run):
    desk = AnnotatorDesk(run=run, annotator="ana", what="turn2", sample=run.sample("turn2", 2, 47))
    outside = next(k for k in run.known if k not in desk.in_sample)
    with pytest.raises(LabelError, match="not in this sample"):
        desk.save(outside, "current")
    with pytest.raises(LabelError, match="field 'note'"):
        desk.save(desk.sample[0].key, "current", "n" * 2001)
    assert desk.save(desk.sample[0].key, "cannot_tell") >= 1
