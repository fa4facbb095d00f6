"""The proactive run's plot: for each condition and grid cell, the events caught on time (recall, with
its 95% interval) against the false alarms per minute of stream: up and to the left is better, and a
strategy that probes more often shows what it buys and what it costs."""

from __future__ import annotations

from pathlib import Path

from benchmark.report.chart import Figure, nice_ticks, palette, place_point_labels
from benchmark.report.plot_caption import run_caption
from benchmark.scoring.summary_view import RunSummary

PLOT_FILE = "proactive.png"
PERCENT_TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)


def plot_proactive(run: RunSummary, path: Path) -> None:
    plot_recall_false_alarms(run.proactive, path, "one point per condition and cell", run_caption(run.manifest))


def plot_recall_false_alarms(
    conditions: dict[str, dict[str, dict]], path, subtitle: str, caption: str | None = None
) -> None:
    """`conditions`: legend entry (a condition, or a run in `wearsim compare`) -> point label -> a cell
    (`benchmark.scoring.proactive.cell_metrics`: its `recall` and `false_alarms_per_min`); `caption`: the
    candidate and judge of a run's own plot (`plot_caption.run_caption`)."""
    per_min = [
        cell["false_alarms_per_min"]
        for cells in conditions.values()
        for cell in cells.values()
        if cell["false_alarms_per_min"] is not None
    ]
    ticks = nice_ticks(max(per_min, default=1.0) * 1.15 or 1.0)
    right = ticks[-1]
    entries = [(condition, palette(i), "dot") for i, condition in enumerate(conditions)]
    legend_height = 16 * len(entries)
    top = 58 + (18 if caption else 0)
    fig = Figure(
        760,
        440 + legend_height + top - 58,
        f"Proactive: events caught on time against false alarms per minute\n{subtitle}; recall with its 95% interval"
        + (f"\n{caption}" if caption else ""),
    )
    ax = fig.axes(70, top, 30, 70 + legend_height, x=(-0.04 * right, right), y=(-0.02, 1.08))
    labels: list[tuple[float, float, str, str]] = []
    for i, cells in enumerate(conditions.values()):
        colour = palette(i)
        for name, cell in cells.items():
            recall, x = cell["recall"], cell["false_alarms_per_min"]
            if recall["rate"] is None or x is None:
                continue
            labels.append((*ax.proportion(x, recall, colour=colour), name, colour))
    place_point_labels(fig, labels, top, fig.height - 70 - legend_height)
    ax.frame()
    ax.x_ticks(ticks)
    ax.y_ticks(PERCENT_TICKS)
    ax.x_label("false alarms a minute of stream (quiet controls and events)")
    ax.y_label("events caught on time (recall)", beside=44)
    ax.legend(entries, corner="below")
    fig.save(path)
