"""Accuracy against cost over several runs (`wearsim compare A B [MORE ...] --html DIR`), and the
page that shows it beside accuracy against latency (`latency_plot.py`).

One point per run and condition: the candidate's spend per trial (USD, x)
against the condition's balanced Turn 2 accuracy (y). A point whose cost or
accuracy is unknown is not drawn; the page lists it with the reason.
"""

from __future__ import annotations

import base64
import io
from html import escape
from pathlib import Path

from benchmark.report.chart import INK, Figure, nice_ticks, palette
from benchmark.report.cost import usd
from benchmark.safe_files import refuse_links, write_atomic

PLOT_NAME = "accuracy_cost.png"
PAGE_NAME = "comparison.html"
COMPARE_OUTPUTS = (PLOT_NAME, PAGE_NAME, "accuracy_latency.png")


def plot_accuracy_cost(points: list[dict], path) -> None:
    """`points`: {run, label, condition, accuracy, cost_per_trial, measured}; drawn where both are known."""
    shown = [p for p in points if p["accuracy"] is not None and p["cost_per_trial"] is not None]
    fig = Figure(760, 500, "Balanced Turn 2 accuracy against the candidate's cost per trial\n"
                           "one point per run and condition; hollow: under half the cells scored")
    top_cost = max((p["cost_per_trial"] for p in shown), default=0.0)
    ticks = nice_ticks(top_cost * 1.1 if top_cost > 0 else 1e-6)
    ax = fig.axes(78, 62, 200, 60, x=(0, ticks[-1]), y=(0, 1.05))
    runs = list(dict.fromkeys(p["run"] for p in points))
    for point in shown:
        colour = palette(runs.index(point["run"]))
        x, y = point["cost_per_trial"], point["accuracy"]
        ax.marker(x, y, colour=colour, size=10)
        if not point["measured"]:
            ax.marker(x, y, colour="white", size=5)
        ax.text(x, y + 0.035, point["condition"], size=9, anchor="mb", colour=INK)
    if not shown:
        ax.note("no run has both a known cost and an accuracy")
    ax.frame()
    ax.x_ticks(ticks, [f"${t:g}" for t in ticks], angle=20, size=9)
    ax.y_ticks([0, 0.25, 0.5, 0.75, 1.0], ["0%", "25%", "50%", "75%", "100%"])
    ax.x_label("candidate cost per trial (USD)", below=42)
    ax.y_label("balanced Turn 2 accuracy", beside=48)
    drawn = {p["label"] for p in shown}
    labels = dict.fromkeys(p["label"] for p in points)
    if labels:
        ax.legend([(label[:24] + ("" if label in drawn else " (not drawn)"), palette(i), "dot")
                   for i, label in enumerate(labels)], corner="outside right")
        if len(drawn) < len(labels):
            fig.text(ax.right + 14, ax.top + 24 + 16 * len(labels), "not drawn: no known cost\nor no accuracy",
                     size=9, colour=INK)
    fig.save(path)


def _accuracy(point: dict) -> str:
    text = "n/a" if point["accuracy"] is None else f"{100 * point['accuracy']:.1f}%"
    return text + ("" if point["measured"] else " (under half scored)")


def _png(plot, data) -> bytes:
    buffer = io.BytesIO()
    plot(data, buffer)
    return buffer.getvalue()


def write_comparison_page(out_dir: Path, text: str, points: list[dict], runs: list[dict] | None = None) -> Path:
    """`out_dir`/accuracy_cost.png, with `runs` (`compare_table.run_row`s) accuracy_latency.png too, and a
    self-contained comparison.html (the comparison's text, the plots inline, and every point with its cost
    and accuracy or why it is missing). Returns the page's path."""
    from benchmark.report.latency_plot import PLOT_NAME as LATENCY_PLOT, plot_accuracy_latency

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    refuse_links(out_dir, COMPARE_OUTPUTS)
    png = _png(plot_accuracy_cost, points)
    write_atomic(out_dir / PLOT_NAME, png, out_dir)
    latency = ""
    if runs:
        latency_png = _png(plot_accuracy_latency, runs)
        write_atomic(out_dir / LATENCY_PLOT, latency_png, out_dir)
        latency = ('<h2>Accuracy against latency</h2><img alt="accuracy against latency" '
                   f'src="data:image/png;base64,{base64.b64encode(latency_png).decode("ascii")}">')
    rows = "".join(
        f"<tr><td>{escape(p['label'])}</td><td>{escape(p['condition'])}</td>"
        f"<td>{escape(_accuracy(p))}</td>"
        f"<td>{escape(usd(p['cost_per_trial']))}</td><td>{escape(usd(p['per_correct']))}</td>"
        f"<td>{escape('; '.join(p['unknown'][:3]))}</td></tr>" for p in points)
    page = "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8"><title>wearsim: comparison</title>',
        "<style>body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1000px;padding:1rem}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccd;padding:.25rem .5rem;text-align:left}"
        "pre{white-space:pre-wrap}img{max-width:100%;border:1px solid #dde}</style></head><body>",
        "<h1>wearsim compare</h1>", f"<pre>{escape(text)}</pre>", latency, "<h2>Accuracy against cost</h2>",
        f'<img alt="accuracy against cost" src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}">',
        "<table><tr><th>run</th><th>condition</th><th>balanced Turn 2 accuracy</th><th>candidate per trial</th>"
        f"<th>per correct Turn 2</th><th>cost unknown because</th></tr>{rows}</table>", "</body></html>", ""])
    return write_atomic(out_dir / PAGE_NAME, page, out_dir)


__all__ = ["COMPARE_OUTPUTS", "plot_accuracy_cost", "write_comparison_page"]
