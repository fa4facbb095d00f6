"""findings.md of a proactive run (`wearsim bench --subset proactive`), from summary.json alone.

It leads with the two numbers a user weighs: events caught on time and
false alarms per minute of stream, for each condition and grid cell
(strategy x frame policy), then states the scoring rule, then the grid,
then every trial's remarks.
"""

from __future__ import annotations

from benchmark.judges.kinds import offline_kind
from benchmark.report.human_check import human_check_line
from benchmark.report.text_format import interval, one_line, pct, table
from benchmark.scoring.blind import blind_line
from benchmark.scoring.summary_view import RunManifest, RunSummary
from candidates.providers import bundled_model_id


def is_proactive(run: RunSummary) -> bool:
    """The run's trials are proactive ones (and none of them is a question-and-answer trial)."""
    return bool(run.proactive) and not run.conditions


def _cells(run: RunSummary):
    for condition, cells in run.proactive.items():
        for name, cell in cells.items():
            yield condition, name, cell


def _rate(block: dict) -> str:
    if not block["n"]:
        return "n/a (none)"
    method = "" if block["ci_method"] in (None, "bootstrap") else f", {block['ci_method']}"
    ci = interval(block["ci_low"], block["ci_high"])
    return f"{pct(block['rate'])} ({block['k']}/{block['n']}), 95% CI {ci}{method}"


def speak_text(cell: dict) -> str:
    """The time to speak, p50 / p95 with n; one hit gives one value, shown once with n = 1."""
    n = cell.get("time_to_speak_n")
    if n is None:  # a summary from before n was kept
        return f"{_seconds(cell['time_to_speak_p50_s'])} / {_seconds(cell['time_to_speak_p95_s'])}"
    if not n:
        return "none (no hit)"
    if n == 1:
        return f"{cell['time_to_speak_p50_s']:.1f} s (n = 1)"
    return f"{cell['time_to_speak_p50_s']:.1f} / {cell['time_to_speak_p95_s']:.1f} s (n = {n})"


def cost_text(cell: dict, model: str | None, hours: float | None = None) -> str:
    """The candidate's cost per hour watched: free for the local model, unknown when a price or a usage is."""
    from candidates.model_ids import is_local

    if is_local(model or ""):
        return "free (local)"
    if cell["cost_per_hour_usd"] is None:
        return "unknown"
    return f"${cell['cost_per_hour_usd']:.4f}/h" + ("" if hours is None else f" over {hours:.2f} h")


def _per_min(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f} s"


def cell_line(condition: str, name: str, cell: dict, *, markdown: bool = False) -> str:
    """One cell's two numbers in a sentence."""
    bold = "**" if markdown else ""
    quiet = cell["quiet_controls"]
    return (
        f"{bold}Events caught on time ({condition}, {name}): {cell['hits']} of {cell['events']}{bold} "
        f"(recall {_rate(cell['recall'])}); {bold}false alarms: {_per_min(cell['false_alarms_per_min'])} per "
        f"minute{bold} of stream ({cell['false_alarms']} in {cell['stream_minutes']:.1f} min, "
        f"{cell['false_alarms_in_quiet_controls']} of them in {quiet} quiet control{'s' * (quiet != 1)}"
        f"{_echoes(cell)})."
    )


def _echoes(cell: dict) -> str:
    """The remarks that only echoed the user's words or the camera text, counted apart (an older
    summary has no count)."""
    n = cell.get("echoes")
    if not n:
        return ""
    return f"; {n} remark{'s' * (n != 1)} only echoed the user's words or the camera text"


def starved_lead(run: RunSummary) -> str | None:
    """When trials were starved (the model slower than the stream: `scoring.proactive.starved_reason`):
    how many, why, that they are left out, and what to do. None when none was."""
    reasons: dict[str, int] = {}
    for _, _, cell in _cells(run):
        for why, n in (cell.get("starved_reasons") or {}).items():
            reasons[why] = reasons.get(why, 0) + n
    total = sum(reasons.values())
    if not total:
        return None
    said = "; ".join(f"{n}: {why}" for why, n in sorted(reasons.items(), key=lambda kv: -kv[1]))
    return (
        f"**{total} trial{'s' * (total != 1)} starved: this machine was too slow for the stream's pace** ({said}). "
        "The model's replies were still running when the check-ins were due, so these trials never had "
        "their chance: they are counted apart, neither a hit nor a miss, and left out of the numbers above. "
        "The stream always plays in real time, so run again with fewer sessions at once (`--concurrency 1`), "
        "fewer strategies or frame policies per run, on a quieter machine, or with a faster model."
    )


def proactive_headline(run: RunSummary) -> str:
    """The CLI's closing lines: the blind camera's warning, then one per condition and cell."""
    blind = blind_line(run.blind_camera)
    starved = (starved_lead(run) or "").replace("**", "").replace("`", "")
    cells = [cell_line(c, n, cell) for c, n, cell in _cells(run)]
    return "\n".join([*([blind] if blind else []), *cells, *([starved] if starved else [])])


def _listed(values: tuple[str, ...] | None) -> str:
    """A manifest list as the Manifest line has always shown it (a Python list; None when not recorded)."""
    return str(None if values is None else list(values))


def render_proactive_findings(run: RunSummary) -> str:
    run = one_line(run)
    manifest: RunManifest = run.manifest
    lines = ["# Findings: proactive trials", ""]
    if blind := blind_line(run.blind_camera):
        lines += [f"**{blind}**", ""]
    for c, n, cell in _cells(run):
        lines += [cell_line(c, n, cell, markdown=True), ""]
    if starved := starved_lead(run):
        lines += [starved, ""]
    lines += [
        f"How it is scored: {run.proactive_rule} Recall is hits over events; precision "
        "is hits over hits plus false alarms; false alarms per minute count every minute streamed, quiet "
        "controls and event scenarios alike; the time to speak runs from the event's onset to the first text "
        "or audio of the remark that hit. Intervals are a bootstrap over scenarios, or the Wilson interval "
        "when there are fewer than 10 scenarios (docs/proactive.md).",
        "",
    ]
    if manifest.candidate_model == bundled_model_id():
        lines += [
            "The candidate is `local`, the bundled 135M-parameter stand-in model: it shows the pipeline runs, "
            "not how an assistant watches; it rarely answers with the silence marker, so expect a false "
            "alarm on most check-ins (the question, at each chance to speak, whether anything needs saying).",
            "",
        ]
    lines += [human_check_line(run.human_check), ""]
    if kind := offline_kind(manifest.judge_family):
        lines += [f"The judge is `{kind.name}`: {kind.remark_rule}.", ""]
    rows = [
        [
            c,
            n,
            _rate(cell["recall"]),
            _rate(cell["precision"]),
            _per_min(cell["false_alarms_per_min"]),
            speak_text(cell),
            str(cell["late"]),
            str(cell["duplicates"]),
            str(cell.get("echoes", "-")),
            str(cell["unscored_remarks"]),
            f"{cell['probes']} ({cell['silent_probes']} silent"
            + (f", {cell['probes_skipped']} skipped by the server's pace)" if cell.get("probes_skipped") else ")"),
            cost_text(cell, manifest.candidate_model),
        ]
        for c, n, cell in _cells(run)
    ]
    lines += ["## Grid", "", "One row per condition and cell (strategy, and frame policy when swept).", ""]
    lines += table(
        [
            "condition",
            "cell",
            "recall",
            "precision",
            "false alarms / min",
            "time to speak p50 / p95",
            "late",
            "duplicates",
            "echoes",
            "unscored",
            "check-ins",
            "cost / hour watched",
        ],
        rows,
    )
    unknown = sorted({why for _, _, cell in _cells(run) for why in cell["cost_unknown"]})
    if unknown:
        lines += ["", "Cost unknown: " + "; ".join(unknown[:5])]
    lines += [
        "",
        "Plot: `plots/proactive.png` (events caught on time against false alarms per minute, one point "
        "per condition and cell).",
    ]
    lines += [
        "",
        "## Trials",
        "",
        "Each trial's outcome and remarks (stream seconds; the event's window in brackets).",
        "",
    ]
    rows = []
    for c, n, cell in _cells(run):
        for row in cell["scenarios"]:
            window = "quiet" if row["kind"] == "quiet" else f"[{row['onset_s']:.0f}, {row['window_end_s']:.0f}]"
            remarks = (
                "; ".join(
                    f"{r['at_s']:.1f} s {r['outcome'] or '?'}{' (echo)' * bool(r.get('echo'))}: {r['text'][:80]}"
                    for r in row["remarks"]
                    if r["at_s"] is not None
                )
                or "none"
            )
            rows.append(
                [
                    c,
                    n,
                    f"{row['scenario_id']} t{row['trial']}",
                    window,
                    f"starved ({row['starved']})" if row.get("starved") else row["outcome"] or "-",
                    f"{row['probes']}",
                    remarks,
                ]
            )
    lines += table(["condition", "cell", "trial", "window", "event", "check-ins", "remarks"], rows)
    lines += [
        "",
        "## Manifest",
        "",
        f"candidate `{manifest.candidate_model}`, judge "
        f"`{manifest.judge_model}`, strategies {_listed(manifest.proactive)}, frame policies "
        f"{_listed(manifest.frame_policies) if manifest.frame_policies else 'the server default (fps:1)'}, "
        f"describer `{manifest.describer}`; every field is in summary.json.",
        "",
    ]
    return "\n".join(lines)
