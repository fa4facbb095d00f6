"""The page of `wearsim compare A B [MORE ...] --html DIR`: DIR/comparison.html, self-contained.

A leaderboard: one row per run and condition (balanced Turn 2 accuracy, its
95% interval and how it was made, cells scored, turns OK, repair rate, first
reply text p50 and p95, voice to voice p50, the candidate's cost per correct
answer and per trial), sortable by clicking a header (a few lines of plain
JS; a number sorts as a number, a blank cell always last). Then each run
against the first under the compared condition (B - A with its paired
interval, McNemar's p), or why nothing pairs; the two plots, each point's
cost, and the whole comparison as text. Proactive runs get their own page
(`compare_proactive_page`; `wearsim compare` picks it). Every value from a run is escaped;
nothing is fetched.
"""

from __future__ import annotations

import base64
import io
from html import escape
from pathlib import Path

from benchmark.report.cost import usd
from core.safe_files import refuse_links, write_atomic

PAGE_NAME = "comparison.html"

STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1400px;padding:1rem;color:#1d2433}
table{border-collapse:collapse;margin:.5rem 0 1.25rem}
td,th{border:1px solid #ccd;padding:.3rem .55rem;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
th{background:#eef1f7;font-size:13px;max-width:8rem}
td:first-child{white-space:nowrap}
.wide{overflow-x:auto}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th:hover{background:#dfe5f1}
th[aria-sort=ascending]::after{content:" \\25B2";font-size:.7em}
th[aria-sort=descending]::after{content:" \\25BC";font-size:.7em}
tr:nth-child(even) td{background:#fafbfd}
.muted{color:#5b6577}.warn{color:#a3361c}
pre{white-space:pre;overflow-x:auto;background:#f6f7fa;padding:.75rem;font-size:13px}
img{max-width:100%;border:1px solid #dde}
"""

# Sort a table by the clicked header: data-sort (a number) where a cell has it, else its text; blanks last.
SORT_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("thead th").forEach(function (th, column) {
    th.title = "sort by this column (click again to reverse)";
    th.addEventListener("click", function () {
      var body = table.tBodies[0], rows = Array.from(body.rows);
      var up = th.getAttribute("aria-sort") !== "ascending";
      table.querySelectorAll("thead th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      function key(row) {
        var cell = row.cells[column];
        return cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x === "" || y === "") { return (x === "") - (y === ""); }
        var order = (isNaN(x) || isNaN(y)) ? x.localeCompare(y) : Number(x) - Number(y);
        return up ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


def _pct(value) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _cell(text: str, sort=None, number: bool = True, title: str | None = None) -> str:
    attrs = (' class="n"' if number else "") + ("" if sort is None else f' data-sort="{escape(str(sort))}"')
    attrs += f' title="{escape(title)}"' if title else ""
    return f"<td{attrs}>{escape(text)}</td>"


def _seconds(figures: dict | None, key: str):
    if not figures or not figures.get("n"):
        return _cell("none", "", title="no first reply time in these records")
    return _cell(f"{figures[key]:.2f} s", f"{figures[key]:.6f}")


def _interval(row: dict) -> str:
    if row["ci_low"] is None or row["ci_high"] is None:
        return _cell("n/a", "")
    how = (
        "per-class Wilson bounds combined (too few scenarios for a bootstrap)"
        if row.get("ci_method") == "wilson"
        else "bootstrap over scenarios"
    )
    mark = "*" if row.get("ci_method") == "wilson" else ""
    return _cell(f"[{_pct(row['ci_low'])}, {_pct(row['ci_high'])}]{mark}", f"{row['ci_low']:.6f}", title=how)


def runs_table(rows: list[dict]) -> str:
    """The leaderboard: `compare_table.run_row`s, one per run and condition."""
    head = [
        "run",
        "condition",
        "balanced Turn 2 accuracy",
        "95% interval",
        "scored",
        "turns OK",
        "repair rate",
        "first text p50",
        "first text p95",
        "voice to voice p50",
        "cost per correct",
        "cost per trial",
    ]
    body = []
    for row in rows:
        accuracy = row["balanced_accuracy"]
        shown = (
            _pct(accuracy)
            if row["measured"]
            else "not a measurement" + (f" ({_pct(accuracy)} over the scored)" if accuracy is not None else "")
        )
        turns_share = row["turns_ok"] / row["cells"] if row["cells"] else None
        cells = [
            _cell(row["label"], number=False, title=row["run"]),
            _cell(row["condition"], number=False),
            _cell(shown, "" if accuracy is None else f"{accuracy if row['measured'] else accuracy - 2:.6f}"),
            _interval(row),
            _cell(f"{row['scored']} of {row['cells']}", row["scored"]),
            _cell(
                f"{row['turns_ok']} of {row['cells']}",
                "" if turns_share is None else f"{turns_share:.6f}",
                title="cells with every turn answered and Turn 2 labelled; unscored and errored cells are not OK",
            ),
            _cell(
                f"{_pct(row['repair_rate'])} ({row['repair_k']}/{row['repair_n']})",
                "" if row["repair_rate"] is None else f"{row['repair_rate']:.6f}",
            ),
            _seconds(row["first_token_s"], "p50"),
            _seconds(row["first_token_s"], "p95"),
            _seconds(row["first_voice_s"], "p50"),
            _cell(
                usd(row["per_correct_usd"]) if row["per_correct_usd"] is not None else "unknown",
                "" if row["per_correct_usd"] is None else row["per_correct_usd"],
                title="; ".join(row["cost_unknown"][:3]) or None,
            ),
            _cell(
                usd(row["cost_per_trial_usd"]) if row["cost_per_trial_usd"] is not None else "unknown",
                "" if row["cost_per_trial_usd"] is None else row["cost_per_trial_usd"],
            ),
        ]
        body.append('<tr class="run">' + "".join(cells) + "</tr>")
    return (
        '<div class="wide"><table id="runs" class="sortable"><thead><tr>'
        + "".join(f"<th>{escape(h)}</th>" for h in head)
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table></div>"
    )


def _signed(value) -> str:
    return "n/a" if value is None else f"{100 * value:+.1f} pts"


def pairs_table(pairs: list[dict], first: str) -> str:
    """Each run against the first: `compare.against_first` rows, or why a run pairs with nothing."""
    if not pairs:
        return ""
    body = []
    for p in pairs:
        if not p["pairs"]:
            body.append(
                f"<tr>{_cell(p['label'], number=False)}{_cell('0', 0)}"
                f'<td colspan="3" class="warn">no pairs: {escape(p.get("reason") or "none scored in both")}'
                "</td></tr>"
            )
            continue
        interval = (
            f"[{_signed(p['ci_low'])}, {_signed(p['ci_high'])}]"
            if p["ci_low"] is not None
            else p.get("interval_note") or "n/a"
        )
        body.append(
            f"<tr>{_cell(p['label'], number=False)}{_cell(str(p['pairs']), p['pairs'])}"
            f"{_cell(_signed(p['difference']), '' if p['difference'] is None else p['difference'])}"
            f"{_cell(interval, number=p['ci_low'] is not None)}{_cell(format(p['p_value'], '.4g'), p['p_value'])}</tr>"
        )
    head = [
        "run",
        "pairs scored in both",
        f"difference (run - {first})",
        "95% interval (paired bootstrap)",
        "McNemar exact p",
    ]
    return (
        '<table id="pairs" class="sortable"><thead><tr>'
        + "".join(f"<th>{escape(h)}</th>" for h in head)
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table>"
    )


def _png(plot, data) -> bytes:
    buffer = io.BytesIO()
    plot(data, buffer)
    return buffer.getvalue()


def _img(alt: str, png: bytes) -> str:
    return f'<img alt="{escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}">'


def _not_drawn(rows: list[dict]) -> str:
    missing = []
    for row in rows:
        if not (row.get("first_token_s") or {}).get("n"):
            missing.append(
                f"{row['label']}: no first reply time in its records (a text-proxy run that did not "
                "stream its replies records none)"
            )
        elif row["balanced_accuracy"] is None:
            missing.append(f"{row['label']}: no accuracy (no Turn 2 scored)")
    return ('<p class="muted">Not drawn: ' + escape("; ".join(missing)) + ".</p>") if missing else ""


def write_comparison_page(out_dir: Path, text: str, result: dict) -> Path:
    """DIR/comparison.html (and the two plots beside it) from `compare.compare_runs`'s result and its text."""
    from benchmark.report.cost_plot import COMPARE_OUTPUTS, plot_accuracy_cost
    from benchmark.report.cost_plot import PLOT_NAME as COST_PLOT
    from benchmark.report.latency_plot import PLOT_NAME as LATENCY_PLOT
    from benchmark.report.latency_plot import plot_accuracy_latency

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    refuse_links(out_dir, COMPARE_OUTPUTS)
    runs, points = result.get("runs") or [], result.get("points") or []
    cost_png, latency_png = _png(plot_accuracy_cost, points), _png(plot_accuracy_latency, runs)
    write_atomic(out_dir / COST_PLOT, cost_png, out_dir)
    write_atomic(out_dir / LATENCY_PLOT, latency_png, out_dir)
    first = runs[0]["label"].partition(":")[0] if runs else "A"
    starts = sorted({r["measured_from"] for r in runs})
    wilson = any(r.get("ci_method") == "wilson" for r in result.get("leaderboard") or runs)
    point_rows = "".join(
        f"<tr>{_cell(p['label'], number=False)}{_cell(p['condition'], number=False)}"
        f"{_cell(_pct(p['accuracy']) + ('' if p['measured'] else ' (under half scored)'))}"
        f"{_cell(usd(p['cost_per_trial']))}{_cell(usd(p['per_correct']))}"
        f"{_cell('; '.join(p['unknown'][:3]), number=False)}</tr>"
        for p in points
    )
    page = "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8"><title>wearsim: comparison</title>',
            f"<style>{STYLE}</style></head><body>",
            "<h1>wearsim compare</h1>",
            "<h2>Runs</h2>",
            f'<p class="muted">One row per run and condition; click a header to sort. Latencies are seconds from '
            f"{escape(' / '.join(starts) or 'the end of speech')}. Turns OK: cells with every turn answered and Turn 2 "
            "labelled, over the planned cells (unscored and errored cells are not OK)."
            + (
                " *: the interval is the per-class Wilson bounds combined, too few scenarios for a bootstrap."
                if wilson
                else ""
            )
            + "</p>",
            runs_table(result.get("leaderboard") or runs),
            f"<h2>Against {escape(runs[0]['label'] if runs else 'A')}, condition {escape(result['condition'])}</h2>",
            '<p class="muted">Trials paired by cell (scenario, condition, trial and any sweep axis), counted when '
            "scored in both; the interval resamples scenarios.</p>",
            pairs_table(result.get("against_first") or [], first),
            "<h2>Accuracy against latency</h2>",
            _img("accuracy against latency", latency_png),
            _not_drawn(runs),
            "<h2>Accuracy against cost</h2>",
            _img("accuracy against cost", cost_png),
            '<table id="points"><thead><tr><th>run</th><th>condition</th><th>balanced Turn 2 accuracy</th>'
            "<th>candidate per trial</th><th>per correct Turn 2</th><th>cost unknown because</th></tr></thead>"
            f"<tbody>{point_rows}</tbody></table>",
            "<details><summary>The whole comparison as text (A against B in detail, flips)</summary>"
            f"<pre>{escape(text)}</pre></details>",
            f"<script>{SORT_SCRIPT}</script>",
            "</body></html>",
            "",
        ]
    )
    return write_atomic(out_dir / PAGE_NAME, page, out_dir)


__all__ = ["PAGE_NAME", "pairs_table", "runs_table", "write_comparison_page"]
