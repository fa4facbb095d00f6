"""A proactive trial in the viewer, opened from disk in real headless Chromium: a stream run against the
OpenAI Realtime conformance server with spoken output, probing every 5 s, whose every answer names the
event; the strip shows the scene change, the event's window, each probe, each remark at the moment it
came with its outcome (false alarms before the onset, the hit inside the window, duplicates after), the
frames sent, and each spoken remark plays."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import wave

import pytest

from core.records import TrialRecord
from tests.benchmark.report.test_trial_viewer import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS
from tests.candidates.test_realtime_spoken import _spoken_reply
from tests.fake_realtime import TEST_KEY, FakeOpenAIRealtime
from tests.paths import ROOT


@pytest.mark.browser
def test_the_viewer_draws_a_proactive_trial_and_plays_its_remarks(tmp_path):
    from playwright.sync_api import sync_playwright

    run_dir = tmp_path / "run"
    with FakeOpenAIRealtime(reply="The water is boiling now, add the pasta.", speech=_spoken_reply(0.4)) as server:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmark",
                "bench",
                "--model",
                "openai-realtime:gpt-realtime-2",
                "--base-url",
                server.base_url,
                "--judge-family",
                "lexical",
                "--conditions",
                "baseline",
                "--via",
                "stream",
                "--subset",
                "proactive",
                "--ids",
                "pa-01",
                "--proactive",
                "every:5",
                "--output",
                "audio",
                "--output-dir",
                str(run_dir),
            ],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=ROOT,
            env={**os.environ, "OPENAI_API_KEY": TEST_KEY},
        )
    assert done.returncode == 0, done.stderr
    [record] = [
        TrialRecord.from_json(json.loads(line)) for line in (run_dir / "transcripts.jsonl").read_text().splitlines()
    ]
    watching = record.watching
    outcomes = [p.outcome for p in watching.probes]
    assert "false_alarm" in outcomes and outcomes.count("hit") == 1 and "duplicate" in outcomes
    assert watching.outcome == "hit" and all(p.audio_file for p in watching.remarks)
    view = subprocess.run(
        [sys.executable, "-m", "benchmark", "view", str(run_dir)], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert view.returncode == 0, view.stderr
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 1400})
            page.goto((run_dir / "index.html").resolve().as_uri())
            assert "Events caught on time (baseline, every:5): 1 of 1" in page.locator("#headline").inner_text()
            row = page.locator('details.trial:has-text("pa-01")')
            row.locator(":scope > summary").click()
            strip = row.locator(".w-strip")
            assert strip.count() == 1
            # the scene change and the window start at the onset; the window ends where the record says
            changes = strip.locator(".w-change")
            assert [int(c.get_attribute("data-t-ms")) for c in changes.all()] == list(watching.scene_starts_ms[1:])
            assert watching.onset_ms in watching.scene_starts_ms
            window = strip.locator(".w-window").bounding_box()
            track = strip.locator(".w-track").bounding_box()
            span = int(strip.get_attribute("data-span-ms"))
            expected_left = track["x"] + track["width"] * watching.onset_ms / span
            expected_width = track["width"] * (watching.window_end_ms - watching.onset_ms) / span
            assert abs(window["x"] - expected_left) < 2 and abs(window["width"] - expected_width) < 2
            # a tick per probe, a marker per remark with its outcome, in stream order
            assert strip.locator(".w-probe").count() == watching.asked
            remarks = strip.locator(".w-remark")
            assert remarks.count() == len(watching.remarks)
            shown = {
                int(remarks.nth(i).get_attribute("data-t-ms")): remarks.nth(i).get_attribute("data-outcome")
                for i in range(remarks.count())
            }
            assert shown == {p.spoke_ms: p.outcome for p in watching.remarks}
            hit = strip.locator(".w-remark.w-hit")
            assert hit.count() == 1
            hit_x = hit.bounding_box()["x"]
            assert window["x"] <= hit_x <= window["x"] + window["width"]
            for alarm in strip.locator(".w-remark.w-false_alarm").all():  # made before the onset: left of it
                assert alarm.bounding_box()["x"] < window["x"]
            # the frames that showed a new picture, loaded from the run dir
            thumbs = strip.locator("img.w-thumb")
            assert thumbs.count() == len(watching.thumbnails) == len(watching.scene_starts_ms)
            thumbs.last.scroll_into_view_if_needed()
            page.wait_for_function(
                "els => els.every(img => img.complete && img.naturalWidth > 0)", arg=thumbs.element_handles()
            )
            # every spoken remark plays, as long as its WAV
            players = row.locator("audio.remark-audio")
            assert players.count() == len(watching.remarks)
            page.wait_for_function("els => els.every(a => a.readyState >= 1)", arg=players.element_handles())
            first = watching.remarks[0].audio_file
            with wave.open(str(run_dir / first)) as saved:
                seconds = saved.getnframes() / saved.getframerate()
            assert abs(players.first.evaluate("a => a.duration") - seconds) < 0.05
            table = row.locator("table.w-probes").inner_text()
            assert "false alarm" in table and "hit" in table and "duplicate" in table
            strip.scroll_into_view_if_needed()
            ARTIFACTS.mkdir(exist_ok=True)
            row.screenshot(path=str(ARTIFACTS / "proactive_viewer.png"))
        finally:
            browser.close()
