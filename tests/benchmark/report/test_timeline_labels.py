"""Issue 34, item 8 (the viewer): the timeline's mark labels do not overlap when the marks are
close (a slow reply squeezes the scene change and the end of speech together: "scene chaend of
speech"). Rendered in real headless Chromium; the strip is saved to tests/artifacts/ to look at."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pytest

from benchmark.report import timeline
from core.candidate import Reply
from core.records import GlassesFacts, TurnInput, TurnMetrics, TurnResult
from tests.benchmark.report.test_trial_viewer import CHROMIUM, CHROMIUM_ARGS
from tests.paths import ARTIFACTS


def _turn(scene_ms: int, speech_end_ms: int, first_token_s: float, reply_done_s: float) -> TurnResult:
    glasses = GlassesFacts(start_ms=scene_ms - 300, scene_ms=scene_ms, speech_end_ms=speech_end_ms, lead_ms=300)
    return TurnResult(
        turn=2,
        input=TurnInput(
            turn=2, camera_block="a block", speech="words", camera_source="perceived", speech_source="perceived"
        ),
        reply=Reply(text="r", model="m"),
        metrics=TurnMetrics(first_token=first_token_s, reply_done=reply_done_s),
        glasses=glasses,
    )


def _label_boxes(html: str, screenshot: Path) -> list[tuple[str, dict]]:
    from playwright.sync_api import sync_playwright

    page_html = f"<!doctype html><style>{timeline.STYLE}</style><div class='stream-turn'>{html}</div>"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 900, "height": 400})
            page.set_content(page_html)
            labels = page.locator(".mark-label")
            boxes = [(labels.nth(i).inner_text(), labels.nth(i).bounding_box()) for i in range(labels.count())]
            ARTIFACTS.mkdir(exist_ok=True)
            page.locator(".timeline").screenshot(path=str(screenshot))
        finally:
            browser.close()
    return boxes


def _overlapping(boxes):
    return [
        (a, b)
        for (a, p), (b, q) in combinations(boxes, 2)
        if p["x"] < q["x"] + q["width"]
        and q["x"] < p["x"] + p["width"]
        and p["y"] < q["y"] + q["height"]
        and q["y"] < p["y"] + p["height"]
    ]


@pytest.mark.slow
def test_close_marks_have_labels_that_do_not_overlap(tmp_path):
    files = timeline.RunFiles(tmp_path, tmp_path)
    cases = {
        "slow_reply": _turn(1000, 1080, 9.0, 9.2),  # scene and end of speech 80 ms apart on a 10 s strip
        "all_close": _turn(1000, 1010, 0.02, 0.03),
    }  # every mark within 40 ms
    for name, turn in cases.items():
        boxes = _label_boxes(timeline.timeline_html(turn, files), ARTIFACTS / f"timeline_labels_{name}.png")
        assert len(boxes) == 4, boxes
        assert not _overlapping(boxes), (name, boxes)
