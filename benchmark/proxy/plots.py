"""The proxy report's plots, drawn on the report's Agg figures (`new_figure`, `save`) from the report dict."""

from __future__ import annotations

import statistics
from pathlib import Path

from benchmark.report.plots import new_figure, save

PLOT_FILES = {
    "paired_accuracy": "proxy_paired_accuracy.png",
    "wer_histogram": "proxy_wer_histogram.png",
    "flips_by_channel": "proxy_flips_by_channel.png",
}
CATEGORY_COLOURS = {"speech": "#d97706", "scene": "#2b6cb0", "both": "#7c3aed", "neither": "#9ca3af",
                    "unknown": "#e5e7eb"}
CATEGORY_NAMES = {"speech": "speech perceived", "scene": "scene perceived", "both": "both perceived",
                  "neither": "neither (authored on both)", "unknown": "no provenance recorded"}
RUN_COLOURS = {"A": "#90b4d8", "B": "#2b6cb0"}


def _empty(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", fontsize=11, color="#555555", wrap=True,
            transform=ax.transAxes)
    ax.set_xticks([])
    ax.set_yticks([])


def plot_paired_accuracy(report: dict, path: Path) -> None:
    head = report["headline"]
    cells = report["cells"]
    rows = [("all pairs (balanced: current, prior)", head["difference"], head["ci_low"], head["ci_high"],
             head["scored_pairs"])]
    rows += [(f"shift: {r['group']}", r["difference"], r["ci_low"], r["ci_high"], r["pairs"])
             for r in report["by_cue_type"]]
    rows += [(f"target: {r['group']}", r["difference"], r["ci_low"], r["ci_high"], r["pairs"])
             for r in report["by_target_class"]]
    fig, (left, right) = new_figure(11, max(4.2, 0.38 * len(rows) + 1.8), dpi=110, ncols=2,
                                    gridspec_kw={"width_ratios": [1, 2.2]})
    values = [head["balanced_accuracy_a"], head["balanced_accuracy_b"]]
    left.bar([0, 1], [v or 0 for v in values], color=[RUN_COLOURS["A"], RUN_COLOURS["B"]])
    for x, v in enumerate(values):
        left.text(x, (v or 0) + 0.02, "n/a" if v is None else f"{100 * v:.1f}%", ha="center", fontsize=10)
    left.set_xticks([0, 1], ["A", "B"])
    left.set_ylim(0, 1.1)
    left.set_ylabel("balanced Turn 2 accuracy")
    left.axhline(0.5, color="#999999", linestyle="--", linewidth=1)
    left.set_title(f"condition {report['condition']}: {cells['scored_both']} of {cells['cells']} pairs\n"
                   "scored on both sides", fontsize=10)
    if head["scored_pairs"] == 0:
        _empty(right, "no pair is scored on both sides:\nno difference to show")
        right.set_title(f"Paired difference B - A (condition {report['condition']})", fontsize=10)
        save(fig, path)
        return
    ys = list(range(len(rows)))[::-1]
    for y, (_, diff, low, high, _) in zip(ys, rows):
        if diff is None:
            continue
        colour = "#2b6cb0" if y == ys[0] else "#4b5563"
        if low is not None and high is not None:
            right.plot([100 * low, 100 * high], [y, y], color=colour, linewidth=2)
        right.plot([100 * diff], [y], "o", color=colour, markersize=7)
    right.axvline(0, color="#999999", linestyle="--", linewidth=1)
    right.set_yticks(ys, [f"{name} (n={n})" for name, _, _, _, n in rows], fontsize=8)
    right.set_xlim(-105, 105)
    right.set_xlabel("B - A, percentage points (dot: difference; line: 95% paired bootstrap interval)")
    title = "Paired difference, resampling scenarios (10,000 draws)"
    if not head["is_measurement"]:
        title += "\nNOT A MEASUREMENT: fewer than half the pairs are scored on both sides"
    right.set_title(title, fontsize=10, color="#b91c1c" if not head["is_measurement"] else "black")
    save(fig, path)


def plot_wer_histogram(report: dict, path: Path) -> None:
    fig, ax = new_figure(7, 4.2, dpi=110)
    series = {label: [r["wer"] for r in report["channels"][label]["speech"]["rows"]] for label in ("A", "B")}
    series = {label: values for label, values in series.items() if values}
    if not series:
        _empty(ax, "no perceived speech in either run:\nno word error rate to show")
    else:
        top = max(1.0, max(max(v) for v in series.values()))
        bins = [i / 10 for i in range(int(top * 10) + 2)]
        labels = [f"run {k}: {len(v)} utterances, mean {sum(v) / len(v):.2f}, "
                  f"median {statistics.median(v):.2f} (dashed)" for k, v in series.items()]
        ax.hist(list(series.values()), bins=bins, label=labels, color=[RUN_COLOURS[k] for k in series],
                edgecolor="white")
        for label, values in series.items():
            ax.axvline(statistics.median(values), color="#222222" if label == "B" else RUN_COLOURS[label],
                       linestyle="--", linewidth=1.2)
        ax.set_xlabel("word error rate of the Whisper transcript against the authored utterance (0 = exact)")
        ax.set_ylabel("utterances (Turns 1 and 2)")
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.legend(fontsize=8, frameon=False)
    ax.set_title("Speech recognition error per perceived utterance", fontsize=10)
    save(fig, path)


def plot_flips_by_channel(report: dict, path: Path) -> None:
    flips = report["attribution"]["flips"]
    fig, axes = new_figure(11, 4.4, dpi=110, ncols=2)
    top, drawn = 1, []
    for ax, direction in zip(axes, ("A pass, B fail", "A fail, B pass")):
        chosen = [f for f in flips if f["direction"] == direction]
        ax.set_title(f"{direction}: {len(chosen)} flip{'s' * (len(chosen) != 1)}", fontsize=10)
        if not chosen:
            _empty(ax, "no flips in this direction" if report["cells"]["scored_both"] else
                   "no pair is scored on both sides,\nso there is no flip to count")
            continue
        cues = sorted({f["cue_type"] for f in chosen})
        bottom = [0] * len(cues)
        for category, colour in CATEGORY_COLOURS.items():
            heights = [sum(f["cue_type"] == c and f["category"] == category for f in chosen) for c in cues]
            if any(heights):
                ax.bar(range(len(cues)), heights, bottom=bottom, color=colour, label=CATEGORY_NAMES[category],
                       width=0.6)
                bottom = [b + h for b, h in zip(bottom, heights)]
        top = max(top, max(bottom))
        drawn.append(ax)
        ax.set_xlim(-0.6 - 0.5 * (len(cues) < 3), len(cues) - 0.4 + 0.5 * (len(cues) < 3))
        ax.set_xticks(range(len(cues)), [c.replace("_", " ") for c in cues], rotation=25, ha="right", fontsize=8)
        ax.legend(fontsize=8, frameon=False, loc="upper right")
    for ax in drawn:
        ax.set_ylabel("flipped pairs")
        ax.set_ylim(0, top * 1.35)
        ax.yaxis.get_major_locator().set_params(integer=True)
    fig.suptitle("Flips by shift type, coloured by which channels were perceived on Turns 1-2", fontsize=10)
    save(fig, path)


def draw_plots(report: dict, directory: Path) -> dict[str, Path]:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    drawn = {}
    for name, draw in (("paired_accuracy", plot_paired_accuracy), ("wer_histogram", plot_wer_histogram),
                       ("flips_by_channel", plot_flips_by_channel)):
        drawn[name] = directory / PLOT_FILES[name]
        draw(report, drawn[name])
    return drawn
