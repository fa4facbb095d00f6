"""Issue 57 row 16: hostile bodies on the label route (a list as the key, 5,000-deep JSON, a
10,000-digit number) get a 400 with a short message, never a 500 with a traceback; nothing is saved."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from benchmark.labels.run import AnnotatorDesk, open_label_run
from benchmark.labels.store import label_path
from streaming.annotate_app import create_annotate_app
from tests.label_runs import build_run

HEADERS = {"content-type": "application/json", "host": "127.0.0.1", "origin": "http://127.0.0.1"}


@pytest.fixture
def page(tmp_path):
    run = open_label_run(build_run(tmp_path / "run", ["current"] * 4))
    desk = AnnotatorDesk(run=run, annotator="ana", what="turn2", sample=run.sample("turn2", None, 47))
    with TestClient(create_annotate_app(desk), raise_server_exceptions=False) as client:
        yield client, run, desk


@pytest.mark.parametrize(
    "body",
    [
        '{"key": ["sc-01|baseline|0"], "label": "current"}',
        '{"key": {"a": 1}, "label": "current"}',
        '{"key": "sc-01|baseline|0", "label": ["current"]}',
        '{"key": "sc-01|baseline|0", "label": "current", "note": [1]}',
        '{"key": ' + "[" * 5000 + "]" * 5000 + ', "label": "current"}',
        "[" * 5000 + "]" * 5000,
        '{"key": "sc-01|baseline|0", "label": "current", "note": ' + "9" * 10_000 + "}",
        '{"key": ' + "1" * 10_000 + "}",
    ],
)
def test_a_hostile_label_body_gets_a_short_400(page, body):
    client, run, _ = page
    answer = client.post("/v1/annotate/label", content=body[:16_000], headers=HEADERS)
    assert answer.status_code == 400, answer.text
    assert len(answer.text) < 300 and "Traceback" not in answer.text
    assert "error" in answer.json()
    assert not label_path(run.run_dir, "ana").exists()


def test_a_good_label_still_saves(page):
    client, run, desk = page
    key = desk.sample[0].key
    answer = client.post("/v1/annotate/label", json={"key": key, "label": "current"}, headers=HEADERS)
    assert answer.status_code == 200 and answer.json() == {"saved": key, "labelled": 1}
    assert label_path(run.run_dir, "ana").exists()
