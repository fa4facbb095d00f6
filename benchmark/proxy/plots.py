"""The proxy report's plots, drawn with the report's `chart` from the report dict."""

from __future__ import annotations

import statistics
from pathlib import Path

from benchmark.report.chart import INK, Figure, nice_ticks, text_width

PLOT_FILES = {
    "paired_accuracy": "proxy_paired_accuracy.png",
    "wer_histogram": "proxy_wer_histogram.png",
    "flips_by_channel": "proxy_flips_by_channel.png",
}
CATEGORY_COLOURS = {
    "speech": "#d97706",
    "scene": "#2b6cb0",
    "both": "#7c3aed",
    "neither": "#9ca3af",
    "unknown": "#e5e7eb",
}
CATEGORY_NAMES = {
    "speech": "speech perceived",
    "scene": "scene perceived",
    "both": "both perceived",
    "neither": "neither (authored on both)",
    "unknown": "no provenance recorded",
}
RUN_COLOURS = {"A": "#90b4d8", "B": "#2b6cb0"}
CHANCE = "#999999"
WARNING = "#b91c1c"


def plot_paired_accuracy(report: dict, path: Path) -> None:
    head = report["headline"]
    cells = report["cells"]
    rows = [
        (
            "all pairs (balanced: current, prior)",
            head["difference"],
            head["ci_low"],
            head["ci_high"],
            head["scored_pairs"],
        )
    ]
    rows += [
        (f"shift: {r['group']}", r["difference"], r["ci_low"], r["ci_high"], r["pairs"]) for r in report["by_cue_type"]
    ]
    rows += [
        (f"target: {r['group']}", r["difference"], r["ci_low"], r["ci_high"], r["pairs"])
        for r in report["by_target_class"]
    ]
    names = [f"{name} (n={n})" for name, _, _, _, n in rows]
    height = round(max(440, 24 * len(rows) + 170))
    fig = Figure(1200, height)
    left = fig.axes(80, 70, 920, 40, x=(-0.6, 1.6), y=(0, 1.1))
    values = [head["balanced_accuracy_a"], head["balanced_accuracy_b"]]
    for x, (run, value) in enumerate(zip("AB", values)):
        left.bar(x, value or 0, colour=RUN_COLOURS[run])
        left.text(x, (value or 0) + 0.02, "n/a" if value is None else f"{100 * value:.1f}%", size=12, anchor="mb")
    left.hline(0.5, colour=CHANCE, width=1, dash=(5, 3))
    left.frame()
    left.x_ticks([0, 1], ["A", "B"])
    left.y_ticks([0, 0.25, 0.5, 0.75, 1.0])
    left.y_label("balanced Turn 2 accuracy", beside=44)
    left.title(
        f"condition {report['condition']}: {cells['scored_both']} of {cells['cells']} pairs\nscored on both sides"
    )
    right = fig.axes(350 + text_width("\n".join(names), 10), 70, 30, 60, x=(-105, 105), y=(len(rows) - 0.5, -0.5))
    title = "Paired difference, resampling scenarios (10,000 draws)"
    if not head["is_measurement"]:
        title += "\nNOT A MEASUREMENT: fewer than half the pairs are scored on both sides"
    right.frame()
    if head["scored_pairs"] == 0:
        right.note("no pair is scored on both sides:\nno difference to show")
        right.title(f"Paired difference B - A (condition {report['condition']})")
        fig.save(path)
        return
    right.vline(0, colour=CHANCE, width=1, dash=(5, 3))
    for y, (_, diff, low, high, _) in enumerate(rows):
        if diff is None:
            continue
        colour = "#2b6cb0" if y == 0 else "#4b5563"
        if low is not None and high is not None:
            right.line([(100 * low, y), (100 * high, y)], colour=colour, width=2)
        right.marker(100 * diff, y, colour=colour, size=8)
    right.y_ticks(list(range(len(rows))), names, size=10)
    right.x_ticks([-100, -50, 0, 50, 100])
    right.x_label("B - A, percentage points (dot: difference; line: 95% paired bootstrap interval)")
    right.title(title, colour=INK if head["is_measurement"] else WARNING)
    fig.save(path)


def plot_wer_histogram(report: dict, path: Path) -> None:
    series = {label: [r["wer"] for r in report["channels"][label]["speech"]["rows"]] for label in ("A", "B")}
    series = {label: values for label, values in series.items() if values}
    fig = Figure(780, 460, "Speech recognition error per perceived utterance")
    if not series:
        ax = fig.axes(70, 40, 20, 60)
        ax.frame()
        ax.note("no perceived speech in either run:\nno word error rate to show")
        fig.save(path)
        return
    top = max(1.0, max(max(v) for v in series.values()))
    bins = int(top * 10) + 1  # tenths: [0, 0.1), [0.1, 0.2), ... with the top value in the last
    counts = {
        label: [sum(min(int(v * 10), bins - 1) == b for v in values) for b in range(bins)]
        for label, values in series.items()
    }
    highest = max(max(c) for c in counts.values())
    ticks = nice_ticks(highest, integer=True)
    ax = fig.axes(70, 40, 20, 60, x=(-0.05, bins / 10 + 0.05), y=(0, ticks[-1] * 1.25))
    width = 0.08 / len(series)
    for k, (label, per_bin) in enumerate(counts.items()):
        for b, count in enumerate(per_bin):
            ax.bar(b / 10 + 0.01 + width * (k + 0.5), count, width=width, colour=RUN_COLOURS[label])
        ax.vline(
            statistics.median(series[label]), colour=INK if label == "B" else RUN_COLOURS[label], width=1.2, dash=(5, 3)
        )
    ax.frame()
    ax.x_ticks([round(0.2 * i, 1) for i in range(int(bins / 2) + 1)])
    ax.y_ticks(ticks)
    ax.x_label("word error rate of the Whisper transcript against the authored utterance (0 = exact)")
    ax.y_label("utterances (Turns 1 and 2)", beside=44)
    ax.legend(
        [
            (
                f"run {k}: {len(v)} utterances, mean {sum(v) / len(v):.2f}, median {statistics.median(v):.2f} (dashed)",
                RUN_COLOURS[k],
                "patch",
            )
            for k, v in series.items()
        ],
        corner="upper right",
    )
    fig.save(path)


def plot_flips_by_channel(report: dict, path: Path) -> None:
    flips = report["attribution"]["flips"]
    panels = []
    for direction in ("A pass, B fail", "A fail, B pass"):
        chosen = [f for f in flips if f["direction"] == direction]
        cues = sorted({f["cue_type"] for f in chosen})
        stacks = {
            category: [sum(f["cue_type"] == c and f["category"] == category for f in chosen) for c in cues]
            for category in CATEGORY_COLOURS
        }
        panels.append((direction, chosen, cues, stacks))
    top = max([1] + [sum(s[i] for s in stacks.values()) for _, _, cues, stacks in panels for i in range(len(cues))])
    ticks = nice_ticks(top, integer=True)
    labels = [c.replace("_", " ") for _, _, cues, _ in panels for c in cues]
    bottom = 56 + 0.36 * max([text_width(t) for t in labels] or [0])
    fig = Figure(
        1200, round(380 + bottom), "Flips by shift type, coloured by which channels were perceived on Turns 1-2"
    )
    for p, (direction, chosen, cues, stacks) in enumerate(panels):
        slots = max(3, len(cues))
        ax = fig.axes(70 + 600 * p, 60, 630 - 600 * p, bottom, x=(-0.6, slots - 0.4), y=(0, ticks[-1] * 1.35))
        ax.frame()
        ax.title(f"{direction}: {len(chosen)} flip{'s' * (len(chosen) != 1)}")
        if not chosen:
            ax.note(
                "no flips in this direction"
                if report["cells"]["scored_both"]
                else "no pair is scored on both sides,\nso there is no flip to count"
            )
            continue
        offset = (slots - len(cues)) / 2
        base = [0] * len(cues)
        drawn = []
        for category, colour in CATEGORY_COLOURS.items():
            heights = stacks[category]
            if any(heights):
                for i, h in enumerate(heights):
                    ax.bar(i + offset, h, bottom=base[i], colour=colour, width=0.6)
                base = [b + h for b, h in zip(base, heights)]
                drawn.append((CATEGORY_NAMES[category], colour, "patch"))
        ax.x_ticks([i + offset for i in range(len(cues))], [c.replace("_", " ") for c in cues], angle=25, size=10)
        ax.y_ticks(ticks)
        ax.y_label("flipped pairs")
        ax.legend(drawn, corner="upper right")
    fig.save(path)


def draw_plots(report: dict, directory: Path) -> dict[str, Path]:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    drawn = {}
    for name, draw in (
        ("paired_accuracy", plot_paired_accuracy),
        ("wer_histogram", plot_wer_histogram),
        ("flips_by_channel", plot_flips_by_channel),
    ):
        drawn[name] = directory / PLOT_FILES[name]
        draw(report, drawn[name])
    return drawn
