"""The page of `wearsim compare ... --html DIR` when proactive runs are among those compared.

The proactive runs' rows (`benchmark.comparison.proactive`): per run and cell, recall and precision
with their 95% intervals and k/n, false alarms per minute with its interval and the minutes and
trials behind it, the time to speak with its n, the cost per hour watched; each run against the
first, cell by cell (recall B - A with its paired interval, McNemar's p on hits, false alarms per
minute B - A with its interval); the recall-against-false-alarms plot, one point per run and cell
(DIR/recall_false_alarms.png). Both tables sort by a click on a header, as the Q&A page's do. With
two or more question-and-answer runs beside them, their table and pairs follow, compared apart.
Every value from a run is escaped; nothing is fetched.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from benchmark.report.compare_page import PAGE_NAME, SORT_SCRIPT, STYLE, _cell, _img, _png, pairs_table, runs_table
from core.safe_files import refuse_links, write_atomic

PLOT_NAME = "recall_false_alarms.png"


def _pct(value) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _rate_cells(block: dict) -> str:
    if not block["n"]:
        return _cell("n/a (none)", "") + _cell("n/a", "")
    interval = f"[{_pct(block['ci_low'])}, {_pct(block['ci_high'])}]" + ("*" if block["ci_method"] == "wilson" else "")
    return _cell(f"{_pct(block['rate'])} ({block['k']}/{block['n']})", f"{block['rate']:.6f}") + _cell(
        interval, f"{block['ci_low']:.6f}"
    )


def rows_table(rows: list[dict]) -> str:
    from benchmark.report.proactive_findings import cost_text, speak_text

    head = [
        "run",
        "condition",
        "cell",
        "recall (k/n)",
        "recall 95%",
        "precision (k/n)",
        "precision 95%",
        "false alarms / min",
        "false alarms 95%",
        "trials",
        "minutes",
        "time to speak",
        "echoes",
        "cost per hour watched",
    ]
    body = []
    for row in rows:
        cell, alarms = row["metrics"], row["false_alarms_per_min"]
        speak_n = cell.get("time_to_speak_n") or 0
        body.append(
            "<tr>"
            + _cell(row["label"], number=False, title=row["run"])
            + _cell(row["condition"], number=False)
            + _cell(row["cell"], number=False)
            + _rate_cells(cell["recall"])
            + _rate_cells(cell["precision"])
            + _cell(
                "n/a" if alarms["rate"] is None else f"{alarms['rate']:.2f}",
                "" if alarms["rate"] is None else alarms["rate"],
            )
            + _cell(
                "n/a (under 2 scenarios)"
                if alarms["ci_low"] is None
                else f"[{alarms['ci_low']:.2f}, {alarms['ci_high']:.2f}]",
                "" if alarms["ci_low"] is None else alarms["ci_low"],
            )
            + _cell(str(alarms["trials"]), alarms["trials"])
            + _cell(f"{alarms['minutes']:.1f}", alarms["minutes"])
            + _cell(speak_text(cell), "" if not speak_n else cell["time_to_speak_p50_s"])
            + _cell(str(cell.get("echoes", "-")), cell.get("echoes", ""))
            + _cell(
                cost_text(cell, row["model"], row["hours"]),
                "" if cell["cost_per_hour_usd"] is None else cell["cost_per_hour_usd"],
            )
            + "</tr>"
        )
    return (
        '<div class="wide"><table id="proactive-runs" class="sortable"><thead><tr>'
        + "".join(f"<th>{escape(h)}</th>" for h in head)
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table></div>"
    )


def _signed_points(value) -> str:
    return "n/a" if value is None else f"{100 * value:+.1f} pts"


def against_table(pairs: list[dict], first: str) -> str:
    head = [
        "run",
        "condition",
        "cell",
        "paired trials",
        "event trials",
        f"recall (run - {first})",
        "recall 95% (paired bootstrap)",
        "McNemar exact p (hits)",
        "false alarms / min (run - first)",
        "false alarms 95%",
    ]
    body = []
    for pair in pairs:
        if not pair["cells"]:
            body.append(
                f"<tr>{_cell(pair['label'], number=False)}"
                f'<td colspan="9" class="warn">no pairs: {escape(pair["reason"] or "")}</td></tr>'
            )
        for cell in pair["cells"]:
            names = cell["cell_a"] if cell["cell_a"] == cell["cell_b"] else f"{cell['cell_b']} against {cell['cell_a']}"
            recall_ci = (
                f"[{_signed_points(cell['recall_ci_low'])}, {_signed_points(cell['recall_ci_high'])}]"
                if cell["recall_ci_low"] is not None
                else "n/a (no width)"
            )
            alarms_ci = (
                f"[{cell['false_alarms_ci_low']:+.2f}, {cell['false_alarms_ci_high']:+.2f}]"
                if cell["false_alarms_ci_low"] is not None
                else "n/a (no width)"
            )
            alarms = cell["false_alarms_per_min_difference"]
            body.append(
                "<tr>"
                + _cell(pair["label"], number=False)
                + _cell(cell["condition"], number=False)
                + _cell(names, number=False)
                + _cell(str(cell["pairs"]), cell["pairs"])
                + _cell(str(cell["events"]), cell["events"])
                + _cell(
                    _signed_points(cell["recall_difference"]),
                    "" if cell["recall_difference"] is None else cell["recall_difference"],
                )
                + _cell(recall_ci, "" if cell["recall_ci_low"] is None else cell["recall_ci_low"])
                + _cell(format(cell["mcnemar"]["p_value"], ".4g"), cell["mcnemar"]["p_value"])
                + _cell("n/a" if alarms is None else f"{alarms:+.2f}", "" if alarms is None else alarms)
                + _cell(alarms_ci, "" if cell["false_alarms_ci_low"] is None else cell["false_alarms_ci_low"])
                + "</tr>"
            )
    return (
        '<table id="proactive-pairs" class="sortable"><thead><tr>'
        + "".join(f"<th>{escape(h)}</th>" for h in head)
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table>"
    )


def plot_groups(rows: list[dict]) -> dict[str, dict[str, dict]]:
    """The plot's points: run -> "condition, cell" -> the cell's figures."""
    groups: dict[str, dict[str, dict]] = {}
    for row in rows:
        groups.setdefault(row["label"], {})[f"{row['condition']}: {row['cell']}"] = row["metrics"]
    return groups


def write_proactive_page(out_dir: Path, text: str, result: dict) -> Path:
    """DIR/comparison.html and DIR/recall_false_alarms.png from `compare.compare_runs`'s result."""
    from benchmark.report.proactive_plot import plot_recall_false_alarms

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    refuse_links(out_dir, (PAGE_NAME, PLOT_NAME))
    proactive = result["proactive"]
    groups = plot_groups(proactive["rows"])
    png = _png(lambda data, sink: plot_recall_false_alarms(data, sink, "one point per run and cell"), groups)
    write_atomic(out_dir / PLOT_NAME, png, out_dir)
    first = proactive["runs"][0].partition(":")[0]
    qa = result.get("qa")
    qa_sections = []
    if qa is not None:
        qa_first = qa["runs"][0]["label"].partition(":")[0]
        qa_sections = [
            "<h2>Question-and-answer runs, compared apart</h2>",
            runs_table(qa.get("leaderboard") or qa["runs"]),
            f"<h3>Against {escape(qa['runs'][0]['label'])}, condition {escape(qa['condition'])}</h3>",
            pairs_table(qa.get("against_first") or [], qa_first),
        ]
    page = "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8"><title>wearsim: comparison</title>',
            f"<style>{STYLE}</style></head><body>",
            "<h1>wearsim compare</h1>",
            f'<p class="muted" id="kinds">{escape(kinds_note(result["kinds"]))}.</p>',
            "<h2>Proactive runs</h2>",
            '<p class="muted">One row per run and cell; click a header to sort. Recall: events caught on time over '
            "events; precision: hits over hits and false alarms; intervals 95%, a bootstrap over scenarios (*: the "
            "Wilson interval, under 10 scenarios); false alarms a minute of stream, its interval a bootstrap over "
            "scenarios.</p>",
            rows_table(proactive["rows"]),
            f"<h2>Against {escape(proactive['runs'][0])}</h2>",
            '<p class="muted">Trials paired by scenario and trial index within a cell (the same condition and '
            "cell, or each run's one cell under a condition); the intervals resample scenarios, the same ones for "
            "both runs.</p>",
            against_table(proactive["against_first"], first),
            "<h2>Events caught on time against false alarms a minute</h2>",
            _img("recall against false alarms", png),
            *qa_sections,
            f"<details><summary>The whole comparison as text</summary><pre>{escape(text)}</pre></details>",
            f"<script>{SORT_SCRIPT}</script>",
            "</body></html>",
            "",
        ]
    )
    return write_atomic(out_dir / PAGE_NAME, page, out_dir)


def kinds_note(kinds: dict[str, list[str]]) -> str:
    """What was compared with what when the runs are proactive ones, or a mix."""
    watched, asked = kinds["proactive"], kinds["qa"]
    if not asked:
        return f"proactive runs ({', '.join(watched)}): recall and false alarms, not Turn 2 accuracy"
    apart = (
        "; the question-and-answer runs against each other below"
        if len(asked) >= 2
        else f"; {asked[0]} is the only question-and-answer run, with nothing of its kind to compare it with"
    )
    return (
        f"a mix of kinds, each compared apart: proactive {', '.join(watched)}; question-and-answer "
        f"{', '.join(asked)}{apart}"
    )
