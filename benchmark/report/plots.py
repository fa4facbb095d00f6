"""Draw the report plots with matplotlib's headless Agg backend, from a summary dict."""

from __future__ import annotations

from pathlib import Path

from benchmark.scoring.trials import LABELS

PLOT_FILES = ("balanced_accuracy.png", "accuracy_by_cue_type.png", "confusion.png")


def new_figure(width: float, height: float, *, dpi: int = 120, **layout):
    """(figure, axes) on a headless Agg canvas, outside pyplot: no global
    figure list, nothing to close. `layout` goes to `Figure.subplots` (e.g.
    `ncols=2`); the report's and the proxy report's plots are drawn on these."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=dpi)
    FigureCanvasAgg(fig)
    return fig, fig.subplots(**layout)


def save(fig, path: Path) -> None:
    """Fit the layout and write the PNG, drawing the figure once.

    `tight_layout` leaves a placeholder layout engine behind, and with one set
    `savefig` draws the whole figure an extra time before the real draw; the
    engine is dropped after the layout is done (the pixels are the same).
    PNG compression level 1: files 10-15% larger, two thirds of the encoding time.
    """
    fig.tight_layout()
    fig.set_layout_engine(None)
    fig.savefig(path, pil_kwargs={"compress_level": 1})


def preload() -> None:
    """Import what drawing needs and draw a small throwaway figure (it loads the fonts
    and the PNG writer): a report worker started early then has only the plots left."""
    import io

    fig, ax = new_figure(2, 1)
    ax.bar([0], [1])
    ax.set_title("warm-up", fontweight="bold")
    save(fig, io.BytesIO())


def palette(index: int):
    """Colour `index` of matplotlib's tab10 cycle."""
    from matplotlib import colormaps

    return colormaps["tab10"](index % 10)


def _err(value: float | None, low: float | None, high: float | None) -> tuple[float, float]:
    if value is None or low is None or high is None:
        return 0.0, 0.0
    return max(0.0, value - low), max(0.0, high - value)


def plot_balanced_accuracy(summary: dict, path: Path) -> None:
    names = list(summary["conditions"])
    values = [summary["conditions"][n]["balanced_accuracy"] for n in names]
    errs = [_err(v, summary["conditions"][n]["ci_low"], summary["conditions"][n]["ci_high"])
            for n, v in zip(names, values)]
    ranking = summary["primary"]["condition"]
    fig, ax = new_figure(max(5.0, 1.4 * len(names) + 2), 4.2)
    xs = range(len(names))
    colours = ["#2b6cb0" if n == ranking else "#90b4d8" for n in names]
    ax.bar(xs, [v or 0 for v in values], color=colours,
           yerr=[[e[0] for e in errs], [e[1] for e in errs]], capsize=6, ecolor="#222222")
    for x, v in zip(xs, values):
        ax.text(x, 0.02, "n/a" if v is None else f"{100 * v:.1f}%", ha="center", va="bottom",
                color="white" if v and v > 0.1 else "#222222", fontsize=10, fontweight="bold")
    ax.axhline(0.5, color="#999999", linestyle="--", linewidth=1, label="0.5 (chance for two classes)")
    ax.legend(loc="upper left", fontsize=8, frameon=False)
    ax.set_xticks(list(xs), [n + (" (ranking)" if n == ranking else "") for n in names],
                  rotation=20 if len(names) > 3 else 0, ha="right" if len(names) > 3 else "center")
    ax.set_ylim(0, 1.12)
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.set_ylabel("balanced Turn 2 accuracy")
    ax.set_title("Balanced accuracy (current, prior) per condition\n"
                 "95% CI: bootstrap over scenarios, 10,000 draws", fontsize=10)
    save(fig, path)


def plot_accuracy_by_cue_type(summary: dict, path: Path) -> None:
    data = summary["by_cue_type"]
    names = list(data)
    cues = sorted({cue for per in data.values() for cue in per})
    height = 0.8 / max(1, len(names))
    fig, ax = new_figure(8, max(3.0, 0.32 * len(cues) * max(1, len(names)) + 1.6))
    for i, name in enumerate(names):
        ys = [c + (i - (len(names) - 1) / 2) * height for c in range(len(cues))]
        cells = [data[name].get(cue) for cue in cues]
        vals = [(c or {}).get("accuracy") for c in cells]
        errs = [_err(v, (c or {}).get("ci_low"), (c or {}).get("ci_high")) for v, c in zip(vals, cells)]
        ax.barh(ys, [v or 0 for v in vals], height=height * 0.9, color=palette(i), label=name,
                xerr=[[e[0] for e in errs], [e[1] for e in errs]], capsize=3, ecolor="#444444")
        for y, v, c in zip(ys, vals, cells):
            text = "no trials" if v is None else f"{100 * v:.0f}% (n={c['n']})"
            ax.text(1.02, y, text, va="center", fontsize=7)
    ax.set_yticks(range(len(cues)), cues)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.25)
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.set_xlabel("Turn 2 accuracy (all target contexts), 95% Wilson interval")
    if len(names) > 1:
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=min(len(names), 4), fontsize=8,
                  frameon=False)
        ax.set_title("Accuracy per shift type (cue_type)", fontsize=10, pad=22)
    else:
        ax.set_title(f"Accuracy per shift type (cue_type), condition {names[0] if names else '-'}", fontsize=10)
    save(fig, path)


def plot_confusion(summary: dict, path: Path) -> None:
    condition = summary["primary"]["condition"]
    data = summary["confusion"].get(condition, {})
    cols = [*LABELS, "unscored"]
    grid = [[data.get(t, {}).get(c, 0) for c in cols] for t in LABELS]
    fig, ax = new_figure(6.4, 4.6)
    image = ax.imshow(grid, cmap="Blues", vmin=0, vmax=max(1, max(max(r) for r in grid)))
    top = max(1, max(max(r) for r in grid))
    for i, row in enumerate(grid):
        for j, value in enumerate(row):
            ax.text(j, i, str(value), ha="center", va="center", fontsize=11,
                    color="white" if value > top / 2 else "#111111")
    ax.set_xticks(range(len(cols)), cols)
    ax.set_yticks(range(len(LABELS)), LABELS)
    ax.set_xlabel("Turn 2 judge label")
    ax.set_ylabel("target context")
    ax.set_title(f"Confusion, condition {condition} (trials)", fontsize=10)
    from matplotlib.ticker import MaxNLocator

    bar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    bar.locator = MaxNLocator(integer=True)
    bar.update_ticks()
    save(fig, path)


def plot_staleness(summary: dict, path: Path) -> None:
    """Per condition: Turn 2 accuracy and the earlier-scene rate against the Turn 2 gap."""
    fig, ax = new_figure(7, 4.2)
    for i, (condition, gaps) in enumerate(summary["by_staleness"].items()):
        xs = [int(g) for g in gaps]
        for key, style, label in (("accuracy", "-o", "Turn 2 accuracy"),
                                  ("earlier_scene", "--s", "answered from the earlier scene")):
            cells = [gaps[g][key] for g in gaps]
            values = [c["accuracy"] for c in cells]
            errs = [_err(v, c["ci_low"], c["ci_high"]) for v, c in zip(values, cells)]
            ax.errorbar(xs, [float("nan") if v is None else v for v in values],
                        yerr=[[e[0] for e in errs], [e[1] for e in errs]], fmt=style, color=palette(i),
                        capsize=4, label=f"{condition}: {label}")
    ax.set_ylim(-0.02, 1.05)
    ax.set_xlabel("Turn 2 speech starts this many ms after the scene change")
    ax.set_ylabel("share of scored trials")
    ax.set_title("Staleness sweep (95% Wilson intervals)", fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="best")
    save(fig, path)


def draw_plots(summary: dict, directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / name for name in PLOT_FILES]
    plot_balanced_accuracy(summary, paths[0])
    plot_accuracy_by_cue_type(summary, paths[1])
    plot_confusion(summary, paths[2])
    if summary.get("by_staleness"):
        paths.append(directory / "staleness.png")
        plot_staleness(summary, paths[-1])
    return paths
