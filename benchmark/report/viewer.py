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

import json
from html import escape
from pathlib import Path

from benchmark.faults import fault_of
from core.records import REPAIR_STYLES, TrialRecord, TurnResult
from benchmark.report import timeline
from benchmark.report.cost import budget_lead, per_correct, tokens_text, usd
from benchmark.report.faults import fault_lead
from benchmark.report.cite import cite_line
from benchmark.report.findings import headline, interval, is_measurement, pct, scored_cells
from benchmark.report.frame_source import frame_source_text
from benchmark.report.human_check import human_check_line
from benchmark.labels.items import trial_anchor
from benchmark.report.plots import PLOT_FILES
from benchmark.report.run_files import (MAX_FRAME_BYTES, MAX_PLOT_BYTES, MAX_SUMMARY_BYTES, image_data_uri,
                                        read_findings, read_json_file)
from benchmark.report import watch_view
from benchmark.report.timeline import RunFiles, stream_turn_html
from core.safe_files import inside, refuse_links, write_atomic
from core.scenario import BankError, Scenario, load_bank

# the media library (the same folder as media_effects.media.MEDIA_ROOT; benchmark/ does not import the simulator)
MEDIA_ROOT = Path(__file__).resolve().parents[2] / "media"
TURN_FRAMES = {1: ("context", "turn_1"), 2: ("turn_2",)}  # frame files shown under each turn
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")
OUTCOMES = ("pass", "miss", "unscored", "error")

STYLE = """
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
""" + timeline.STYLE + watch_view.STYLE

SCRIPT = """
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
""" + timeline.SCRIPT


def outcome(trial: TrialRecord) -> str:
    if trial.errored:
        return "error"
    if trial.watching is not None:  # a proactive trial: the event caught, or a quiet control left quiet
        return "pass" if trial.watching.passed else "miss"
    if not trial.scored:
        return "unscored"
    return "pass" if trial.passed else "miss"


def open_bank(manifest: dict) -> tuple[dict[str, Scenario], str]:
    """The run's bank (manifest's bank_source when it exists, else the shipped bank) by scenario id."""
    source = manifest.get("bank_source")
    path = Path(source) if isinstance(source, str) and source and Path(source).exists() else None
    try:
        bank = load_bank(path)
    except BankError as exc:
        return {}, f"authored text not shown: {exc.problems[0]}"
    return {s.scenario_id: s for s in bank.scenarios}, f"authored text from {bank.source}"


class Frames:
    """Scenario frames, each file read once (under `MAX_FRAME_BYTES`, as its format starts); trial
    rows refer to them by key."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.uris: dict[str, str] = {}
        self._keys: dict[Path, str] = {}
        self.refused: list[str] = []

    def key(self, scenario_id: str, name: str) -> str | None:
        if Path(scenario_id).name != scenario_id or scenario_id.startswith("."):
            return None
        for suffix in IMAGE_SUFFIXES:
            path = self.root / scenario_id / f"{name}{suffix}"
            if inside(path, self.root):  # never a linked file from outside the media folder
                if path not in self._keys:
                    uri, refused = image_data_uri(path, self.root, MAX_FRAME_BYTES, "scenario frame")
                    if uri is None:
                        self.refused.append(refused)
                        return None
                    self._keys[path] = f"f{len(self._keys)}"
                    self.uris[self._keys[path]] = uri
                return self._keys[path]
        return None

    def script(self) -> str:
        text = json.dumps(self.uris).replace("</", "<\\/")  # nothing in it can close the script element
        return f'<script id="frames" type="application/json">{text}</script>'


# ---------------------------------------------------------------- the top of the page

def figures_html(summary: dict) -> str:
    from benchmark.report.proactive_findings import is_proactive

    manifest, counts = summary["manifest"], summary["counts"]
    judge = f"{manifest.get('judge_family') or 'unknown'} ({manifest.get('judge_model') or '-'})"
    watched = is_proactive(summary)
    facts = [("candidate", manifest.get("candidate_model") or "-"), ("judge", judge),
             ("via", manifest.get("via") or "-"),
             *(watch_view.run_facts(summary) if watched else [
                 ("ranking condition", summary["primary"]["condition"]),
                 ("trials", f"{counts['trials']}: scored {counts['scored']}, unscored {counts['turn_2_unscored']}, "
                            f"errored {counts['errored']}")])]
    out = ["<table>", *(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>" for k, v in facts), "</table>"]
    if manifest.get("judge_family") == "lexical":
        out.append('<p class="note">The judge is lexical (answer-list matching): not the publication judge.</p>')
    out.append(f'<p class="note" id="human-check">{escape(human_check_line(summary))}</p>')
    if frames := frame_source_text(summary):
        out.append(f'<p class="note" id="frame-source">{escape(frames)}</p>')
    out.append(f'<p class="note" id="cite">{escape(cite_line(summary))}</p>')
    stopped = budget_lead(summary)
    if stopped:
        out.append(f'<p class="headline unmeasured">{escape(stopped)}</p>')
    if watched:
        return "\n".join([*out, watch_view.cells_html(summary)])
    out.append("<table><tr><th>condition</th><th>balanced Turn 2 accuracy</th><th>95% CI</th>"
               "<th>scored / cells</th><th>repair rate</th><th>candidate cost</th><th>judge cost</th>"
               "<th>cost per correct Turn 2</th></tr>")
    costs = (summary.get("cost") or {}).get("conditions") or {}
    for name, cond in summary["conditions"].items():
        scored, cells = scored_cells(summary, name)
        accuracy = pct(cond["balanced_accuracy"]) if is_measurement(summary, name) else "not a measurement"
        repair = cond["repair_rate"]
        cost = costs.get(name) or {}
        out.append(f"<tr><td>{escape(name)}</td><td>{escape(accuracy)}</td>"
                   f"<td>{escape(interval(cond['ci_low'], cond['ci_high']))}</td>"
                   f"<td>{escape(str(scored))} / {escape(str(cells))}</td>"
                   f"<td>{escape(pct(repair['rate']))} ({escape(str(repair['k']))}/{escape(str(repair['n']))})</td>"
                   + "".join(f"<td>{escape(usd(cost.get(key)))}</td>" for key in ("candidate_usd", "judge_usd"))
                   + f"<td>{escape(per_correct(cost) if cost else '-')}</td></tr>")
    out.append("</table>")
    unknown = ((summary.get("cost") or {}).get("run") or {}).get("unknown") or []
    if unknown:
        out.append('<p class="note">Cost unknown (never counted as 0): ' + escape("; ".join(unknown[:5])) + "</p>")
    return "\n".join(out)


def plots_html(plots_dir: Path) -> str:
    """The run's plots inlined: PNGs under `MAX_PLOT_BYTES` (by header and size, not by name); any
    other file named *.png is left out and named in a note."""
    names = [n for n in PLOT_FILES if inside(plots_dir / n, plots_dir)]
    names += sorted(p.name for p in plots_dir.glob("*.png")
                    if p.name not in names and inside(p, plots_dir)) if plots_dir.is_dir() else []
    figures, refused = [], []
    for name in names:
        uri, why = image_data_uri(plots_dir / name, plots_dir, MAX_PLOT_BYTES, "plot")
        if uri is None:
            refused.append(why)
        else:
            figures.append(f'<figure><img src="{uri}" alt="{escape(name)}"><figcaption>{escape(name)}</figcaption>'
                           "</figure>")
    note = (f'<p class="note">Left out: {escape("; ".join(refused))}</p>' if refused else "")
    if not figures:
        return note + '<p class="note">No plots in plots/.</p>'
    return note + '<div class="plots">' + "".join(figures) + "</div>"


NONE = "none"  # a filter's value for a trial without that axis (no sweep, no profile, no fault)


def axes(trial: TrialRecord) -> dict[str, str]:
    """The values a trial is filtered by (data attributes of its row)."""
    def value(v) -> str:
        return NONE if v is None else str(v)

    # a sweep's policy, else the one in force on the stream (the server's default)
    policy = trial.frame_policy or next((t.frames.policy for t in trial.turns if t.frames.policy), None)
    if trial.watching is not None and policy is None:
        policy = watch_view.DEFAULT_POLICY  # a proactive session's default
    return {"condition": trial.condition, "cue": trial.cue_type, "outcome": outcome(trial),
            "strategy": value(trial.proactive), "policy": value(policy),
            "profile": value(getattr(trial, "impairment", None)),
            "gap": value(trial.staleness_ms), "fault": value(fault_of(trial))}


FILTERS = (("condition", "condition"), ("shift type", "cue"), ("outcome", "outcome"), ("strategy", "strategy"),
           ("frame policy", "policy"), ("profile", "profile"), ("gap (ms)", "gap"), ("fault", "fault"))


def filters_html(trials: list[TrialRecord]) -> str:
    def select(label: str, key: str, values) -> str:
        options = "".join(f'<option value="{escape(v)}">{escape(v)}</option>' for v in values)
        return f'<label>{label} <select data-filter="{key}"><option value="">all</option>{options}</select></label>'

    found = [axes(t) for t in trials]

    def values(key: str) -> list[str]:
        if key == "outcome":
            return list(OUTCOMES)
        seen = {row[key] for row in found}
        return sorted(seen - {NONE}, key=lambda v: (len(v), v) if key == "gap" else v) + (
            [NONE] if NONE in seen else [])

    shown = [(label, key) for label, key in FILTERS if key != "strategy" or any(r[key] != NONE for r in found)]
    return ('<div class="filters">' + "".join(select(label, key, values(key)) for label, key in shown)
            + '<span id="shown" class="note"></span></div>')


# ---------------------------------------------------------------- one trial

def verdicts_html(trial: TrialRecord) -> str:
    rows = [("Turn 2 judge", trial.turn_2_judge, trial.turn_2_previous_judge_label),
            ("Turn 2 ranking judge", trial.turn_2_ranking_judge, None),
            ("Turn 3 judge", trial.turn_3_judge, trial.turn_3_previous_judge_label)]
    out = ["<table><tr><th></th><th>label</th><th>judge</th><th>rationale</th></tr>"]
    for name, verdict, previous in rows:
        if verdict is None:
            continue
        label = verdict.label or f"unscored ({verdict.unscored_reason or 'no reason given'})"
        if previous:
            label += f" (before rescore: {previous})"
        raw = f"<details><summary>raw reply</summary><pre>{escape(verdict.raw)}</pre></details>" if verdict.raw else ""
        out.append(f'<tr><th>{name}</th><td class="label">{escape(label)}</td><td>{escape(verdict.judge)}</td>'
                   f"<td>{escape(verdict.rationale)}{raw}</td></tr>")
    return "\n".join(out + ["</table>"]) if len(out) > 1 else '<p class="note">No judge verdict recorded.</p>'


def signals_html(signals: dict | None) -> str:
    if not signals:
        return '<p class="note">No code signals recorded.</p>'

    def hit(h) -> str:
        return h if isinstance(h, str) else json.dumps(h, ensure_ascii=False)

    rows = []
    for kind, value in signals.items():
        if isinstance(value, dict):
            parts = [f"{name}: " + (", ".join(map(hit, hits)) if isinstance(hits, list) else hit(hits))
                     for name, hits in value.items() if hits]
            text = "; ".join(parts) or "no hits"
        else:
            text = "none" if value is None else hit(value)
        rows.append(f"<tr><th>{escape(str(kind))}</th><td>{escape(text)}</td></tr>")
    return "<table>" + "".join(rows) + "</table>"


def messages_html(trial: TrialRecord) -> str:
    out = []
    if trial.system_prompt:
        out.append(f"<details><summary>system prompt</summary><pre>{escape(trial.system_prompt)}</pre></details>")
    for message in trial.messages:
        out.append(f'<div class="msg {escape(message.role)}"><span class="role">{escape(message.role)}</span>'
                   f"<pre>{escape(message.text)}</pre></div>")
    if not trial.messages:
        replies = [("Turn 1 reply", trial.turn_1_response), ("Turn 2 reply", trial.turn_2_response),
                   ("Turn 3 reply", trial.turn_3_response)]
        out.append('<p class="note">No messages recorded; the replies:</p>')
        out += [f'<div class="msg assistant"><span class="role">{n}</span><pre>{escape(t)}</pre></div>'
                for n, t in replies if t]
    return "\n".join(out)


def authored(scenario: Scenario, turn: int, repair_style: str) -> dict[str, str | None]:
    if turn == 1:
        return {"speech": scenario.turn_1_user, "camera": scenario.turn_1_image, "context": scenario.context_image}
    if turn == 2:
        return {"speech": scenario.turn_2_user, "camera": scenario.turn_2_image}
    return {"speech": scenario.repair_anchor(repair_style)}


def turn_facts(result: TurnResult) -> dict[str, str]:
    """Provenance per channel, reply timings and tokens, the stream's latencies and what the glasses played."""
    i, reply = result.input, result.reply
    facts = {"camera source": i.camera_source or "none", "speech source": i.speech_source or "none",
             "context source": i.context_source or "none", "reply latency": f"{reply.latency_s:.2f} s",
             "first token": "-" if reply.first_token_s is None else f"{reply.first_token_s:.2f} s",
             "tokens in/out": f"{reply.usage.input_tokens}/{reply.usage.output_tokens}"
             if reply.usage.reported else "unknown",
             "tokens by modality": tokens_text(reply.usage.to_json()) if reply.usage.reported
             else "unknown (the provider did not report usage)"}
    facts.update({k: "-" if v is None else f"{v:.3f} s" if isinstance(v, float) else str(v)
                  for k, v in result.metrics.to_json().items()})
    facts.update({k: str(v) for k, v in result.glasses.to_json().items()})
    return facts


def differences_html(result: TurnResult, scenario: Scenario, repair_style: str) -> str:
    """Each perceived channel next to the scenario's authored text, where they differ."""
    i = result.input
    sent = {"speech": (i.speech, i.speech_source), "camera": (i.camera_block, i.camera_source),
            "context": (i.context_block, i.context_source)}
    out = []
    for channel, text in authored(scenario, result.turn, repair_style).items():
        heard, source = sent[channel]
        if source == "perceived" and (heard or "").strip() != (text or "").strip():
            out.append(f'<div class="diff"><div><b>Turn {result.turn} {channel}, perceived</b>'
                       f'<pre>{escape(heard or "")}</pre></div><div><b>Turn {result.turn} {channel}, authored</b>'
                       f'<pre>{escape(text or "(none)")}</pre></div></div>')
    return "\n".join(out)


def turns_html(trial: TrialRecord, scenario: Scenario | None, frames: Frames, repair_style: str,
               files: RunFiles | None = None) -> str:
    facts = {t.turn: turn_facts(t) for t in trial.turns}
    names = list(dict.fromkeys(name for per in facts.values() for name in per))
    head = "".join(f"<th>Turn {turn}</th>" for turn in facts)
    rows = "".join(f"<tr><th>{escape(str(name))}</th>"
                   + "".join(f"<td>{escape(per.get(name, '-'))}</td>" for per in facts.values()) + "</tr>"
                   for name in names)
    out = [f"<table><tr><th></th>{head}</tr>{rows}</table>"]
    if scenario is None:
        if trial.watching is None:  # a proactive scenario has no authored turn text to compare
            out.append('<p class="note">Scenario not in the bank: authored text not shown.</p>')
    else:
        out += [differences_html(t, scenario, repair_style) for t in trial.turns]
    keys = [("context frame" if name == "context" else f"Turn {turn} frame", frames.key(trial.scenario_id, name))
            for turn in facts for name in TURN_FRAMES.get(turn, ())]
    images = "".join(f'<figure><img data-frame="{k}" alt="{escape(n)}"><figcaption>{escape(n)}'
                     "</figcaption></figure>" for n, k in keys if k)
    streamed = [stream_turn_html(t, files) for t in trial.turns] if files is not None else []
    streamed = [block for block in streamed if block]
    return "\n".join(out + ([f'<div class="frames">{images}</div>'] if images else [])
                     + (["<h3>What the assistant saw and heard</h3>", *streamed] if streamed else []))


def trial_html(trial: TrialRecord, bank: dict[str, Scenario], frames: Frames, repair_style: str,
               prices=None, files: RunFiles | None = None) -> str:
    result = outcome(trial)
    label = trial.turn_2_label or "unscored"
    if trial.watching is not None:
        label = f"{len(trial.watching.remarks)} remark(s), {trial.watching.count('false_alarm')} false alarm(s)"
    row = axes(trial)
    sweep = "".join(f" · {name} {escape(row[key])}" for name, key in (
        ("strategy", "strategy"), ("policy", "policy"), ("gap", "gap"), ("profile", "profile"), ("fault", "fault"))
                    if row[key] != NONE)
    head = (f'<span class="badge o-{result}">{result}</span>{escape(trial.scenario_id)} · {escape(trial.condition)}'
            f" · trial {trial.trial} · {escape(trial.cue_type)} · target {escape(trial.target_context)}"
            f" · judge {escape(label)}{sweep}")
    wall = "-" if trial.wall_s is None else f"{trial.wall_s:.1f} s"
    facts = (f"difficulty {trial.difficulty_tier}, domain {trial.activity_domain or '-'}, via {trial.via or '-'}, "
             f"candidate {trial.candidate_model or '-'}, wall {wall}")
    if prices is not None and not trial.errored:
        from benchmark.scoring.cost import candidate_cost, judge_cost

        facts += (f", cost: candidate {usd(candidate_cost(trial, prices).usd)}, "
                  f"judge {usd(judge_cost(trial, prices).usd)}")
    body = [f'<p class="note">{escape(facts)}</p>']
    if trial.error:
        body.append(f'<p class="o-error"><b>error:</b> {escape(trial.error)}</p>')
    if trial.watching is not None:
        body += ["<h3>What the assistant watched</h3>", watch_view.watching_html(trial.watching, files)]
    else:
        body += ["<h3>Judges</h3>", verdicts_html(trial), "<h3>Code signals (Turn 2)</h3>",
                 signals_html(trial.turn_2_code_signals)]
    body += ["<h3>Messages as sent</h3>", messages_html(trial)]
    if trial.turns:
        scenario = bank.get(trial.scenario_id)
        body += ["<h3>Turns</h3>", turns_html(trial, scenario, frames, repair_style, files)]
    data = "".join(f' data-{key}="{escape(value)}"' for key, value in row.items())
    return (f'<details class="trial" id="{trial_anchor(trial)}"{data}><summary>{head}</summary>\n'
            + "\n".join(body) + "\n</details>")


# ---------------------------------------------------------------- the page

def page_headline(summary: dict) -> str:
    from benchmark.report.proactive_findings import is_proactive, proactive_headline
    from benchmark.scoring.blind import blind_line

    if is_proactive(summary):
        return proactive_headline(summary)  # the blind camera's warning leads it
    return " ".join(filter(None, (headline(summary), blind_line(summary.get("blind_camera")))))


def render_page(summary: dict, trials: list[TrialRecord], *, title: str, findings: str, plots_dir: Path,
                media_root: Path = MEDIA_ROOT, files: RunFiles | None = None) -> str:
    manifest = summary["manifest"]
    bank, bank_note = open_bank(manifest)
    frames = Frames(media_root)
    style = manifest.get("repair_style") if manifest.get("repair_style") in REPAIR_STYLES else "named"
    from benchmark.prices import table_from_manifest

    prices = table_from_manifest(manifest)[0]
    rows = [trial_html(t, bank, frames, style, prices, files) for t in sorted(trials, key=lambda t: t.cell)]
    from benchmark.report.proactive_findings import is_proactive

    measured = "measured" if is_proactive(summary) or is_measurement(summary) else "unmeasured"
    findings_block = (f"<details><summary>findings.md</summary><pre>{escape(findings)}</pre></details>"
                      if findings else "")
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>wearsim: {escape(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>wearsim run <code>{escape(title)}</code></h1>",
        f'<p class="headline {measured}" id="headline">{escape(page_headline(summary))}</p>',
        *([f'<p class="note" id="turns-ok">{escape(lead)}</p>'] if (lead := fault_lead(summary)) else []),
        figures_html(summary), findings_block,
        "<h2>Plots</h2>", plots_html(plots_dir),
        *([f'<p class="note">Frames left out: {escape("; ".join(frames.refused))}</p>'] if frames.refused else []),
        "<h2>Trials</h2>",
        f'<p class="note">{escape(bank_note)}; frames from {escape(str(media_root))} when present.</p>',
        filters_html(trials), *rows,
        '<div id="zoom" hidden><img alt="the plot, full size"></div>',
        frames.script(), f"<script>{SCRIPT}</script>", "</body></html>", ""])


def write_viewer(run_dir: Path, *, transcripts: Path | None = None, output_dir: Path | None = None,
                 summary: dict | None = None, media_root: Path | None = None) -> Path:
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
        summary = upgrade_summary(read_json_file(out / "summary.json", out, MAX_SUMMARY_BYTES, "summary"))
    trials = list(load_trials(transcripts if transcripts is not None else run_dir).trials)
    findings, refused = read_findings(out / "findings.md", out)
    if refused is not None:
        findings = f"Left out: {refused}"
    page = render_page(summary, trials, title=out.resolve().name, findings=findings, plots_dir=out / "plots",
                       media_root=Path(media_root) if media_root is not None else MEDIA_ROOT,
                       files=RunFiles(run_dir, out))
    return write_atomic(out / "index.html", page, out)
