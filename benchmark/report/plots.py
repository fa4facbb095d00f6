"""Draw the report plots (PNG, with `chart`) from a run's summary (`RunSummary`)."""

from __future__ import annotations

from pathlib import Path

from benchmark.report.chart import INK, Figure, blues, ink_on, nice_ticks, palette, place_point_labels, text_width
from benchmark.report.findings import is_measurement, scored_cells, staleness_without_frames
from benchmark.report.plot_caption import run_caption
from benchmark.scoring.summary_view import RunSummary
from benchmark.scoring.trials import LABELS
from core.safe_files import make_dirs

PLOT_FILES = ("balanced_accuracy.png", "accuracy_by_cue_type.png", "confusion.png")


PERCENT_TICKS = [0, 0.25, 0.5, 0.75, 1.0]
CHANCE = "#999999"
UNMEASURED = "#bbbbbb"
MAX_ROWS = 40  # shift types drawn in one plot  # the bar of a condition with under half its cells scored
WARN = "#b00020"


def not_measured_title(run: RunSummary, conditions: list[str]) -> str:
    """The warning line of a plot that shows a score of a condition with under half its cells scored."""
    short = [
        f"{name} {scored_cells(run, name)[0]} of {scored_cells(run, name)[1]}"
        for name in conditions
        if not is_measurement(run, name)
    ]
    return ("\nNOT A MEASUREMENT (under half scored): " + ", ".join(short)) if short else ""


def plot_balanced_accuracy(run: RunSummary, path: Path) -> None:
    names = list(run.conditions)
    ranking = run.primary.condition
    labels = [n + (" (ranking)" if n == ranking else "") for n in names]
    turned = len(names) > 3
    bottom = 60 + (0.36 * max(text_width(t) for t in labels) if turned else 0)
    warning = not_measured_title(run, names)
    top = 76 + (18 if warning else 0)
    fig = Figure(
        max(600, 140 * len(names) + 200),
        round(440 + bottom - 60 + top - 58),
        "Balanced accuracy (current, prior) per condition\n"
        + run_caption(run.manifest)
        + "\n"
        + (
            "95% CI: bootstrap over scenarios, 10,000 draws"
            if all(run.conditions[n].ci_method == "bootstrap" for n in names)
            else "95% CI: per-class Wilson bounds combined where scenarios are few (findings.md)"
        )
        + warning,
        title_colour=WARN if warning else INK,
    )
    ax = fig.axes(70, top, 20, bottom, x=(-0.6, len(names) - 0.4), y=(0, 1.12))
    for x, name in enumerate(names):
        cell = run.conditions[name]
        value = cell.balanced_accuracy
        measured = is_measurement(run, name)
        ax.bar(x, value or 0, colour=("#2b6cb0" if name == ranking else "#90b4d8") if measured else UNMEASURED)
        if value is not None and cell.ci_low is not None and cell.ci_high is not None:
            ax.interval(x, cell.ci_low, cell.ci_high, cap=6)
        shown = "n/a" if value is None else f"{100 * value:.1f}%" + ("" if measured else "*")
        ax.text(x, 0.02, shown, size=12, anchor="mb", colour="white" if value and value > 0.1 else INK)
    ax.hline(0.5, colour=CHANCE, width=1, dash=(5, 3))
    ax.frame()
    ax.legend(
        [
            ("0.5 (chance for two classes)", CHANCE, "dashed"),
            *([("* not a measurement: under half the cells scored", UNMEASURED, "patch")] if warning else []),
        ]
    )
    ax.x_ticks(list(range(len(names))), labels, angle=20 if turned else 0)
    ax.y_ticks(PERCENT_TICKS)
    ax.y_label("balanced Turn 2 accuracy", beside=44)
    fig.save(path)


def plot_accuracy_by_cue_type(run: RunSummary, path: Path) -> None:
    data = run.by_cue_type
    names = list(data)
    cues = sorted({cue for per in data.values() for cue in per})
    left_out = 0
    if len(cues) > MAX_ROWS:  # a bank of thousands of shift types: the most played ones, the rest counted
        trials = {cue: sum((per.get(cue) or {}).get("n", 0) for per in data.values()) for cue in cues}
        kept = sorted(cues, key=lambda cue: (-trials[cue], cue))[:MAX_ROWS]
        left_out, cues = len(cues) - len(kept), sorted(kept)
    band = 0.8 / max(1, len(names))
    rows = max(1, len(cues)) * max(1, len(names))
    title = "Accuracy per shift type (cue_type)"
    if len(names) == 1:
        title += f", condition {names[0]}"
    title += "\n" + run_caption(run.manifest)
    if left_out:
        title += f"\nthe {MAX_ROWS} with the most scored trials; {left_out} more in summary.json"
    top = (76 if len(names) > 1 else 58) + (18 if left_out else 0)
    left = 18 + max([text_width(c) for c in cues] or [40])
    fig = Figure(760, round(max(260, top + 56 + 18 * rows + 8 * len(cues))), title)
    ax = fig.axes(left, top, 110, 56, x=(0, 1.0), y=(max(1, len(cues)) - 0.5, -0.5))
    if not cues:
        ax.frame()
        ax.note("no scored trials: no shift type to show")
        fig.save(path)
        return
    for i, name in enumerate(names):
        for c, cue in enumerate(cues):
            y = c + (i - (len(names) - 1) / 2) * band
            cell = data[name].get(cue) or {}
            value = cell.get("rate")
            ax.barh(y, value or 0, height=band * 0.9, colour=palette(i))
            if value is not None and cell.get("ci_low") is not None:
                ax.interval(
                    y, cell["ci_low"], cell["ci_high"], horizontal=True, cap=min(4, 30 * band / 2), colour="#444444"
                )
            ax.text(
                1.0,
                y,
                "  no trials" if value is None else f"  {100 * value:.0f}% (n={cell['n']})",
                size=10,
                anchor="lm",
            )
    ax.frame()
    if len(names) > 1:
        ax.legend([(name, palette(i), "patch") for i, name in enumerate(names)], corner="above")
    ax.y_ticks(list(range(len(cues))), cues)
    ax.x_ticks(PERCENT_TICKS)
    ax.x_label("Turn 2 accuracy (all target contexts), 95% Wilson interval")
    fig.save(path)


def plot_confusion(run: RunSummary, path: Path) -> None:
    condition = run.primary.condition
    data = run.confusion.get(condition, {})
    cols = [*LABELS, "unscored"]
    grid = [[data.get(t, {}).get(c, 0) for c in cols] for t in LABELS]
    top = max(1, max(max(r) for r in grid))
    fig = Figure(600, 418, f"Confusion, condition {condition} (trials; darker is more)\n{run_caption(run.manifest)}")
    ax = fig.axes(100, 58, 20, 60, x=(-0.5, len(cols) - 0.5), y=(len(LABELS) - 0.5, -0.5))
    for i, row in enumerate(grid):
        for j, value in enumerate(row):
            fill = blues(value / top)
            ax.rect(j - 0.5, i - 0.5, j + 0.5, i + 0.5, fill, outline="white")
            ax.text(j, i, str(value), size=14, colour=ink_on(fill), anchor="mm")
    ax.x_ticks(list(range(len(cols))), cols)
    ax.y_ticks(list(range(len(LABELS))), LABELS)
    ax.x_label("Turn 2 judge label")
    ax.y_label("target context", beside=80)
    fig.save(path)


def plot_staleness(run: RunSummary, path: Path) -> None:
    """Per condition: Turn 2 accuracy and the earlier-scene rate against the Turn 2 gap."""
    series = run.by_staleness
    gaps = sorted({int(g) for per in series.values() for g in per}) or [0]
    span = max(1, gaps[-1] - gaps[0])
    entries = []
    for i, condition in enumerate(series):
        entries += [
            (f"{condition}: Turn 2 accuracy", palette(2 * i), "dot"),
            (f"{condition}: answered from the earlier scene", palette(2 * i + 1), "square"),
        ]
    legend_height = 16 * len(entries)
    warning = not_measured_title(run, list(series))
    if staleness_without_frames(run):
        warning += "\nNO TURN 2 FRAMES: the gap cannot change what the model saw"
    top = 58 + 18 * warning.count("\n")
    fig = Figure(
        700,
        420 + legend_height + top - 40,
        "Staleness sweep (95% Wilson intervals; n scored per point)\n" + run_caption(run.manifest) + warning,
        title_colour=WARN if warning else INK,
    )
    ax = fig.axes(70, top, 20, 70 + legend_height, x=(gaps[0] - 0.06 * span, gaps[-1] + 0.06 * span), y=(-0.02, 1.05))
    lines = (("accuracy", None, "o"), ("earlier_scene", (5, 3), "s"))
    for i, per_gap in enumerate(series.values()):
        for k, (key, dash, shape) in enumerate(lines):
            colour = palette(2 * i + k)
            shift = (2 * i + k - (2 * len(series) - 1) / 2) * 0.008 * span  # side by side, intervals apart
            points = []
            for gap, cells in per_gap.items():
                cell = cells[key]
                if cell["rate"] is None:
                    continue
                points.append((int(gap) + shift, cell["rate"], cell["n"]))
                if cell["ci_low"] is not None:
                    ax.interval(int(gap) + shift, cell["ci_low"], cell["ci_high"], colour=colour, cap=4)
            if len(points) > 1:
                ax.line([(x, y) for x, y, _ in points], colour=colour, dash=dash)
            for x, y, n in points:
                ax.marker(x, y, colour=colour, shape=shape)
                ax.text(x, y, f"    n={n}", size=9, anchor="lm", colour=colour)
    ax.frame()
    ax.x_ticks(gaps)
    ax.y_ticks(PERCENT_TICKS)
    ax.x_label("Turn 2 speech starts this many ms after the scene change")
    ax.y_label("share of scored trials", beside=44)
    ax.legend(entries, corner="below")
    fig.save(path)


def plot_frame_policies(run: RunSummary, path: Path) -> None:
    """Per condition and policy: Turn 2 accuracy and the stale-frame rate against the frames sent a minute."""
    series = run.by_frame_policy
    rates = [
        cells["frames_per_minute"]
        for per in series.values()
        for cells in per.values()
        if cells.get("frames_per_minute") is not None
    ]
    ticks = nice_ticks(max(rates, default=60) * 1.15 or 1)
    right = ticks[-1]
    entries = []
    for i, condition in enumerate(series):
        entries += [
            (f"{condition}: Turn 2 accuracy", palette(2 * i), "dot"),
            (f"{condition}: newest frame showed the earlier scene", palette(2 * i + 1), "square"),
        ]
    legend_height = 16 * len(entries)
    warning = not_measured_title(run, list(series))
    top = 76 + 18 * warning.count("\n")
    gaps = sorted({int(g) for per in series.values() for cells in per.values() for g in cells.get("by_gap") or {}})
    where = (
        f"; Turn 2 gaps {', '.join(map(str, gaps))} ms pooled"
        if len(gaps) > 1
        else f"; Turn 2 gap {gaps[0]} ms"
        if gaps
        else ""
    )
    fig = Figure(
        760,
        440 + legend_height + top - 58,
        "Frame policy: accuracy and stale frames against frames sent\n95% Wilson intervals"
        + where
        + "\n"
        + run_caption(run.manifest)
        + warning,
        title_colour=WARN if warning else INK,
    )
    ax = fig.axes(70, top, 30, 70 + legend_height, x=(-0.04 * right, right), y=(-0.02, 1.08))
    labels: list[tuple[float, float, str, str]] = []  # point (pixels), text, colour: placed after every point
    for i, per in enumerate(series.values()):
        for k, (key, shape) in enumerate((("accuracy", "o"), ("stale_frame_rate", "s"))):
            colour = palette(2 * i + k)
            shift = (2 * i + k - (2 * len(series) - 1) / 2) * 0.012 * right  # side by side, intervals apart
            for policy, cells in per.items():
                cell, x = cells.get(key), cells.get("frames_per_minute")
                if not cell or cell["rate"] is None or x is None:
                    continue
                labels.append((*ax.proportion(x + shift, cell, colour=colour, shape=shape), policy, colour))
    place_point_labels(fig, labels, top, fig.height - 70 - legend_height)
    ax.frame()
    ax.x_ticks(ticks)
    ax.y_ticks(PERCENT_TICKS)
    ax.x_label("frames sent a minute of stream time (Turns 1 and 2)")
    ax.y_label("share of Turn 2 questions", beside=44)
    ax.legend(entries, corner="below")
    fig.save(path)


def draw_plots(run: RunSummary, directory: Path) -> list[Path]:
    make_dirs(directory)
    from benchmark.report.proactive_findings import is_proactive

    if is_proactive(run):  # a proactive run: its one plot, none of the question-and-answer ones
        from benchmark.report.proactive_plot import PLOT_FILE, plot_proactive

        for stale in PLOT_FILES:  # a run dir reused from a question-and-answer run keeps no plot of it
            (directory / stale).unlink(missing_ok=True)
        plot_proactive(run, directory / PLOT_FILE)
        return [directory / PLOT_FILE]
    paths = [directory / name for name in PLOT_FILES]
    plot_balanced_accuracy(run, paths[0])
    plot_accuracy_by_cue_type(run, paths[1])
    plot_confusion(run, paths[2])
    if run.by_staleness:
        paths.append(directory / "staleness.png")
        plot_staleness(run, paths[-1])
    if run.by_frame_policy:
        paths.append(directory / "frame_policy.png")
        plot_frame_policies(run, paths[-1])
    return paths
