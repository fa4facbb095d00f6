"""Issue 57 row 1 through the label route: two labelling pages of one annotator, each its own process
(`wearsim annotate` twice), and a `labels import` of the same annotator, all at once: every label the
route answered 200 for is in the file (500 labels in all)."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from benchmark.labels.run import AnnotatorDesk, open_label_run
from benchmark.labels.store import import_labels, label_path, make_label, read_label_file
from streaming.annotate_app import create_annotate_app
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


def _import(run_dir: str, keys: list[str], start, done) -> None:
    run = open_label_run(Path(run_dir))
    labels = [make_label(k, "prior", "ana", run.known, "test", time="2026-01-01T00:00:00Z") for k in keys]
    start.wait()
    done.put(import_labels(run.run_dir, labels, run.known)["ana"][0])


@pytest.mark.slow
def test_two_pages_and_an_import_of_one_annotator_lose_none_of_500_labels_answered_saved(tmp_path):
    run = open_label_run(build_run(tmp_path / "run", ["current"] * (2 * PAGE + IMPORTED)))
    keys = sorted(run.known)
    shares = [keys[:PAGE], keys[PAGE : 2 * PAGE], keys[2 * PAGE :]]
    ctx = multiprocessing.get_context("fork")
    start, done = ctx.Event(), ctx.Queue()
    workers = [ctx.Process(target=_page, args=(str(run.run_dir), share, start, done)) for share in shares[:2]]
    workers.append(ctx.Process(target=_import, args=(str(run.run_dir), shares[2], start, done)))
    for worker in workers:
        worker.start()
    start.set()
    answered = sum(done.get(timeout=240) for _ in workers)
    for worker in workers:
        worker.join(timeout=30)
        assert worker.exitcode == 0
    assert answered == len(keys) == 500
    on_disk = read_label_file(label_path(run.run_dir, "ana"), run.run_dir, run.known)
    missing = set(keys) - set(on_disk)
    assert not missing, f"{len(missing)} of {len(keys)} labels answered saved are missing"
    assert {on_disk[key].label for key in shares[2]} == {"prior"}
