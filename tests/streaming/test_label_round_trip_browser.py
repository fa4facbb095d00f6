"""Labels out and back in (issue 58), with the labels given in the real labelling page (headless Chromium,
as tests/streaming/test_annotate_browser.py drives it): ten replies labelled by two people, each page's
end measuring the human check again (`wearsim annotate`'s `after_labelling`); the sample and its labels
exported to a Label Studio JSON export and to a CSV; one label edited in each; both imported back:
exactly the two edited labels change, and findings.md's human-check line shows the new counts."""

from __future__ import annotations

import csv
import json
import re

import pytest

from benchmark.cli import main
from benchmark.cli.annotate import after_labelling
from benchmark.labels.run import AnnotatorDesk, open_label_run
from benchmark.report import write_report
from benchmark.report.viewer import write_viewer
from streaming.annotate_app import create_annotate_app
from streaming.local_server import running_app
from tests.benchmark.report.test_viewer import CHROMIUM, CHROMIUM_ARGS
from tests.label_runs import build_run
from tests.streaming.test_annotate_browser import JUDGE, PRESSED, label_one

KEYS = {
    "ana": ["1", "2", "3", "4", "u", "2", "1", "1", "4", "3"],
    "ben": ["1", "2", "3", "1", "2", "2", "1", "2", "4", "3"],
}
LINE = re.compile(r"Judge checked against (\d+) human labels by (\d) (?:people|person)")


def saved(run_dir, name: str) -> dict[str, str]:
    lines = (run_dir / "labels" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["trial_key"]: r["label"] for r in map(json.loads, lines)}


def human_check(run_dir) -> tuple[int, int]:
    """(human labels, people) of findings.md's line, which the viewer shows too."""
    findings = (run_dir / "findings.md").read_text(encoding="utf-8")
    match = LINE.search(findings)
    assert match is not None, findings
    assert match.group(0) in (run_dir / "index.html").read_text(encoding="utf-8")
    return int(match.group(1)), int(match.group(2))


def label_in_the_page(browser, desk: AnnotatorDesk) -> dict[str, str]:
    """The annotator presses their ten keys in the page; returns item key -> label pressed."""
    pressed = {}
    with running_app(create_annotate_app(desk)) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.goto(url + "/")
        page.wait_for_selector("body[data-ready='true']")
        for key in KEYS[desk.annotator]:
            pressed[label_one(page, key)] = PRESSED[key]
        assert page.inner_text("#progress-text") == "10 of 10 labelled"
        page.close()
    return pressed


@pytest.mark.browser
def test_two_people_label_then_export_edit_and_import_change_only_the_edited_labels(tmp_path, capsys):
    from playwright.sync_api import sync_playwright

    run_dir = build_run(tmp_path / "run", JUDGE)
    write_report(run_dir)
    write_viewer(run_dir)
    run = open_label_run(run_dir)
    sample = run.sample("turn2", 10, 47)
    given = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for name in ("ana", "ben"):
                desk = AnnotatorDesk(run=run, annotator=name, what="turn2", sample=sample)
                given[name] = label_in_the_page(browser, desk)
                assert after_labelling(desk, str(run_dir)) == 0  # as `wearsim annotate` does when it stops
                if name == "ana":  # one person: counted, and nothing yet to hold the judge against
                    assert human_check(run_dir) == (9, 1)
                    assert "no item yet has two people agreeing" in capsys.readouterr().out
        finally:
            browser.close()
    for name in ("ana", "ben"):
        assert saved(run_dir, name) == given[name]
    assert human_check(run_dir) == (19, 2)  # ana's 'cannot tell' is no label

    exported = tmp_path / "labels.json"
    table = tmp_path / "labels.csv"
    assert main(["labels", "export", str(run_dir), "--output", str(exported), "--sample", "10"]) == 0
    assert main(["labels", "export", str(run_dir), "--output", str(table), "--sample", "10"]) == 0
    assert exported.with_suffix(".xml").is_file()

    # in the JSON, ana's 'cannot tell' becomes 'prior'; in the CSV, one of ben's labels becomes 'abstain'
    unsure = next(key for key, label in given["ana"].items() if label == "cannot_tell")
    tasks = json.loads(exported.read_text(encoding="utf-8"))
    assert sum(len(t["annotations"]) for t in tasks) == 20
    task = next(t for t in tasks if t["data"]["trial_key"] == unsure)
    annotation = next(a for a in task["annotations"] if a["completed_by"]["first_name"] == "ana")
    assert annotation["result"][0]["value"]["choices"] == ["cannot_tell"]
    annotation["result"][0]["value"]["choices"] = ["prior"]
    exported.write_text(json.dumps(tasks, indent=2), encoding="utf-8")
    with table.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["trial_key", "label", "annotator", "note", "time"] and len(rows) == 21
    edited = next(row for row in rows if row[2] == "ben" and row[1] == "current")
    edited[1] = "abstain"
    with table.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)

    files = {name: (run_dir / "labels" / f"{name}.jsonl").read_bytes() for name in ("ana", "ben")}
    capsys.readouterr()
    assert main(["labels", "import", str(run_dir), str(exported)]) == 0
    out = capsys.readouterr().out
    assert "ana: 1 labels imported" in out and "ben: 0 labels imported" in out and "(10 already there" in out
    assert (run_dir / "labels" / "ben.jsonl").read_bytes() == files["ben"]
    assert main(["labels", "import", str(run_dir), str(table)]) == 0  # exported before ana's edit came in
    out = capsys.readouterr().out
    assert "ben: 1 labels imported" in out and "ana: 0 labels imported" in out and "1 kept as changed" in out
    assert saved(run_dir, "ana") == {**given["ana"], unsure: "prior"}
    assert saved(run_dir, "ben") == {**given["ben"], edited[0]: "abstain"}
    assert human_check(run_dir) == (20, 2)
    result = json.loads((run_dir / "agreement.json").read_text(encoding="utf-8"))
    assert result["human_labels"] == 20 and result["annotators"] == ["ana", "ben"]
