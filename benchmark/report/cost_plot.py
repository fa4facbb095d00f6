"""Accuracy against cost over several runs (`wearsim compare A B [MORE ...] --html DIR`; the page that
shows it is `compare_page.py`).

One point per run and condition: the candidate's spend per trial (USD, x)
against the condition's balanced Turn 2 accuracy (y). A point whose cost or
accuracy is unknown is not drawn; the page lists it with the reason.
"""

from __future__ import annotations

from benchmark.report.chart import INK, Figure, palette, place_point_labels, value_axis

PLOT_NAME = "accuracy_cost.png"
PAGE_NAME = "comparison.html"
COMPARE_OUTPUTS = (PLOT_NAME, PAGE_NAME, "accuracy_latency.png")


def plot_accuracy_cost(points: list[dict], path) -> None:
    """`points`: {run, label, condition, accuracy, cost_per_trial, measured}; drawn where both are known."""
    shown = [p for p in points if p["accuracy"] is not None and p["cost_per_trial"] is not None]
    fig = Figure(
        760,
        500,
        "Balanced Turn 2 accuracy against the candidate's cost per trial\n"
        "one point per run and condition; hollow: under half the cells scored",
    )
    span, ticks, one_cost = value_axis([p["cost_per_trial"] for p in shown])
    ax = fig.axes(78, 62, 200, 60, x=span, y=(0, 1.05))
    runs = list(dict.fromkeys(p["run"] for p in points))
    labels = []
    for point in shown:
        colour = palette(runs.index(point["run"]))
        x, y = point["cost_per_trial"], point["accuracy"]
        ax.marker(x, y, colour=colour, size=10)
        if not point["measured"]:
            ax.marker(x, y, colour="white", size=5)
        labels.append((*ax.px(x, y), point["condition"], INK))
    place_point_labels(fig, labels, ax.top, ax.bottom)  # beside each point, never over another (one cost: a column)
    if not shown:
        ax.note("no run has both a known cost and an accuracy")
    ax.frame()
    ax.x_ticks(ticks, [f"${t:g}" for t in ticks], angle=20, size=9)
    ax.y_ticks([0, 0.25, 0.5, 0.75, 1.0], ["0%", "25%", "50%", "75%", "100%"])
    ax.x_label(
        "candidate cost per trial (USD)" + (f": every point ${ticks[0]:g}, no spread to draw" if one_cost else ""),
        below=42,
    )
    ax.y_label("balanced Turn 2 accuracy", beside=48)
    drawn = {p["label"] for p in shown}
    run_labels = dict.fromkeys(p["label"] for p in points)
    if run_labels:
        ax.legend(
            [
                (label[:24] + ("" if label in drawn else " (not drawn)"), palette(i), "dot")
                for i, label in enumerate(run_labels)
            ],
            corner="outside right",
        )
        if len(drawn) < len(run_labels):
            fig.text(
                ax.right + 14,
                ax.top + 24 + 16 * len(run_labels),
                "not drawn: no known cost\nor no accuracy",
                size=9,
                colour=INK,
            )
    fig.save(path)


__all__ = ["COMPARE_OUTPUTS", "plot_accuracy_cost"]
