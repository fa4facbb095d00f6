"""agreement.json, agreement.md and the confusion-matrix PNG of `wearsim agreement`.

Written into the run dir by the safe writers (temp file and rename, never
through a link). Turn 2's files are `agreement.json`, `agreement.md` and
`agreement.png` (the judge behind balanced accuracy, the one findings.md
and the viewer name); Turn 3's and the remarks' carry the kind in their
names (`agreement_turn3.json`, ...).
"""

from __future__ import annotations

import json
from pathlib import Path

from benchmark.report.human_check import agreement_stem
from benchmark.report.text_format import one_line, table
from core.safe_files import refuse_links, write_atomic


def output_names(what: str) -> tuple[str, str, str]:
    stem = agreement_stem(what)
    return f"{stem}.json", f"{stem}.md", f"{stem}.png"


def _number(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _kappa(row: dict, low: str = "kappa_ci_low", high: str = "kappa_ci_high", value: str = "kappa") -> str:
    if row.get(value) is None:
        return "n/a"
    star = "*" if row.get("ci_method") == "wilson" else ""
    return f"{row[value]:.2f} [{_number(row.get(low))}, {_number(row.get(high))}]{star}"


def _cell(cell: dict) -> str:
    if cell.get("rate") is None:
        return "n/a"
    star = "*" if cell.get("ci_method") == "wilson" else ""
    return f"{cell['rate']:.0%} ({cell['k']}/{cell['n']}) [{cell['ci_low']:.0%}, {cell['ci_high']:.0%}]{star}"


def render_agreement(result: dict, run_name: str) -> str:
    what = {"turn2": "Turn 2 replies", "turn3": "Turn 3 replies", "remarks": "proactive remarks"}[result["what"]]
    sample = (
        "a disagreement sample (the replies the run's judge and the offline judge disagree on, or the offline "
        "judge is unsure of, first; never pooled with a random sample)"
        if result.get("sample") == "disagreements"
        else "a random sample (stratified by the run judge's label and by scenario)"
    )
    lines = [
        f"# Judges against people: {one_line(run_name)}, {what}",
        "",
        f"**{one_line(result['verdict']['text'])}**",
        "",
        f"Sample: {sample}.",
        "",
        f"{result['human_labels']} human labels by {len(result['annotators'])} "
        f"{'person' if len(result['annotators']) == 1 else 'people'} "
        f"({', '.join(one_line(a) for a in result['annotators'])}) on {result['items_labelled']} of "
        f"{result['items']} items. The people's majority of an item is a label two or more of them gave it: "
        f"{result['majority_items']} items have one; {result['cannot_tell']} 'cannot tell' "
        f"label{'' if result['cannot_tell'] == 1 else 's'} and "
        f"{result['no_majority']} items without one ({result.get('one_person', 0)} labelled by one person "
        "only, the others split) are left out of the comparisons with the majority.",
        "",
        f"Intervals: {result['interval_rule']}. `*` marks the Wilson fallback.",
        "",
    ]
    lines += ["## Each judge against the people's majority", ""]
    rows = [
        [one_line(r["judge"]), str(r["n"]), str(r["unscored"]), _kappa(r), _cell(r["agreement"])]
        for r in result["against_people"]
    ]
    lines += [*table(["judge", "items", "judge unscored", "kappa [95%]", "agreement [95%]"], rows), ""]
    for row in result["against_people"]:
        lines += [f"### {one_line(row['judge'])}: per label", ""]
        lines += [
            *table(
                ["label", "precision [95%]", "recall [95%]"],
                [[label, _cell(v["precision"]), _cell(v["recall"])] for label, v in row["per_label"].items()],
            ),
            "",
        ]
    lines += ["## Every pair of raters (Cohen's kappa)", ""]
    if result.get("pairs_left_out"):
        lines += [f"Left out: {result['pairs_left_out']}.", ""]
    lines += [
        *table(
            ["rater", "rater", "items", "kappa [95%]", "agreement [95%]"],
            [
                [one_line(p["a"]), one_line(p["b"]), str(p["n"]), _kappa(p), _cell(p["agreement"])]
                for p in result["pairs"]
            ],
        ),
        "",
    ]
    fleiss = result["fleiss"]
    if fleiss["kappa"] is None:
        lines += [f"Fleiss' kappa over the annotators: n/a ({fleiss.get('note') or 'undefined'}).", ""]
    else:
        lines += [
            f"Fleiss' kappa over the {fleiss['raters']} annotators, on the {fleiss['n']} items all of them "
            f"labelled: {_kappa(fleiss, 'ci_low', 'ci_high')}.",
            "",
        ]
    lines += ["## Where a judge and the people disagree", ""]
    if result["disagreements"]:
        lines += [
            f"- [{one_line(d['trial_key'])}]({d['link']}) {one_line(d['judge'])}: "
            f"`{d['judge_label']}`, people: `{d['majority']}` ("
            + ", ".join(f"{one_line(p)} {label}" for p, label in d["people"].items())
            + ")"
            for d in result["disagreements"]
        ]
    else:
        lines.append("None.")
    lines += ["", "Links open the trial in the run's viewer (`wearsim view RUN_DIR` writes index.html).", ""]
    return "\n".join(lines)


def plot_agreement(result: dict, path: Path) -> None:
    """One confusion matrix per judge: rows the people's majority, columns the judge's label."""
    from benchmark.report.chart import Figure, blues, ink_on

    labels = list(result["labels"])
    cols = [*labels, "unscored"]
    panels = result["against_people"]
    width = 70 + 90 * len(cols)
    fig = Figure(
        40 + width * len(panels),
        120 + 42 * len(labels),
        f"People's majority (rows) against each judge (columns), {result['majority_items']} "
        f"item{'' if result['majority_items'] == 1 else 's'}",
    )
    for n, row in enumerate(panels):
        grid = [[row["confusion"][m][c] for c in cols] for m in labels]
        top = max(1, max(max(r) for r in grid))
        left = 110 + n * width
        ax = fig.axes(
            left, 50, fig.width - left - width + 90, 60, x=(-0.5, len(cols) - 0.5), y=(len(labels) - 0.5, -0.5)
        )
        for i, values in enumerate(grid):
            for j, value in enumerate(values):
                fill = blues(value / top)
                ax.rect(j - 0.5, i - 0.5, j + 0.5, i + 0.5, fill, outline="white")
                ax.text(j, i, str(value), size=13, colour=ink_on(fill), anchor="mm")
        ax.x_ticks(list(range(len(cols))), [c.replace("_", " ") for c in cols], size=9)
        ax.y_ticks(list(range(len(labels))), [label.replace("_", " ") for label in labels], size=9)
        ax.x_label(row["judge"][:60])
    fig.save(path)


def write_agreement(result: dict, run_dir: Path) -> list[Path]:
    run_dir = Path(run_dir)
    names = output_names(result["what"])
    refuse_links(run_dir, names)
    paths = [run_dir / name for name in names]
    write_atomic(paths[0], json.dumps(result, indent=2) + "\n", run_dir)
    write_atomic(paths[1], render_agreement(result, run_dir.resolve().name), run_dir)
    plot_agreement(result, paths[2])
    return paths
