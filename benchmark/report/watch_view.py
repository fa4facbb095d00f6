"""A proactive trial in the viewer: what the assistant watched, when it was asked, what it said.

- a strip over the whole stream: the scenes as bands with a mark at each
  change, the event's window shaded (an event scenario), the thumbnails of
  the frames that showed the assistant a new picture, a tick for every probe
  (grey when it stayed silent), and a marker for every remark at the moment
  its first text or audio came, coloured and labelled by its outcome (hit,
  late, false alarm, duplicate, unscored);
- each spoken remark playable (the WAVs in the run dir);
- a table of the probes: when asked, the scene its newest frame showed, the
  answer, the outcome and what the judge said (or why it was not asked: made
  before the event, an echo, a quiet control), so each row agrees with the
  summary's counts.

The top of a proactive run's page comes from here too: the counts summary.json
holds (`run_facts`) and one row per condition and cell (`cells_html`), in place
of the question-and-answer table.

Files are linked as `timeline.RunFiles` links them (relative, only regular
files inside the run dir).
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from benchmark.report.timeline import RunFiles
from benchmark.scoring.summary_view import RunSummary
from core.watching import Watching

OUTCOME_NAMES = {
    "hit": "hit",
    "late": "late",
    "false_alarm": "false alarm",
    "duplicate": "duplicate",
    "unscored": "unscored",
}
DEFAULT_POLICY = "fps:1"  # a proactive session's frame policy when the run names none


def _cells(run: RunSummary):
    for condition, cells in run.proactive.items():
        for name, cell in cells.items():
            yield condition, name, cell


def run_facts(run: RunSummary) -> list[tuple[str, str]]:
    """The page's counts for a proactive run, as summary.json has them."""
    cells = [cell for _, _, cell in _cells(run)]

    def total(key: str) -> int:
        return sum(cell.get(key) or 0 for cell in cells)

    return [
        (
            "trials",
            f"{total('trials')}: {total('events')} events ({total('hits')} caught on time), "
            f"{total('quiet_controls')} quiet controls; errored {run.counts.errored}",
        ),
        (
            "remarks",
            f"{total('remarks')} of {total('probes')} check-ins: {total('false_alarms')} false alarms "
            f"({total('echoes')} only echoes), {total('late')} late, {total('duplicates')} duplicates, "
            f"{total('unscored_remarks')} unscored",
        ),
    ]


def cells_html(run: RunSummary) -> str:
    """One row per condition and cell: the summary's proactive block."""
    from benchmark.report.proactive_findings import cost_text, speak_text
    from benchmark.report.text_format import interval, pct

    def rate(block: dict) -> str:
        if not block["n"]:
            return "n/a"
        return f"{pct(block['rate'])} ({block['k']}/{block['n']}) {interval(block['ci_low'], block['ci_high'])}"

    model = run.manifest.candidate_model
    head = [
        "condition",
        "cell",
        "events caught on time",
        "precision",
        "false alarms / min",
        "time to speak",
        "echoes",
        "unscored",
        "check-ins",
        "cost / hour watched",
    ]
    rows = [
        [
            condition,
            name,
            rate(cell["recall"]),
            rate(cell["precision"]),
            "n/a" if cell["false_alarms_per_min"] is None else f"{cell['false_alarms_per_min']:.2f}",
            speak_text(cell),
            str(cell.get("echoes", "-")),
            str(cell["unscored_remarks"]),
            f"{cell['probes']} ({cell['silent_probes']} silent)",
            cost_text(cell, model),
        ]
        for condition, name, cell in _cells(run)
    ]
    return (
        '<table id="proactive-cells"><tr>'
        + "".join(f"<th>{escape(h)}</th>" for h in head)
        + "</tr>"
        + "".join("<tr>" + "".join(f"<td>{escape(v)}</td>" for v in row) + "</tr>" for row in rows)
        + "</table>"
    )


def judged(probe, watching: Watching) -> str:
    """What the judge said of a remark, or why it was not asked, in the words of the outcome."""
    if probe.silent:
        return "-"
    if probe.echo:
        return "not asked: only echoes the user's words or the camera text"
    if probe.verdict is None:
        if watching.kind == "quiet":
            return "not asked: a quiet control"
        return "not asked: made before the event"
    if probe.verdict.label is not None:
        return probe.verdict.label
    if probe.outcome == "false_alarm":
        return "names none of the event's keys"
    return f"unscored ({probe.verdict.unscored_reason or 'no reason given'})"


def _s(t_ms: int | None) -> str:
    return "-" if t_ms is None else f"{t_ms / 1000:.1f} s"


def strip_html(watching: Watching, files: RunFiles) -> str:
    span = max(watching.stream_ms, *(p.spoke_ms or 0 for p in watching.probes), 1)

    def left(t_ms: int) -> str:
        return f"{100 * t_ms / span:.2f}%"

    parts = []
    starts = list(watching.scene_starts_ms)
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else watching.stream_ms
        parts.append(
            f'<span class="w-scene w-scene-{n % 2}" style="left:{left(start)};width:{left(end - start)}" '
            f'title="scene {n}: {_s(start)} to {_s(end)}"></span>'
        )
        if n:
            parts.append(
                f'<span class="w-change" style="left:{left(start)}" data-t-ms="{start}" '
                f'title="scene change at {_s(start)}"></span>'
            )
    if watching.onset_ms is not None and watching.window_end_ms is not None:
        parts.append(
            f'<span class="w-window" style="left:{left(watching.onset_ms)};'
            f'width:{left(watching.window_end_ms - watching.onset_ms)}" data-t-ms="{watching.onset_ms}" '
            f'title="the event\'s window: {_s(watching.onset_ms)} to {_s(watching.window_end_ms)}">'
            '<span class="w-window-label">event window</span></span>'
        )
    for n, (t_ms, name) in enumerate(watching.thumbnails):
        link = files.link(name)
        if link is not None:
            parts.append(
                f'<img class="w-thumb" loading="lazy" src="{escape(link)}" data-t-ms="{t_ms}" '
                f'style="left:{left(t_ms)};top:{6 + 46 * (n % 2)}px" alt="frame sent at {_s(t_ms)}">'
            )
    for probe in watching.probes:
        if probe.asked_ms is not None:
            kind = "silent" if probe.silent else "spoke"
            parts.append(
                f'<span class="w-probe w-probe-{kind}" style="left:{left(probe.asked_ms)}" '
                f'data-t-ms="{probe.asked_ms}" title="check-in {probe.n} asked at {_s(probe.asked_ms)} '
                f'({kind})"></span>'
            )
    for row, probe in enumerate(p for p in watching.probes if p.remark and p.spoke_ms is not None):
        if probe.spoke_ms is None:  # (only remarks with a time are listed)
            continue
        outcome = probe.outcome or "unscored"
        flip = " flip" if probe.spoke_ms / span > 0.7 else ""
        parts.append(
            f'<span class="w-remark w-{outcome}{flip}" style="left:{left(probe.spoke_ms)};'
            f'bottom:{22 + 17 * (row % 4)}px" data-t-ms="{probe.spoke_ms}" data-outcome="{outcome}" '
            f'title="{escape(probe.text[:300])}">{escape(OUTCOME_NAMES.get(outcome, outcome))} '
            f"{_s(probe.spoke_ms)}</span>"
        )
    note = (
        f"{watching.asked} check-in(s) under {escape(watching.strategy)}, {len(watching.remarks)} remark(s), "
        f"{len(watching.frames_sent_ms)} frame(s) sent; 0 s is the first scene's start"
    )
    return (
        f'<div class="w-strip" data-span-ms="{span}"><div class="w-track">{"".join(parts)}</div></div>'
        f'<p class="note">{note}</p>'
    )


def probes_html(watching: Watching, files: RunFiles) -> str:
    rows = []
    for probe in watching.probes:
        audio = files.link(probe.audio_file)
        player = (
            f'<audio class="remark-audio" controls preload="metadata" src="{escape(audio)}"></audio>' if audio else ""
        )
        verdict = judged(probe, watching)
        outcome = "silent" if probe.silent else OUTCOME_NAMES.get(probe.outcome or "", probe.outcome or "-")
        outcome += " (echo)" if probe.echo else ""
        rows.append(
            f'<tr class="w-row-{escape(probe.outcome or "silent")}"><td>{probe.n}</td>'
            f"<td>{_s(probe.asked_ms) if probe.asked_ms is not None else 'unprompted'}</td>"
            f"<td>{'-' if probe.scene is None else probe.scene}</td><td>{_s(probe.spoke_ms)}</td>"
            f"<td>{escape(probe.text)}{player}</td><td>{escape(outcome)}</td><td>{escape(verdict)}</td></tr>"
        )
    head = (
        "<tr><th>check-in</th><th>asked</th><th>scene shown</th><th>spoke</th><th>answer</th><th>outcome</th>"
        "<th>judge</th></tr>"
    )
    return f'<table class="w-probes">{head}{"".join(rows)}</table>' if rows else '<p class="note">No check-in.</p>'


def watching_html(watching: Watching, files: RunFiles | None) -> str:
    event = (
        "a quiet control: any remark is a false alarm"
        if watching.kind == "quiet"
        else f"event at {_s(watching.onset_ms)}, on time until {_s(watching.window_end_ms)}; "
        f"{watching.outcome or 'not scored'}"
    )
    files = files or RunFiles(Path("."), Path("."))
    return (
        f'<div class="watching"><p class="note">{escape(event)}; expected: '
        f"{escape(', '.join(watching.expected) or '-')}</p>{strip_html(watching, files)}"
        f"{probes_html(watching, files)}</div>"
    )


STYLE = """
.w-strip{position:relative;height:190px;background:#f6f8fb;border:1px solid #ccd;border-radius:4px;margin:.3rem 0}
.w-track{position:absolute;left:40px;right:40px;top:0;bottom:0}
.w-scene{position:absolute;bottom:0;height:14px} .w-scene-0{background:#c9d7e8} .w-scene-1{background:#a9bfd9}
.w-change{position:absolute;top:0;bottom:0;width:0;border-left:2px solid #2f855a;z-index:2}
.w-window{position:absolute;top:0;bottom:14px;background:#f6e05e55;border-left:1px dashed #b7791f;
border-right:1px dashed #b7791f} .w-window-label{position:absolute;top:2px;right:4px;font-size:11px;color:#744210}
.w-thumb{position:absolute;width:72px;transform:translateX(-36px);border:1px solid #556;z-index:1}
.w-thumb:hover{width:160px;transform:translateX(-80px);z-index:6}
.w-probe{position:absolute;bottom:14px;height:10px;width:0;border-left:2px solid #333;z-index:3}
.w-probe-silent{border-color:#a0aec0}
.w-remark{position:absolute;font-size:11px;line-height:15px;white-space:nowrap;padding:0 3px;border-radius:3px;
border-left:3px solid;background:#fff;z-index:4}
.w-remark.flip{transform:translateX(-100%);border-left:none;border-right:3px solid}
.w-hit{border-color:#2f855a;color:#22543d} .w-late{border-color:#dd6b20;color:#7b341e}
.w-false_alarm{border-color:#c53030;color:#742a2a} .w-duplicate{border-color:#6b46c1;color:#44337a}
.w-unscored{border-color:#718096;color:#4a5568}
.w-probes td{vertical-align:top;font-size:13px} .w-probes audio{display:block;margin-top:2px}
.w-row-hit td{background:#f0fff4} .w-row-false_alarm td{background:#fff5f5}
"""
