"""The labelling page (`wearsim annotate`) in real headless Chromium (Debian's, driven by
Playwright, launched as tests/benchmark/report/test_viewer.py does): ten replies labelled with the keyboard,
the tab closed halfway and opened again, the saved labels equal to what was pressed; the assistant's
Turn 1 reply folded above the reply, said to be unseen by the judges, and the rubric's rule for a reply
naming neither scene; another annotator's labels never reach the page; the server's Host and Origin
checks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import pytest

from benchmark.labels.run import AnnotatorDesk, open_label_run
from streaming.annotate_app import create_annotate_app
from streaming.local_server import running_app
from tests.benchmark.report.test_viewer import CHROMIUM, CHROMIUM_ARGS
from tests.label_runs import build_run

JUDGE = [
    "current",
    "prior",
    None,
    "clarify",
    "current",
    "abstain",
    "current",
    "prior",
    "current",
    "current",
    "prior",
    "current",
]
KEYS = ["1", "2", "3", "4", "u", "2", "1", "1", "4", "3"]  # pressed on the ten items, in the order shown
PRESSED = {"1": "current", "2": "prior", "3": "clarify", "4": "abstain", "u": "cannot_tell"}
SHOTS = Path("/tmp/annotate-shots")


@pytest.fixture
def run(tmp_path):
    return open_label_run(build_run(tmp_path / "run", JUDGE))


def desk(run, name: str) -> AnnotatorDesk:
    return AnnotatorDesk(run=run, annotator=name, what="turn2", sample=run.sample("turn2", 10, 47))


def label_one(page, key: str, note: str | None = None) -> str:
    """Press `key` on the item shown (after typing `note`); returns the item's key once saved."""
    item = page.get_attribute("#item", "data-key")
    if note is not None:
        page.fill("#note", note)
        page.locator("#sections").click()  # out of the note: keys label again
    page.keyboard.press(key)
    page.wait_for_function("document.querySelector('#status').textContent.startsWith('saved')")
    return item


@pytest.mark.browser
def test_ten_replies_labelled_by_keyboard_across_a_closed_tab(run, tmp_path):
    from playwright.sync_api import sync_playwright

    ben = desk(run, "ben")
    for item in ben.sample[:4]:  # another annotator, already at work
        ben.save(item.key, "abstain", "BEN-ONLY note")
    ben_file = (run.run_dir / "labels" / "ben.jsonl").read_bytes()
    ana = desk(run, "ana")
    assert [i.key for i in ana.sample] == [i.key for i in ben.sample]  # one seed, one sample
    pressed: dict[str, str] = {}
    with running_app(create_annotate_app(ana)) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.goto(url + "/")
            page.wait_for_selector("body[data-ready='true']")
            assert page.inner_text("#progress-text") == "0 of 10 labelled"
            # what the page got: no judge label, nobody else's labels
            data = page.evaluate("async () => (await fetch('/v1/annotate')).json()")
            assert data["labels"] == {} and data["annotator"] == "ana"
            assert all(set(item) == {"key", "scenario_id", "sections"} for item in data["items"])
            assert "BEN-ONLY" not in json.dumps(data) and "ben" not in json.dumps(data["labels"])
            # the assistant's Turn 1 reply: shown, folded by default, said to be unseen by the judges
            earlier = page.locator("#sections details.part.earlier")
            assert earlier.count() == 1 and earlier.get_attribute("open") is None
            assert earlier.locator("summary").inner_text() == (
                "Turn 1: the assistant's reply (the judges do not see it)"
            )
            shown = data["items"][0]["key"]
            turn_1 = f"turn one answer {int(shown[3:5]) - 1}"  # tests/label_runs.py's Turn 1 reply of sc-NN
            assert not page.get_by_text(turn_1).is_visible()
            earlier.locator("summary").click()
            assert earlier.get_attribute("open") is not None and page.get_by_text(turn_1).is_visible()
            sections = page.locator("#sections > *")
            order = [sections.nth(n).get_attribute("class") for n in range(sections.count())]
            assert order.index("part earlier") < order.index("part reply")
            for n in range(5):
                note = "hard to tell the tools apart" if n == 1 else None
                pressed[label_one(page, KEYS[n], note)] = KEYS[n]
                if n == 2:
                    page.keyboard.press("?")  # the rubric's definitions, one key away
                    assert page.locator("#rubric").get_attribute("open") is not None
                    assert "asks the user which thing" in page.inner_text("#definitions")
                    notes = page.inner_text("#rubric-notes")  # a reply naming neither scene: by what it does
                    assert "names neither scene" in notes and "cannot tell (u)" in notes
                    page.screenshot(path=str(tmp_path / "labelling.png"), full_page=True)
                    page.keyboard.press("?")
            assert "BEN-ONLY" not in page.content()
            page.close()  # the tab closed halfway

            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.goto(url + "/")
            page.wait_for_selector("body[data-ready='true']")
            assert page.inner_text("#progress-text") == "5 of 10 labelled"
            resumed = page.get_attribute("#item", "data-key")
            assert resumed not in pressed  # it resumes at an item not labelled yet
            page.keyboard.press("b")  # back: the label given before shows
            before = page.get_attribute("#item", "data-key")
            assert before in pressed
            assert page.inner_text("#given") == f"· your label: {PRESSED[pressed[before]].replace('_', ' ')}"
            page.keyboard.press("s")  # skip forward again
            assert page.get_attribute("#item", "data-key") == resumed
            page.screenshot(path=str(tmp_path / "resumed.png"), full_page=True)
            for n in range(5, 10):
                pressed[label_one(page, KEYS[n])] = KEYS[n]
            assert page.inner_text("#progress-text") == "10 of 10 labelled"
            assert page.is_visible("#done")
            assert "BEN-ONLY" not in page.content()
            page.screenshot(path=str(tmp_path / "done.png"), full_page=True)
        finally:
            browser.close()
    saved = [json.loads(line) for line in (run.run_dir / "labels" / "ana.jsonl").read_text().splitlines()]
    assert {s["trial_key"]: s["label"] for s in saved} == {key: PRESSED[k] for key, k in pressed.items()}
    assert len(pressed) == 10 and set(pressed) == {i.key for i in ana.sample}
    assert [s["note"] for s in saved if s["note"]] == ["hard to tell the tools apart"]
    assert all(s["annotator"] == "ana" and s["what"] == "turn2" for s in saved)
    assert (run.run_dir / "labels" / "ben.jsonl").read_bytes() == ben_file  # nobody else's labels touched
    SHOTS.mkdir(exist_ok=True)
    for name in ("labelling.png", "resumed.png"):
        shutil.copyfile(tmp_path / name, SHOTS / name)


def test_the_page_keeps_the_live_pages_host_and_origin_checks(run):
    with running_app(create_annotate_app(desk(run, "ana"))) as url:
        item = desk(run, "ana").sample[0].key
        body = json.dumps({"key": item, "label": "prior", "note": ""})
        json_type = {"content-type": "application/json"}
        assert httpx.get(url + "/v1/annotate", headers={"host": "evil.example"}).status_code == 400
        foreign = httpx.post(
            url + "/v1/annotate/label", content=body, headers={**json_type, "origin": "http://evil.example"}
        )
        assert foreign.status_code == 403
        other_port = httpx.post(
            url + "/v1/annotate/label", content=body, headers={**json_type, "origin": "http://127.0.0.1:1"}
        )
        assert other_port.status_code == 403
        assert (
            httpx.post(
                url + "/v1/annotate/label", content=body, headers={"content-type": "text/plain", "origin": url}
            ).status_code
            == 415
        )
        assert not (run.run_dir / "labels").exists()  # nothing refused was saved
        wrong = httpx.post(
            url + "/v1/annotate/label",
            content=json.dumps({"key": item, "label": "maybe"}),
            headers={**json_type, "origin": url},
        )
        assert wrong.status_code == 400 and "is not one of current, prior" in wrong.json()["error"]
        ok = httpx.post(url + "/v1/annotate/label", content=body, headers={**json_type, "origin": url})
        assert ok.status_code == 200 and ok.json()["labelled"] == 1
