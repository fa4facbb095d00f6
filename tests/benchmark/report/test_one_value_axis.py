"""Issue 50: a plot whose axis has one value (every run cost $0, one latency) says so, with that value's one
tick, instead of ruling the axis in ticks the data does not spread over ($2e-07 steps on a $0 axis)."""

from __future__ import annotations

import pytest

from benchmark.report import chart


def test_value_axis():
    assert chart.value_axis([0.0, 0.0, 0.0]) == ((-1.0, 1.0), [0.0], True)
    assert chart.value_axis([0.4, 0.4]) == ((0.0, 0.8), [0.4], True)
    span, ticks, one = chart.value_axis([0.0, 0.002])
    assert not one and span == (0.0, ticks[-1]) and ticks[0] == 0 and ticks[-1] >= 0.0022 and len(ticks) <= 6
    assert chart.value_axis([]) == ((0.0, 1.0), [0.0, 0.2, 0.4, 0.6, 0.8, 1.0], False)


@pytest.fixture
def drawn(monkeypatch):
    """What the plots put on their x axis: the tick labels and the axis name."""
    seen = {}
    monkeypatch.setattr(chart.Axes, "x_ticks", lambda self, values, labels=None, **k: seen.update(ticks=labels))
    original = chart.Axes.x_label
    monkeypatch.setattr(
        chart.Axes, "x_label", lambda self, text, **k: (seen.update(label=text), original(self, text, **k))
    )
    return seen


def test_the_all_zero_cost_plot_says_every_point_cost_nothing(tmp_path, drawn):
    from benchmark.report.cost_plot import plot_accuracy_cost

    points = [
        {
            "run": f"r{i}",
            "label": f"run {i}",
            "condition": "baseline",
            "accuracy": a,
            "cost_per_trial": 0.0,
            "measured": True,
        }
        for i, a in enumerate((0.5, 0.62, 0.4))
    ]
    plot_accuracy_cost(points, tmp_path / "accuracy_cost.png")
    assert drawn["ticks"] == ["$0"]
    assert drawn["label"] == "candidate cost per trial (USD): every point $0, no spread to draw"
    points[1]["cost_per_trial"] = 0.004
    plot_accuracy_cost(points, tmp_path / "spread.png")
    assert drawn["ticks"][0] == "$0" and len(drawn["ticks"]) > 2 and "no spread" not in drawn["label"]


def test_the_latency_plot_with_one_latency_says_so(tmp_path, drawn):
    from benchmark.report.latency_plot import plot_accuracy_latency

    rows = [
        {
            "label": f"run {i}",
            "first_token_s": {"p50": 0.8, "p95": 0.8, "n": 4},
            "balanced_accuracy": a,
            "ci_low": None,
            "ci_high": None,
            "measured": True,
            "measured_from": "the request",
        }
        for i, a in enumerate((0.5, 0.7))
    ]
    plot_accuracy_latency(rows, tmp_path / "accuracy_latency.png")
    assert drawn["ticks"] == ["0.8 s"] and drawn["label"].endswith(": every run 0.8 s, no spread to draw")
