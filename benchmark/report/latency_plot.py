"""Accuracy against latency over several runs (`wearsim compare A B C ... --html DIR`).

One point per run under the compared condition: its first reply text p50
(x; a line to the p95) against its balanced Turn 2 accuracy (y; a line over
its bootstrap interval), hollow when under half the planned cells are
scored. A run with no latency or no accuracy is not drawn (the legend says
so). Latencies are seconds from the end of the user's speech (simulated
glasses) or from the request (text proxy): the plot says when runs mix them.
"""

from __future__ import annotations

from benchmark.report.chart import INK, Figure, palette, value_axis

PLOT_NAME = "accuracy_latency.png"


def plot_accuracy_latency(rows: list[dict], path) -> None:
    """`rows`: `compare_table.run_row` dicts."""

    def latency(row: dict) -> dict:
        """The run's first-token figures; empty (falsy) where none was measured."""
        figures = row.get("first_token_s") or {}
        return figures if figures.get("n") else {}

    shown = [r for r in rows if latency(r) and r["balanced_accuracy"] is not None]
    starts = sorted({r["measured_from"] for r in shown})
    fig = Figure(
        760,
        500,
        "Balanced Turn 2 accuracy against latency (first reply text p50, line to p95)\n"
        "one point per run; vertical line: 95% interval; hollow: under half the cells scored",
    )
    span, ticks, one_latency = value_axis([latency(r)[k] for r in shown for k in ("p50", "p95")])
    ax = fig.axes(78, 62, 200, 60, x=span, y=(0, 1.05))
    for row in shown:
        colour = palette(rows.index(row))
        figures, accuracy = latency(row), row["balanced_accuracy"]
        ax.interval(accuracy, figures["p50"], figures["p95"], horizontal=True, colour=colour)
        if row["ci_low"] is not None and row["ci_high"] is not None:
            ax.interval(figures["p50"], row["ci_low"], row["ci_high"], colour=colour)
        ax.marker(figures["p50"], accuracy, colour=colour, size=10)
        if not row["measured"]:
            ax.marker(figures["p50"], accuracy, colour="white", size=5)
    if not shown:
        ax.note("no run has both a latency and an accuracy")
    ax.frame()
    ax.x_ticks(ticks, [f"{t:g} s" for t in ticks], size=10)
    ax.y_ticks([0, 0.25, 0.5, 0.75, 1.0], ["0%", "25%", "50%", "75%", "100%"])
    ax.x_label(
        "first reply text, seconds from "
        + (" / ".join(starts) if starts else "the end of speech")
        + (f": every run {ticks[0]:g} s, no spread to draw" if one_latency else ""),
        below=30,
    )
    ax.y_label("balanced Turn 2 accuracy", beside=48)
    drawn = {r["label"] for r in shown}
    if rows:
        ax.legend(
            [
                (r["label"][:24] + ("" if r["label"] in drawn else " (not drawn)"), palette(i), "dot")
                for i, r in enumerate(rows)
            ],
            corner="outside right",
        )
    if len(starts) > 1:
        fig.text(
            ax.left,
            ax.bottom + 48,
            "these runs measure from different points: not comparable figure for figure",
            size=10,
            colour=INK,
        )
    fig.save(path)
