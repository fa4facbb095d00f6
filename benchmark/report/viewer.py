"""The run viewer: one self-contained `index.html` written into a run dir.

Built from the run dir (summary.json, findings.md, plots/, the trial records),
the bank's authored text and the scenario media. It opens from a file:// URL
with no server and no network: the CSS and the filter script are inline, and
plots and the bank's frames are base64 data URIs; what the run kept of each
stream turn (thumbnails of the frames sent, the glasses' speech, the spoken
reply) is linked by relative path inside the run dir (`report/timeline.py`),
so the folder opens from disk as it is. Every text from the run is escaped.
Trials filter by condition, shift type, outcome, frame policy, impairment
profile, staleness gap and fault; a plot opens full size on a click.
"""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

from benchmark.judges.kinds import is_offline, offline_kind
from benchmark.report import timeline, watch_view
from benchmark.report.cite import cite_line
from benchmark.report.cost import budget_lead, per_correct, spend
from benchmark.report.faults import fault_lead
from benchmark.report.findings import headline, interval, is_measurement, pct, scored_cells
from benchmark.report.frame_source import frame_source_text
from benchmark.report.human_check import agreement_stem, human_check_line
from benchmark.report.plots import PLOT_FILES
from benchmark.report.run_files import (
    MAX_PLOT_BYTES,
    MAX_SUMMARY_BYTES,
    InlineBudget,
    image_data_uri,
    read_findings,
    read_json_file,
)
from benchmark.report.timeline import RunFiles
from benchmark.report.viewer_trials import (  # noqa: F401 (the trial rows, taken from here too)
    MEDIA_ROOT,
    Frames,
    axes,
    filters_html,
    open_bank,
    outcome,
    trial_html,
    turn_facts,
)
from benchmark.scoring.summary_view import RunSummary
from core.records import REPAIR_STYLES, TrialRecord
from core.safe_files import inside, refuse_links, write_atomic

STYLE = (
    """
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:1rem 1.5rem;color:#1a202c}
h1{font-size:1.4rem;margin:.2rem 0} h2{font-size:1.15rem;margin:1.6rem 0 .5rem;border-bottom:1px solid #ccd}
.headline{font-size:1.3rem;font-weight:600;padding:.7rem 1rem;border-radius:6px;background:#e6f0fa}
.headline::first-letter{text-transform:uppercase}
.headline.unmeasured{background:#fdecea;color:#8a1c12}
table{border-collapse:collapse;margin:.4rem 0} td,th{border:1px solid #ccd;padding:.25rem .5rem;text-align:left;
vertical-align:top} th{background:#f2f4f8}
pre{white-space:pre-wrap;word-break:break-word;margin:.2rem 0;font:13px/1.4 ui-monospace,monospace}
.plots{display:flex;flex-wrap:wrap;gap:.5rem} figure{margin:0} .plots img{width:340px;border:1px solid #dde}
.filters{display:flex;gap:1rem;align-items:center;flex-wrap:wrap;margin:.5rem 0 1rem}
details.trial{border:1px solid #ccd;border-radius:5px;margin:.3rem 0;padding:.2rem .6rem}
details.trial>summary{cursor:pointer;padding:.2rem 0} details.trial[open]{background:#fafbfd}
.badge{display:inline-block;min-width:5em;text-align:center;border-radius:3px;font-weight:600;margin-right:.5rem}
.o-pass{background:#c6f6d5} .o-miss{background:#fed7d7} .o-unscored{background:#e2e8f0} .o-error{background:#fbd38d}
.msg{border-left:4px solid #90b4d8;padding:.1rem .6rem;margin:.3rem 0}
.msg.assistant{border-color:#9ae6b4} .role{font-size:12px;color:#555;text-transform:uppercase}
.diff{display:grid;grid-template-columns:1fr 1fr;gap:.6rem;margin:.3rem 0}
.diff>div{background:#fffbea;padding:.3rem .5rem}
.frames{display:flex;gap:.6rem} .frames img{max-height:180px;border:1px solid #ccd} .note{color:#555;font-size:13px}
.plots img{cursor:zoom-in} #zoom{position:fixed;inset:0;background:#000c;display:flex;align-items:center;
justify-content:center;z-index:10;cursor:zoom-out}
#zoom img{width:92vw;height:92vh;object-fit:contain;background:#fff}
[hidden]{display:none !important}
"""
    + timeline.STYLE
    + watch_view.STYLE
)

SCRIPT = (
    """
const filters = Array.from(document.querySelectorAll('select[data-filter]'));
const rows = Array.from(document.querySelectorAll('details.trial'));
function applyFilters() {
  let shown = 0;
  for (const row of rows) {
    const keep = filters.every(f => !f.value || row.dataset[f.dataset.filter] === f.value);
    row.hidden = !keep;
    if (keep) shown++;
  }
  document.getElementById('shown').textContent = shown + ' of ' + rows.length + ' trials shown';
}
filters.forEach(f => f.addEventListener('change', applyFilters));
applyFilters();
const frames = JSON.parse(document.getElementById('frames').textContent);
document.addEventListener('toggle', event => {  // frames load when their trial opens
  if (!event.target.open) return;
  event.target.querySelectorAll('img[data-frame]').forEach(img => {
    if (!img.getAttribute('src')) img.src = frames[img.dataset.frame];
  });
}, true);
const zoom = document.getElementById('zoom');  // a plot full size on a click; a click or Escape closes it
document.querySelectorAll('.plots img').forEach(img => img.addEventListener('click', () => {
  zoom.querySelector('img').src = img.src;
  zoom.hidden = false;
}));
zoom.addEventListener('click', () => { zoom.hidden = true; });
document.addEventListener('keydown', event => { if (event.key === 'Escape') zoom.hidden = true; });
function openLinked() {  // index.html#t-... (agreement.md's links) opens that trial
  const row = location.hash && document.getElementById(location.hash.slice(1));
  if (row && row.matches('details.trial')) { row.hidden = false; row.open = true; row.scrollIntoView(); }
}
window.addEventListener('hashchange', openLinked);
openLinked();
"""
    + timeline.SCRIPT
)


def code_spans(text: str) -> str:
    """`text` escaped for HTML, with its Markdown code spans (`like this`, as findings write them) as
    <code> elements instead of raw backticks."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(text))


AGREEMENT_KINDS = (("turn2", "Turn 2"), ("turn3", "Turn 3"), ("remarks", "proactive remarks"))


def agreement_links(files: RunFiles) -> str:
    """Links to `wearsim agreement`'s report and plot for each kind of item that has them, "" when none."""
    parts = []
    for what, said in AGREEMENT_KINDS:
        links = [
            f'<a href="{escape(link)}">{escape(name)}</a>'
            for name in (f"{agreement_stem(what)}.md", f"{agreement_stem(what)}.png")
            if (files.run_dir / name).is_file() and (link := files.link(name))
        ]
        if links:
            parts.append(f"{said}: {', '.join(links)}")
    return "; ".join(parts)


def figures_html(run: RunSummary, files: RunFiles | None = None) -> str:
    from benchmark.report.proactive_findings import is_proactive

    manifest, counts = run.manifest, run.counts
    family, model = manifest.judge_family or "unknown", manifest.judge_model or "-"
    judge = (family if model in (family, "-") else f"{family} ({model})") + (
        f" at {manifest.judge_endpoint}" if manifest.judge_endpoint and not is_offline(manifest.judge_family) else ""
    )
    watched = is_proactive(run)
    facts = [
        (
            "candidate",
            (manifest.candidate_model or "-")
            + (f" at {manifest.candidate_endpoint}" if manifest.candidate_endpoint else ""),
        ),
        ("judge", judge),
        ("via", manifest.via or "-"),
        *(
            watch_view.run_facts(run)
            if watched
            else [
                ("ranking condition", run.primary.condition),
                (
                    "trials",
                    f"{counts.trials}: scored {counts.scored}, unscored {counts.turn_2_unscored}, "
                    f"errored {counts.errored}",
                ),
            ]
        ),
    ]
    out = ["<table>", *(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>" for k, v in facts), "</table>"]
    if (kind := offline_kind(manifest.judge_family)) and not kind.publication:
        out.append(f'<p class="note">The judge is {kind.name} ({kind.method}): not the publication judge.</p>')
    out.append(f'<p class="note" id="human-check">{code_spans(human_check_line(run.human_check))}</p>')
    if files is not None and (reports := agreement_links(files)):
        out.append(f'<p class="note" id="agreement">The judge against people\'s labels: {reports}.</p>')
    if frames := frame_source_text(run):
        out.append(f'<p class="note" id="frame-source">{code_spans(frames)}</p>')
    out.append(f'<p class="note" id="cite">{code_spans(cite_line(manifest))}</p>')
    stopped = budget_lead(run)
    if stopped:
        out.append(f'<p class="headline unmeasured">{code_spans(stopped)}</p>')
    if watched:
        return "\n".join([*out, watch_view.cells_html(run)])
    out.append(
        "<table><tr><th>condition</th><th>balanced Turn 2 accuracy</th><th>95% CI</th>"
        "<th>scored / cells</th><th>repair rate</th><th>candidate cost</th><th>judge cost</th>"
        "<th>cost per correct Turn 2</th></tr>"
    )
    costs = run.cost.get("conditions") or {}  # the cost block as written (docs/schema.md)
    for name, cond in run.conditions.items():
        scored, cells = scored_cells(run, name)
        accuracy = pct(cond.balanced_accuracy) if is_measurement(run, name) else "not a measurement"
        repair = cond.repair_rate
        cost = costs.get(name) or {}
        out.append(
            f"<tr><td>{escape(name)}</td><td>{escape(accuracy)}</td>"
            f"<td>{escape(interval(cond.ci_low, cond.ci_high))}</td>"
            f"<td>{escape(str(scored))} / {escape(str(cells))}</td>"
            f"<td>{escape(pct(repair.rate))} ({escape(str(repair.k))}/{escape(str(repair.n))})</td>"
            + "".join(f"<td>{escape(spend(cost, part))}</td>" for part in ("candidate", "judge"))
            + f"<td>{escape(per_correct(cost) if cost else '-')}</td></tr>"
        )
    out.append("</table>")
    unknown = (run.cost.get("run") or {}).get("unknown") or []
    if unknown:
        out.append('<p class="note">Cost unknown (never counted as 0): ' + escape("; ".join(unknown[:5])) + "</p>")
    return "\n".join(out)


def plots_html(plots_dir: Path, budget: InlineBudget | None = None) -> str:
    """The run's plots inlined: PNGs under `MAX_PLOT_BYTES` (by header and size, not by name) while the
    page's `budget` of images lasts; any other file named *.png is left out and named in a note."""
    budget = budget if budget is not None else InlineBudget()
    names = [n for n in PLOT_FILES if inside(plots_dir / n, plots_dir)]
    names += (
        sorted(p.name for p in plots_dir.glob("*.png") if p.name not in names and inside(p, plots_dir))
        if plots_dir.is_dir()
        else []
    )
    figures, refused = [], []
    for name in names:
        uri, why = image_data_uri(plots_dir / name, plots_dir, MAX_PLOT_BYTES, "plot", budget)
        if uri is None:
            refused.append(why or name)
        else:
            figures.append(
                f'<figure><img src="{uri}" alt="{escape(name)}"><figcaption>{escape(name)}</figcaption></figure>'
            )
    note = f'<p class="note">Left out: {escape("; ".join(refused))}</p>' if refused else ""
    if not figures:
        return note + '<p class="note">No plots in plots/.</p>'
    return note + '<div class="plots">' + "".join(figures) + "</div>"


# ---------------------------------------------------------------- the page


def page_headline(run: RunSummary) -> str:
    from benchmark.report.proactive_findings import is_proactive, proactive_headline
    from benchmark.scoring.blind import blind_line

    if is_proactive(run):
        return proactive_headline(run)  # the blind camera's warning leads it
    return " ".join(filter(None, (headline(run), blind_line(run.blind_camera))))


def render_page(
    run: RunSummary,
    trials: list[TrialRecord],
    *,
    title: str,
    findings: str,
    plots_dir: Path,
    media_root: Path = MEDIA_ROOT,
    files: RunFiles | None = None,
) -> str:
    manifest = run.manifest
    bank, bank_note = open_bank(manifest)
    budget = InlineBudget()  # the page's images in all: its plots first, then the scenario frames
    plots = plots_html(plots_dir, budget)
    frames = Frames(media_root, budget)
    style = manifest.repair_style if manifest.repair_style in REPAIR_STYLES else "named"
    prices = manifest.price_table
    rows = [trial_html(t, bank, frames, style, prices, files) for t in sorted(trials, key=lambda t: t.cell)]
    from benchmark.report.proactive_findings import is_proactive

    measured = "measured" if is_proactive(run) or is_measurement(run) else "unmeasured"
    findings_block = (
        f"<details><summary>findings.md</summary><pre>{escape(findings)}</pre></details>" if findings else ""
    )
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>wearsim: {escape(title)}</title><style>{STYLE}</style></head><body>",
            f"<h1>wearsim run <code>{escape(title)}</code></h1>",
            f'<p class="headline {measured}" id="headline">{code_spans(page_headline(run))}</p>',
            *([f'<p class="note" id="turns-ok">{code_spans(lead)}</p>'] if (lead := fault_lead(run.faults)) else []),
            figures_html(run, files),
            findings_block,
            "<h2>Plots</h2>",
            plots,
            *([f'<p class="note">Frames left out: {escape("; ".join(frames.refused))}</p>'] if frames.refused else []),
            "<h2>Trials</h2>",
            f'<p class="note">{escape(bank_note)}; frames from {escape(str(media_root))} when present.</p>',
            filters_html(trials),
            *rows,
            '<div id="zoom" hidden><img alt="the plot, full size"></div>',
            frames.script(),
            f"<script>{SCRIPT}</script>",
            "</body></html>",
            "",
        ]
    )


def write_viewer(
    run_dir: Path,
    *,
    transcripts: Path | None = None,
    output_dir: Path | None = None,
    summary: RunSummary | None = None,
    media_root: Path | None = None,
) -> Path:
    """Write `index.html` into `output_dir` (default `run_dir`) and return its path.

    The summary is `summary` or the output dir's summary.json (write the report
    first); the trials are read from `transcripts` or the run dir.
    """
    from benchmark.report import REPORT_OUTPUTS
    from benchmark.scoring import load_trials
    from benchmark.scoring.summary import upgrade_summary

    run_dir = Path(run_dir)
    out = Path(output_dir) if output_dir is not None else run_dir
    refuse_links(out, REPORT_OUTPUTS)  # nothing read into the page or written comes from outside the dir
    if summary is None:
        data = read_json_file(out / "summary.json", out, MAX_SUMMARY_BYTES, "summary")
        summary = RunSummary.from_json(upgrade_summary(data))
    trials = list(load_trials(transcripts if transcripts is not None else run_dir).trials)
    findings, refused = read_findings(out / "findings.md", out)
    if refused is not None:
        findings = f"Left out: {refused}"
    page = render_page(
        summary,
        trials,
        title=out.resolve().name,
        findings=findings,
        plots_dir=out / "plots",
        media_root=Path(media_root) if media_root is not None else MEDIA_ROOT,
        files=RunFiles(run_dir, out),
    )
    return write_atomic(out / "index.html", page, out)
