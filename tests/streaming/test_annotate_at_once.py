"""Issue 57 row 1 through the label route: two labelling pages of one annotator, each its own process
(`wearsim annotate` twice), and a `labels import` of the same annotator, all at once: every label the
route answered 200 for is in the file (500 labels in all)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from benchmark.labels.run import AnnotatorDesk, open_label_run
from benchmark.labels.store import label_path, read_label_file
from streaming.annotate_app import create_annotate_app
from tests.label_races import import_share, race
from tests.label_runs import build_run

HEADERS = {"content-type": "application/json", "host": "127.0.0.1", "origin": "http://127.0.0.1"}
PAGE = 200  # labels each page saves
IMPORTED = 100


def _page(run_dir: str, keys: list[str], start, done) -> None:
    run = open_label_run(Path(run_dir))
    desk = AnnotatorDesk(run=run, annotator="ana", what="turn2", sample=run.sample("turn2", None, 47))
    ok = 0
    with TestClient(create_annotate_app(desk), raise_server_exceptions=False) as client:
        start.wait()
        for key in keys:
            answer = client.post("/v1/annotate/label", json={"key": key, "label": "current"}, headers=HEADERS)
            ok += answer.status_code == 200
    done.put(ok)


@pytest.mark.slow
def test_two_pages_and_an_import_of_one_annotator_lose_none_of_500_labels_answered_saved(tmp_path):
    run = open_label_run(build_run(tmp_path / "run", ["current"] * (2 * PAGE + IMPORTED)))
    keys = sorted(run.known)
    shares = [keys[:PAGE], keys[PAGE : 2 * PAGE], keys[2 * PAGE :]]
    run_dir = str(run.run_dir)
    writers = [(_page, (run_dir, share)) for share in shares[:2]] + [(import_share, (run_dir, shares[2], run.known))]
    answered = race(writers, timeout=240)
    assert answered == len(keys) == 500
    on_disk = read_label_file(label_path(run.run_dir, "ana"), run.run_dir, run.known)
    missing = set(keys) - set(on_disk)
    assert not missing, f"{len(missing)} of {len(keys)} labels answered saved are missing"
    assert {on_disk[key].label for key in shares[2]} == {"prior"}
