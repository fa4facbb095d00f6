"""The run viewer: index.html built from a schema-1 stream run dir, opened in real headless Chromium."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pytest

from benchmark.cli import view as view_cli
from benchmark.report import write_report
from benchmark.report.findings import headline
from benchmark.report.viewer import write_viewer
from benchmark.scoring import load_trials
from benchmark.scoring.summary_view import RunSummary
from tests.paths import ARTIFACTS, FIXTURES

FIXTURE = FIXTURES / "transcripts" / "schema1_stream"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def run_dir(tmp_path) -> Path:
    path = tmp_path / "run"
    shutil.copytree(FIXTURE, path)
    return path


def test_page_is_self_contained_and_escaped(run_dir, tmp_path):
    summary = write_report(run_dir)
    page = write_viewer(run_dir, summary=RunSummary.from_json(summary)).read_text(encoding="utf-8")
    assert "1 of 5 scored: not a measurement" in headline(RunSummary.from_json(summary))
    assert headline(RunSummary.from_json(summary)) in page
    assert "http://" not in page and "https://" not in page and "<link" not in page
    assert page.count('src="data:image/png;base64,') == 3  # the three plots
    assert page.count('class="trial"') == 5
    # sc-05 has frames in media/; rows refer to them, each image is embedded once
    assert 'data-frame="f0"' in page and '"f0": "data:image/jpeg;base64,' in page
    # a trial whose text carries markup is escaped
    trials = load_trials(run_dir).trials
    marked = tmp_path / "marked"
    shutil.copytree(run_dir, marked)
    text = (marked / "transcripts.jsonl").read_text(encoding="utf-8")
    reply = trials[0].turn_2_response
    (marked / "transcripts.jsonl").write_text(text.replace(reply, "<script>alert(1)</script>"), encoding="utf-8")
    page = write_viewer(marked, summary=RunSummary.from_json(write_report(marked))).read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_perceived_speech_shown_beside_the_authored_text(run_dir):
    page = write_viewer(run_dir, summary=RunSummary.from_json(write_report(run_dir))).read_text(encoding="utf-8")
    # sc-02 turn 1: Whisper heard "How short I be gripping this." (speech perceived)
    assert "speech, perceived</b><pre>How short I be gripping this.</pre>" in page
    assert "speech, authored</b>" in page


def test_unknown_scenario_is_skipped_gracefully(run_dir):
    text = (run_dir / "transcripts.jsonl").read_text(encoding="utf-8")
    (run_dir / "transcripts.jsonl").write_text(text.replace('"sc-03"', '"zz-99"'), encoding="utf-8")
    page = write_viewer(run_dir, summary=RunSummary.from_json(write_report(run_dir))).read_text(encoding="utf-8")
    assert "zz-99" in page and "Scenario not in the bank: authored text not shown." in page


def test_view_command_prints_the_page_path(run_dir, capsys):
    parser = argparse.ArgumentParser(prog="wearsim")
    view_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["view", str(run_dir)])
    assert args.run(args) == 0
    assert capsys.readouterr().out.strip() == str(run_dir / "index.html")
    assert (run_dir / "summary.json").is_file() and (run_dir / "index.html").is_file()


@pytest.mark.browser
def test_viewer_in_headless_chromium(run_dir, tmp_path):
    from playwright.sync_api import sync_playwright

    summary = write_report(run_dir)
    page_path = write_viewer(run_dir, summary=RunSummary.from_json(summary))
    requests: list[str] = []
    with sync_playwright() as p:
        # launch() gives the browser a fresh temporary profile (user-data dir) of its own
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 1400})
            page.on("request", lambda request: requests.append(request.url))
            page.goto(page_path.resolve().as_uri())
            assert page.locator("#headline").inner_text().startswith("1 of 5 scored: not a measurement")
            rows = page.locator("details.trial")
            assert rows.count() == 5
            assert page.locator("#shown").inner_text() == "5 of 5 trials shown"

            # open sc-01 (the scored one): its messages and the judge label show
            row = page.locator('details.trial:has-text("sc-01")')
            message = row.locator(".msg.user pre").first
            assert not message.is_visible()
            row.locator(":scope > summary").click()
            assert message.is_visible()
            assert "am I holding this right" in row.inner_text()
            assert row.locator("td.label").first.inner_text() == "abstain"
            assert "rule 3: declines" in row.inner_text()

            # filter by outcome: only the miss stays
            page.select_option('select[data-filter="outcome"]', "miss")
            visible = [
                rows.nth(i).get_attribute("data-outcome") for i in range(rows.count()) if rows.nth(i).is_visible()
            ]
            assert visible == ["miss"]
            assert page.locator("#shown").inner_text() == "1 of 5 trials shown"
            page.select_option('select[data-filter="outcome"]', "unscored")
            assert not row.is_visible() and page.locator("#shown").inner_text() == "4 of 5 trials shown"
            page.select_option('select[data-filter="outcome"]', "")

            # sc-05's frames load from the embedded data when its row opens
            frames_row = page.locator('details.trial:has-text("sc-05")')
            frames_row.locator(":scope > summary").click()
            image = frames_row.locator("img[data-frame]").first
            image.wait_for(state="visible")
            assert image.evaluate("img => img.complete && img.naturalWidth > 0")
            assert image.get_attribute("src").startswith("data:image/jpeg;base64,")

            frames_row.locator(":scope > summary").click()  # closed again; sc-01 stays open for the screenshot
            page.evaluate("window.scrollTo(0, 0)")
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "viewer.png"), full_page=True)
        finally:
            browser.close()
    shutil.copyfile(ARTIFACTS / "viewer.png", "/tmp/viewer.png")
    assert requests, "the page load itself is a request"
    assert [url for url in requests if not url.startswith(("file:", "data:"))] == []


def test_a_crafted_summary_cannot_put_script_in_the_page(run_dir):
    """`view` trusts a summary.json newer than the transcripts: every value from it is escaped."""
    summary = write_report(run_dir)
    for cond in summary["conditions"].values():
        cond["repair_rate"]["k"] = "<script>alert(1)</script>"
        cond["repair_rate"]["n"] = "<img src=x onerror=alert(2)>"
    page = write_viewer(run_dir, summary=RunSummary.from_json(summary)).read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
