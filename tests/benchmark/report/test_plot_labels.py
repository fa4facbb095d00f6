"""Issue 34, item 8 (the plot): the frame-policy plot's point labels do not overlap when policies
have close frame rates and close scores."""

from __future__ import annotations

from itertools import combinations

from benchmark.report import chart
from benchmark.report.plots import plot_frame_policies
from benchmark.scoring.summary_view import RunSummary


def _cell(accuracy):
    return {"rate": accuracy, "ci_low": max(0.0, accuracy - 0.2), "ci_high": min(1.0, accuracy + 0.2)}


def _summary():
    policies = {
        "fps:1": (60.0, 0.5, 0.3),
        "fps:1.05": (63.0, 0.5, 0.3),
        "speech:1/2": (61.0, 0.52, 0.28),
        "change:0.1/2": (58.0, 0.48, 0.32),
        "end": (12.0, 0.4, 0.1),
        "fps:0.2": (12.5, 0.42, 0.1),
    }
    per = {
        name: {"frames_per_minute": rate, "accuracy": _cell(acc), "stale_frame_rate": _cell(stale)}
        for name, (rate, acc, stale) in policies.items()
    }
    return {
        "by_frame_policy": {"baseline": per},
        "primary": {"condition": "baseline"},
        "conditions": {"baseline": {"scored": 10}},
        "counts": {"by_condition": {"baseline": {"trials": 10}}},
        "manifest": {},
    }


def test_frame_policy_labels_never_overlap(tmp_path, monkeypatch):
    drawn = []
    real = chart.Figure.text

    def record(self, x, y, text, *, size=11, colour=chart.INK, anchor="lt", angle=0):
        drawn.append((x, y, text, size, anchor))
        return real(self, x, y, text, size=size, colour=colour, anchor=anchor, angle=angle)

    monkeypatch.setattr(chart.Figure, "text", record)
    plot_frame_policies(RunSummary.from_json(_summary()), tmp_path / "frame_policy.png")
    names = ("fps:1", "fps:1.05", "speech:1/2", "change:0.1/2", "end", "fps:0.2")
    boxes = []
    for x, y, text, size, anchor in drawn:
        if text.strip() in names:
            assert anchor == "lm"
            height = chart.line_height(size)
            boxes.append((text.strip(), x, y - height / 2, x + chart.text_width(text, size), y + height / 2))
    assert len(boxes) == 2 * len(names)  # accuracy and stale-frame rate: every label drawn
    overlapping = [
        (a[0], b[0]) for a, b in combinations(boxes, 2) if a[1] < b[3] and b[1] < a[3] and a[2] < b[4] and b[2] < a[4]
    ]
    assert not overlapping, overlapping
