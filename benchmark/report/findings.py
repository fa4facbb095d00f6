"""Render findings.md from a run's summary alone (`benchmark.scoring.summary_view.RunSummary`; nothing
else is read): the headline and the lead here, the tables per condition in `findings_tables`, the sweeps
in `findings_sweeps`."""

from __future__ import annotations

from benchmark.judges.kinds import offline_kind
from benchmark.report.camera_text import camera_text_note
from benchmark.report.cite import cite_line
from benchmark.report.cost import budget_lead, cost_section
from benchmark.report.faults import fault_lead, fault_section
from benchmark.report.findings_sweeps import (  # noqa: F401 (plots and tests take them from here)
    NO_FRAMES_WARNING,
    POLICY_NOTES,
    frame_policy_section,
    impairment_section,
    staleness_section,
    staleness_without_frames,
)
from benchmark.report.findings_tables import (
    breakdown_section,
    conditions_section,
    confusion_section,
    judge_notes_section,
    latency_section,
    matrix_section,
    perception_section,
    subsets_section,
)
from benchmark.report.frame_source import frame_source_text
from benchmark.report.human_check import human_check_line
from benchmark.report.interval_text import interval_sentence
from benchmark.report.text_format import LINE_BREAKS, cell_text, interval, one_line, pct, seconds, table  # noqa: F401 (other modules import them from here too)
from benchmark.scoring.summary_view import ManifestField, RunSummary
from candidates.providers import bundled_model_id

MANIFEST_ORDER = (
    "benchmark_version",
    "schema_revision",
    "camera_injection",
    "scenarios_sha256",
    "expected_answers_sha256",
    "interventions_sha256",
    "judge_prompt_version",
    "judge_prompt_sha256",
    "candidate_model",
    "candidate_model_file",
    "judge_model",
    "judge_family",
    "judge_family_resolution",
    "ranking_judge",
    "trials",
    "temperature",
    "ranking_condition",
    "timestamp_utc",
    "runner_git_commit",
)


def scored_cells(run: RunSummary, condition: str | None = None) -> tuple[int, int]:
    """(scored trials, cells) of a condition, by default the ranking condition.

    Cells are the trials recorded for the condition, or, when the manifest
    planned more (scenario ids x trials x the sweep's gaps and policies, a
    shard's share of them), the planned cells: a run stopped early has cells
    that were never played, and they are not scored either.
    """
    condition = condition or run.primary.condition
    row = run.counts.of(condition)
    result = run.conditions.get(condition)
    scored = result.scored if result is not None else 0
    manifest = run.manifest
    ids, trials, names = manifest.scenario_ids, manifest.trials, manifest.conditions
    planned = 0
    cells = manifest.planned  # a shard's own cells only
    if cells is not None:
        planned = sum(cell[0] == condition for cell in cells)
    elif ids is not None and trials is not None and (names is None or condition in names):
        planned = len(ids) * trials
    return scored, max(row.trials if row.recorded else scored, planned)


def is_measurement(run: RunSummary, condition: str | None = None) -> bool:
    """At least half the cells of the condition (default: the ranking condition) are scored."""
    scored, cells = scored_cells(run, condition)
    return cells > 0 and 2 * scored >= cells


def headline(run: RunSummary, *, markdown: bool = False) -> str:
    """The headline line of a run: findings.md, the viewer, `wearsim report` and `wearsim bench`.

    When fewer than half the cells of the ranking condition are scored it leads
    with that ("13 of 50 scored: not a measurement"), not with a percentage.
    `markdown=True` is findings.md's sentence with the lead in bold; otherwise
    the one line the commands print.
    """
    primary = run.primary
    condition = primary.condition
    accuracy = pct(primary.balanced_accuracy)
    ci = interval(primary.ci_low, primary.ci_high)
    scored, cells = scored_cells(run)
    if is_measurement(run):
        aside = left_out(run, scored)
        if markdown:
            return (
                f"**Balanced Turn 2 accuracy ({condition}): {accuracy}**, 95% CI {ci}, over {primary.n} "
                f"of the {scored} labelled trials ({primary.scenarios} scenarios; {primary.condition_reason})"
                + (f": {aside} are not in it (the Per class table has them)." if aside else ".")
            )
        return (
            f"balanced Turn 2 accuracy ({condition}): {accuracy} 95% CI {ci} "
            f"({primary.n} trials of {primary.scenarios} scenarios; {scored} of {cells} scored"
            + (f"; {aside} not in it)" if aside else ")")
        )
    row = run.counts.of(condition)
    missing = cells - row.trials
    why = f"{condition}: {row.unscored} unscored, {row.errored} errored" + (f", {missing} not run" if missing else "")
    lead = f"{scored} of {cells} scored: not a measurement"
    known = primary.balanced_accuracy is not None
    if markdown:
        aside = (
            f"; over the scored trials alone the balanced Turn 2 accuracy would be {accuracy}, 95% CI {ci}"
            if known
            else ""
        )
        return (
            f"**{lead}** ({why}). Fewer than half the cells of the `{condition}` prompt (the one "
            f"the headline ranks on) have a label for their Turn 2 reply, so no accuracy is reported{aside}."
        )
    aside = f"; balanced Turn 2 accuracy over the scored trials alone {accuracy}" if known else ""
    return f"{lead} ({why}{aside})"


def left_out(run: RunSummary, scored: int) -> str | None:
    """The labelled trials the balanced accuracy leaves out: those whose right answer is neither the current
    nor the earlier scene ("the 3 whose right answer is to ask which (clarify) or to decline (abstain)")."""
    missing = scored - run.primary.n
    if missing <= 0:
        return None
    kinds = [c for c in ("clarify", "abstain") if c not in run.primary.classes]
    what = {"clarify": "to ask which (clarify)", "abstain": "to decline (abstain)"}
    said = " or ".join(what[c] for c in kinds) or "not a scene"
    return f"the {missing} whose right answer is {said}"


def error_lead(run: RunSummary, *, markdown: bool = False) -> str | None:
    """When any cell errored, the line that says so first: "3 of 50 cells errored"."""
    counts = run.counts
    errored, cells = counts.errored, counts.trials
    if not errored:
        return None
    lead = f"{errored} of {cells} cells errored"
    if markdown:
        return (
            f"**{lead}** ({pct(errored / cells if cells else None)}): they are excluded from every number "
            "below, and each one's reason is in its trial record in transcripts.jsonl. "
            "`wearsim bench --resume` runs them again."
        )
    return lead


BUNDLED = bundled_model_id()  # the model id of the bundled stand-in model


def _lead(run: RunSummary) -> list[str]:
    """The paragraphs under the headline, for someone who has not read the spec: when no accuracy can be
    reported, what happened and why; when the candidate is the bundled stand-in, what its number is worth;
    in both, what the run did show and what to run next."""
    manifest, condition = run.manifest, run.primary.condition
    measured, model = is_measurement(run), manifest.candidate_model
    if measured and model != BUNDLED:
        return []
    row = run.counts.of(condition)
    scored, cells = scored_cells(run)
    ran, errored, unscored = row.trials, row.errored, row.unscored
    judge = manifest.judge_model or manifest.judge_family or "the judge"
    lines = [
        f"What happened: {ran} of the {cells} cells of the `{condition}` prompt played all their "
        f"turns"
        + (
            f" and {errored} failed with an error (their reasons are in transcripts.jsonl)"
            if errored
            else " without an error"
        )
        + f"; the judge (`{judge}`) labelled {scored} of the "
        "Turn 2 replies (current, prior, clarify or abstain)"
        + ("." if measured else ". An accuracy needs at least half of them labelled.")
    ]
    if model == BUNDLED:
        lines += [
            "",
            "The candidate is `local`, the bundled 135M-parameter stand-in model: it is there so that "
            "every part runs without a key, not to answer well, and most of its replies are fluent "
            "noise. "
            + (
                "Its number shows the pipeline works end to end, not how an assistant keeps up with a changing scene."
                if measured
                else ""
            ),
        ]
    if unscored and not measured:
        why = ", ".join(f"{n} {reason}" for reason, n in sorted(row.unscored_reasons.items(), key=lambda kv: -kv[1]))
        text = f"Why {unscored} replies have no label ({why}): "
        if kind := offline_kind(judge):
            text += f"the `{kind.name}` judge {kind.unlabelled_why}"
        else:
            text += "the judge could not label them (see each trial's `turn_2_judge_unscored_reason`)"
        lines += ["", text + "."]
    shown = []
    if run.perception is not None and (wer := run.perception.speech_wer) is not None:
        shown.append(
            f"Whisper's transcripts had a median word error rate of {wer.median:.2f} against the "
            f"lines the glasses spoke ({wer.n} turns)"
        )
    first, done = run.latency.stage("first_token_s"), run.latency.stage("reply_done_s")
    if first.n and done.n:
        shown.append(
            f"from {run.latency.measured_from or 'the request'}, the first words of a reply came after "
            f"{seconds(first.p50)} and the whole reply after {seconds(done.p50)} (medians)"
        )
    if shown:
        lines += ["", "What the run did show: " + "; ".join(shown) + "."]
    path = "RUN_DIR"  # this run's folder: findings are rendered from the summary alone, wherever it is
    lines += [
        "",
        "Next, for a number that says something about a model:",
        "",
        f"- label the same replies with a model judge: `wearsim rescore {path} --judge-family openai "
        f"--output-dir {path}-rescored` (needs OPENAI_API_KEY, or `--judge-base-url` for a local "
        "OpenAI-compatible server; gemini and claude work too);",
        "- or run a real candidate: `wearsim bench --model openai:MODEL --base-url URL`, URL being any "
        "OpenAI-compatible server's (llama.cpp, vLLM, Ollama; e.g. port 8000 on this machine, path /v1) or, "
        "with a key, `--model openai:gpt-4o-mini`.",
        "",
    ]
    return lines


def _headline(run: RunSummary) -> list[str]:
    gaps = sorted({int(g) for per in run.by_staleness.values() for g in per})
    errors = error_lead(run, markdown=True)
    stopped = budget_lead(run, markdown=True)
    turns_ok = fault_lead(run.faults, markdown=True)
    return [
        "# Findings",
        "",
        *([turns_ok, ""] if turns_ok else []),
        *([errors, ""] if errors else []),
        *([stopped, ""] if stopped else []),
        " ".join(filter(None, (headline(run, markdown=True), camera_text_note(run)))),
        "",
        *([frames, ""] if (frames := frame_source_text(run)) else []),
        *_lead(run),
        interval_sentence(run.primary),
        "",
        human_check_line(run.human_check),
        "",
        *(
            [
                f"This run is a staleness sweep: the figure above pools its {len(gaps)} Turn 2 gaps "
                f"({', '.join(f'{g} ms' for g in gaps)}); the Staleness section has each gap on its own."
                + (f" {NO_FRAMES_WARNING}" if staleness_without_frames(run) else ""),
                "",
            ]
            if gaps
            else []
        ),
    ]


# a stream run's manifest value that stands for a default, as findings say it (the value as written is in
# manifest.json): the bundled Whisper model, frames sent as the glasses captured them
STREAM_DEFAULTS = {
    "asr_model": (None, "tiny.en (the bundled Whisper model)"),
    "frame_size": (0, "as captured"),
    "frame_quality": (0, "as captured"),
}


def manifest_value(entry: ManifestField, stream: bool) -> str:
    """One manifest value for the Manifest table (`stream`: of a stream run): a default said in words, a
    dict or list pointed to."""
    if entry.nested:
        return "(see summary.json)"
    if stream and entry.key in STREAM_DEFAULTS and entry.value == STREAM_DEFAULTS[entry.key][0]:
        return STREAM_DEFAULTS[entry.key][1]
    return f"`{entry.value}`"


def _manifest(run: RunSummary) -> list[str]:
    """Every manifest key: the known ones first; a stream run's defaults said in words."""
    given = {entry.key: entry for entry in run.manifest.fields}
    keys = [k for k in MANIFEST_ORDER if k in given] + sorted(k for k in given if k not in MANIFEST_ORDER)
    stream = run.manifest.via == "stream"
    rows = [[f"`{k}`", manifest_value(given[k], stream)] for k in keys]
    return ["## Manifest", "", *(table(["field", "value"], rows) if rows else ["(no manifest)"]), ""]


def render_findings(run: RunSummary) -> str:
    from benchmark.report.proactive_findings import is_proactive, render_proactive_findings

    if is_proactive(run):
        return f"{render_proactive_findings(run).rstrip()}\n\n{cite_line(run.manifest)}\n"
    run = one_line(run)
    lines = _headline(run) + conditions_section(run) + subsets_section(run)
    lines += breakdown_section(run.by_cue_type, "shift type (cue_type)")
    lines += breakdown_section(run.by_difficulty, "difficulty tier")
    lines += staleness_section(run) + frame_policy_section(run) + impairment_section(run)
    lines += perception_section(run) + latency_section(run)
    lines += cost_section(run, table) + fault_section(run.faults, table)
    lines += confusion_section(run) + matrix_section(run) + judge_notes_section(run) + _manifest(run)
    plots = "Plots: `plots/balanced_accuracy.png`, `plots/accuracy_by_cue_type.png`, `plots/confusion.png`."
    return "\n".join([*lines, plots, "", cite_line(run.manifest), ""])
