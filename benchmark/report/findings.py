"""Render findings.md from a summary dict alone (nothing else is read)."""

from __future__ import annotations

from core.records import LATENCY_STAGES
from benchmark.report.camera_text import camera_text_note
from benchmark.report.cite import cite_line
from benchmark.report.cost import budget_lead, cost_section
from benchmark.report.faults import fault_lead, fault_section
from benchmark.report.frame_source import PICTOGRAPH_NOTE, frame_source_text, frame_table, perceived_label
from benchmark.report.human_check import human_check_line
from benchmark.report.interval_text import interval_sentence
from benchmark.report.text_format import (  # noqa: F401 (other modules import them from here too)
    LINE_BREAKS, cell_text, interval, one_line, pct, table)
from benchmark.scoring.trials import LABELS
from benchmark.shards import planned_cells

MANIFEST_ORDER = (
    "benchmark_version", "schema_revision", "camera_injection", "scenarios_sha256",
    "expected_answers_sha256", "interventions_sha256", "judge_prompt_version", "judge_prompt_sha256",
    "candidate_model", "candidate_model_file", "judge_model", "judge_family", "judge_family_resolution", "ranking_judge",
    "trials", "temperature", "ranking_condition", "timestamp_utc", "runner_git_commit",
)


def scored_cells(summary: dict, condition: str | None = None) -> tuple[int, int]:
    """(scored trials, cells) of a condition, by default the ranking condition.

    Cells are the trials recorded for the condition, or, when the manifest
    planned more (scenario ids x trials x the sweep's gaps and policies, a
    shard's share of them), the planned cells: a run stopped early has cells
    that were never played, and they are not scored either.
    """
    condition = condition or summary["primary"]["condition"]
    row = summary["counts"].get("by_condition", {}).get(condition, {})
    scored = summary["conditions"].get(condition, {}).get("scored", 0)
    manifest = summary["manifest"]
    ids, trials, names = manifest.get("scenario_ids"), manifest.get("trials"), manifest.get("conditions")
    planned = 0
    cells = planned_cells(manifest)  # a shard's own cells only
    if cells is not None:
        planned = sum(cell[0] == condition for cell in cells)
    elif isinstance(ids, list) and isinstance(trials, int) and not isinstance(trials, bool) \
            and (not isinstance(names, list) or condition in names):
        planned = len(ids) * trials
    return scored, max(row.get("trials", scored), planned)


def is_measurement(summary: dict, condition: str | None = None) -> bool:
    """At least half the cells of the condition (default: the ranking condition) are scored."""
    scored, cells = scored_cells(summary, condition)
    return cells > 0 and 2 * scored >= cells


def headline(summary: dict, *, markdown: bool = False) -> str:
    """The headline line of a run: findings.md, the viewer, `wearsim report` and `wearsim bench`.

    When fewer than half the cells of the ranking condition are scored it leads
    with that ("13 of 50 scored: not a measurement"), not with a percentage.
    `markdown=True` is findings.md's sentence with the lead in bold; otherwise
    the one line the commands print.
    """
    primary = summary["primary"]
    condition = primary["condition"]
    accuracy = pct(primary["balanced_accuracy"])
    ci = interval(primary["ci_low"], primary["ci_high"])
    scored, cells = scored_cells(summary)
    if is_measurement(summary):
        if markdown:
            return (f"**Balanced Turn 2 accuracy ({condition}): {accuracy}**, 95% CI {ci}, over {primary['n']} "
                    f"scored trials of {primary['scenarios']} scenarios ({primary['condition_reason']}).")
        return (f"balanced Turn 2 accuracy ({condition}): {accuracy} 95% CI {ci} "
                f"(n={primary['n']}, {primary['scenarios']} scenarios; {scored} of {cells} scored)")
    row = summary["counts"].get("by_condition", {}).get(condition, {})
    missing = cells - row.get("trials", 0)
    why = (f"{condition}: {row.get('unscored', 0)} unscored, {row.get('errored', 0)} errored"
           + (f", {missing} not run" if missing else ""))
    lead = f"{scored} of {cells} scored: not a measurement"
    known = primary["balanced_accuracy"] is not None
    if markdown:
        aside = (f"; over the scored trials alone the balanced Turn 2 accuracy would be {accuracy}, 95% CI {ci}"
                 if known else "")
        return (f"**{lead}** ({why}). Fewer than half the cells of the `{condition}` prompt (the one "
                f"the headline ranks on) have a label for their Turn 2 reply, so no accuracy is reported{aside}.")
    aside = f"; balanced Turn 2 accuracy over the scored trials alone {accuracy}" if known else ""
    return f"{lead} ({why}{aside})"


def error_lead(summary: dict, *, markdown: bool = False) -> str | None:
    """When any cell errored, the line that says so first: "3 of 50 cells errored"."""
    counts = summary["counts"]
    errored, cells = counts.get("errored", 0), counts.get("trials", 0)
    if not errored:
        return None
    lead = f"{errored} of {cells} cells errored"
    if markdown:
        return (f"**{lead}** ({pct(errored / cells if cells else None)}): they are excluded from every number "
                "below, and each one's reason is in its trial record in transcripts.jsonl. "
                "`wearsim bench --resume` runs them again.")
    return lead


BUNDLED = "local"  # the model id of the bundled stand-in model


def _lead(summary: dict) -> list[str]:
    """The paragraphs under the headline, for someone who has not read the spec: when no accuracy can be
    reported, what happened and why; when the candidate is the bundled stand-in, what its number is worth;
    in both, what the run did show and what to run next."""
    manifest, condition = summary["manifest"], summary["primary"]["condition"]
    measured, model = is_measurement(summary), manifest.get("candidate_model")
    if measured and model != BUNDLED:
        return []
    row = summary["counts"].get("by_condition", {}).get(condition, {})
    scored, cells = scored_cells(summary)
    ran, errored, unscored = row.get("trials", 0), row.get("errored", 0), row.get("unscored", 0)
    reasons = row.get("unscored_reasons") or {}
    judge = manifest.get("judge_model") or manifest.get("judge_family") or "the judge"
    lines = [f"What happened: {ran} of the {cells} cells of the `{condition}` prompt played all their "
             f"turns" + (f" and {errored} failed with an error (their reasons are in transcripts.jsonl)"
                         if errored else " without an error") + f"; the judge (`{judge}`) labelled {scored} of the "
             "Turn 2 replies (current, prior, clarify or abstain)"
             + ("." if measured else ". An accuracy needs at least half of them labelled.")]
    if model == BUNDLED:
        lines += ["", "The candidate is `local`, the bundled 135M-parameter stand-in model: it is there so that "
                      "every part runs without a key, not to answer well, and most of its replies are fluent "
                      "noise. " + ("Its number shows the pipeline works end to end, not how an assistant keeps "
                                   "up with a changing scene." if measured else "")]
    if unscored and not measured:
        why = ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1]))
        text = f"Why {unscored} replies have no label ({why}): "
        if judge == "lexical":
            text += ("the `lexical` judge only looks for each scenario's answer words, and leaves a reply "
                     "unlabelled rather than guess")
        else:
            text += f"the judge could not label them (see each trial's `turn_2_judge_unscored_reason`)"
        lines += ["", text + "."]
    perception, latency = summary.get("perception"), summary.get("latency") or {}
    shown = []
    if perception and perception.get("speech_wer"):
        wer = perception["speech_wer"]
        shown.append(f"Whisper's transcripts had a median word error rate of {wer['median']:.2f} against the "
                     f"lines the glasses spoke ({wer['n']} turns)")
    first, done = latency.get("first_token_s") or {}, latency.get("reply_done_s") or {}
    if first.get("n") and done.get("n"):
        shown.append(f"from {latency.get('measured_from', 'the request')}, the first words of a reply came after "
                     f"{_seconds(first['p50'])} and the whole reply after {_seconds(done['p50'])} (medians)")
    if shown:
        lines += ["", "What the run did show: " + "; ".join(shown) + "."]
    run = "RUN_DIR"  # this run's folder: findings are rendered from the summary alone, wherever it is
    lines += ["", "Next, for a number that says something about a model:", "",
              f"- label the same replies with a model judge: `wearsim rescore {run} --judge-family openai "
              f"--output-dir {run}-rescored` (needs OPENAI_API_KEY, or `--judge-base-url` for a local "
              "OpenAI-compatible server; gemini and claude work too);",
              "- or run a real candidate: `wearsim bench --model openai:MODEL --base-url URL`, URL being any "
              "OpenAI-compatible server's (llama.cpp, vLLM, Ollama; e.g. port 8000 on this machine, path /v1) or, "
              "with a key, `--model openai:gpt-4o-mini`.", ""]
    return lines


def _headline(summary: dict) -> list[str]:
    gaps = sorted({int(g) for per in (summary.get("by_staleness") or {}).values() for g in per})
    errors = error_lead(summary, markdown=True)
    stopped = budget_lead(summary, markdown=True)
    turns_ok = fault_lead(summary, markdown=True)
    return [
        "# Findings",
        "",
        *([turns_ok, ""] if turns_ok else []),
        *([errors, ""] if errors else []),
        *([stopped, ""] if stopped else []),
        " ".join(filter(None, (headline(summary, markdown=True), camera_text_note(summary)))),
        "",
        *([frames, ""] if (frames := frame_source_text(summary)) else []),
        *_lead(summary),
        interval_sentence(summary["primary"]),
        "",
        human_check_line(summary),
        "",
        *([f"This run is a staleness sweep: the figure above pools its {len(gaps)} Turn 2 gaps "
           f"({', '.join(f'{g} ms' for g in gaps)}); the Staleness section has each gap on its own."
           + (f" {NO_FRAMES_WARNING}" if staleness_without_frames(summary) else ""), ""] if gaps else []),
    ]


def _manifest(summary: dict) -> list[str]:
    manifest = summary["manifest"]
    keys = [k for k in MANIFEST_ORDER if k in manifest] + sorted(k for k in manifest if k not in MANIFEST_ORDER)
    rows = [[f"`{k}`", f"`{manifest[k]}`" if not isinstance(manifest[k], (dict, list)) else "(see summary.json)"]
            for k in keys]
    return ["## Manifest", "", *(table(["field", "value"], rows) if rows else ["(no manifest)"]), ""]


def _conditions(summary: dict) -> list[str]:
    lines = ["## Conditions", ""]
    rows = []
    for name, cond in summary["conditions"].items():
        rows.append([name, pct(cond["balanced_accuracy"]), cell_text(cond["per_class"]["current"]),
                     cell_text(cond["per_class"]["prior"]), str(cond["scored"])])
    lines += table(["condition", "balanced accuracy", "current", "prior", "scored trials"], rows)
    lines += ["", "## Per class", "",
              "Accuracy with a 95% Wilson interval. `clarify` and `abstain` are auxiliary rows: they do not "
              "enter the balanced accuracy. A class with no trials shows n/a.", ""]
    names = list(summary["conditions"])
    rows = []
    for label in LABELS:
        role = "primary" if label in summary["primary"]["classes"] else "auxiliary"
        rows.append([label, role, *(cell_text(summary["conditions"][n]["per_class"][label]) for n in names)])
    lines += table(["class", "role", *names], rows)
    lines += ["", "## Repair (Turn 3)", "",
              "Repair rate = Turn 3 passes / Turn 2 misses whose repair anchor was sent and judged.", ""]
    rows = []
    for name, cond in summary["conditions"].items():
        r = cond["repair_rate"]
        rows.append([name, pct(r["rate"]), f"{r['k']}/{r['n']}", interval(r["ci_low"], r["ci_high"]),
                     str(r["turn_2_misses"]), str(r["turn_3_unscored"]), str(r["not_attempted"])])
    lines += table(["condition", "repair rate", "k/n", "95% Wilson", "Turn 2 misses", "Turn 3 unscored",
                    "repair not sent"], rows)
    return lines + [""]


def _breakdown(summary: dict, key: str, title: str) -> list[str]:
    data = summary[key]
    names = list(data)
    values = sorted({v for per in data.values() for v in per})
    rows = [[v, *(cell_text(data[n][v]) if v in data[n] else "-" for n in names)] for v in values]
    return [f"## By {title}", "", "Turn 2 accuracy over all target contexts.", "",
            *table([title, *names], rows), ""]


def _confusion(summary: dict) -> list[str]:
    condition = summary["primary"]["condition"]
    data = summary["confusion"].get(condition)
    if not data:
        return []
    cols = [*LABELS, "unscored"]
    rows = [[target, *(str(data[target][c]) for c in cols)] for target in LABELS]
    return [f"## Confusion ({condition})", "", "Rows: target context; columns: Turn 2 judge label.", "",
            *table(["target \\ judge", *cols], rows), ""]


def _matrix(summary: dict) -> list[str]:
    names = list(summary["conditions"])
    rows = []
    for sid, row in summary["scenario_matrix"].items():
        cells = []
        for name in names:
            c = row["conditions"].get(name)
            if c is None:
                cells.append("-")
                continue
            parts = [f"{c['pass']} pass", f"{c['repair_pass']} fail->repair-pass", f"{c['repair_fail']} fail->repair-fail"]
            parts += [f"{c[k]} {name}" for k, name in (("repair_missing", "fail->repair-unjudged"),
                                                       ("unscored", "unscored"), ("errored", "errored")) if c[k]]
            cells.append(", ".join(parts))
        rows.append([sid, row["target_context"], row["cue_type"], *cells])
    return ["## Scenario by condition", "",
            "Trials per outcome: pass; fail->repair-pass; fail->repair-fail (and any fail->repair-unjudged: "
            "its Turn 3 unscored or not sent, the Repair table's last two columns; unscored; errored).", "", *table(["scenario", "target", "shift type", *names], rows), ""]


def _judge_notes(summary: dict) -> list[str]:
    manifest = summary["manifest"]
    counts = summary["counts"]
    lines = ["## Judge notes", ""]
    family = manifest.get("judge_family")
    lines.append(f"- Judge: family `{family or 'unknown'}`, model `{manifest.get('judge_model') or '-'}`"
                 + (f" ({manifest['judge_family_resolution']})" if manifest.get("judge_family_resolution") else "") + ".")
    if family == "lexical":
        lines.append("- **The judge is `lexical` (answer-list matching, no model). It is not the publication "
                     "judge: use an LLM judge from another family than the candidate for numbers you report.**")
    lines.append(f"- Trials: {counts['trials']}; scored {counts['scored']}; Turn 2 unscored (judge label null) "
                 f"{counts['turn_2_unscored']}; errored {counts['errored']}; Turn 3 sent {counts['turn_3_attempted']}, "
                 f"of which unscored {counts['turn_3_unscored']}. Unscored and errored trials are excluded from "
                 "every accuracy.")
    if counts.get("superseded_records"):
        lines.append(f"- {counts['superseded_records']} earlier record(s) were replaced by a later record of the same cell.")
    agreement = summary.get("judge_agreement")
    if agreement:
        kappa = "n/a" if agreement["kappa"] is None else f"{agreement['kappa']:.3f}"
        lines.append(f"- Judge agreement ({agreement['between']}): {pct(agreement['agreement'])} over "
                     f"{agreement['n']} trials, Cohen's kappa {kappa}.")
    code = summary["code_signal_disagreement"]
    lines.append(f"- Code signals vs judge: the code-signal label differs from the judge label in "
                 f"{code['disagree']} of {code['n']} comparable trials ({pct(code['rate'])}); trials whose "
                 "signals match no list or several lists are not comparable.")
    worst = sorted(code["by_scenario"].items(), key=lambda kv: (-kv[1]["disagree"], kv[0]))
    worst = [(sid, row) for sid, row in worst if row["disagree"]]
    if worst:
        lines += ["", *table(["scenario", "disagree", "comparable", "rate"],
                              [[sid, str(r["disagree"]), str(r["n"]), pct(r["rate"])] for sid, r in worst])]
    return lines + [""]


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f} s"


def _staleness(summary: dict) -> list[str]:
    sweep = summary.get("by_staleness") or {}
    if not sweep:
        return []
    manifest = summary["manifest"]
    lines = ["## Staleness sweep", "",
             "Turn 2 speech began this many ms after the scene changed (the first Turn 2 frame). Accuracy is "
             "Turn 2 accuracy over all target contexts; 'answered from the earlier scene' is the share of scored "
             "replies labelled `prior` among trials whose target is not `prior`. 95% Wilson intervals.", ""]
    if manifest.get("synthetic_frames"):
        lines += ["Frames without a recording were synthetic: the authored camera text drawn on a plain frame "
                  f"(describer `{manifest.get('describer')}`). With the `authored` describer the assistant sees "
                  "the text proxy, so only frame timing can move these numbers; a vision model reading drawn "
                  "text measures plumbing and timing, not perception.", ""]
    elif manifest.get("pictograph_frames"):
        lines += [PICTOGRAPH_NOTE, ""]
    if staleness_without_frames(summary):
        lines += [f"**{NO_FRAMES_WARNING}**", ""]
    for condition, gaps in sweep.items():
        ages = any(row.get("frame_age_p50_s") is not None for row in gaps.values())
        rows = [[f"{gap} ms", cell_text(row["accuracy"]), cell_text(row["earlier_scene"]),
                 *([_seconds(row.get("frame_age_p50_s"))] if ages else []), str(row["trials"])]
                for gap, row in gaps.items()]
        header = ["gap", "Turn 2 accuracy", "answered from the earlier scene",
                  *(["newest frame's age at the end of speech (median)"] if ages else []), "trials"]
        lines += [f"### {condition}", "", *table(header, rows), ""]
    return lines + ["Plot: `plots/staleness.png`.", ""]


POLICY_NOTES = {
    "end": "the newest frame at the end of speech: it sees the moment the question ended, which no "
           "client streaming ahead of the question can; an upper bound",
    "fps": "a fixed rate (Google's Live API console sends about 0.5 a second; pipecat's realtime "
           "services at most 1)",
    "speech": "one rate while the user speaks and another otherwise (LiveKit Agents: 1 and 0.3)",
    "change": "a frame when the picture changed, up to a maximum rate",
}


def _frame_policies(summary: dict) -> list[str]:
    sweep = summary.get("by_frame_policy") or {}
    if not sweep:
        return []
    policies = list(dict.fromkeys(p for per in sweep.values() for p in per))
    kinds = list(dict.fromkeys(p.split(":")[0] for p in policies))
    lines = ["## Frame policy", "",
             "Which camera frames reached the assistant. One cell per policy: "
             + "; ".join(f"`{kind}`: {POLICY_NOTES[kind]}" for kind in kinds if kind in POLICY_NOTES) + ".",
             "",
             "'Stale frame' is the share of Turn 2 questions whose newest frame sent by the end of speech "
             "still showed the earlier scene (the glasses know which scene each frame shows); 'answered from "
             "the earlier scene' is the share of scored replies labelled `prior` among trials whose target is "
             "not `prior`. Frame age is the newest sent frame's age at the end of Turn 2's speech. Frames and "
             "KB per turn count Turns 1 and 2 (the camera is off on Turn 3). 95% Wilson intervals.", ""]
    if summary["manifest"].get("synthetic_frames"):
        lines += ["Frames without a recording were synthetic (the authored camera text drawn on a plain frame, "
                  f"describer `{summary['manifest'].get('describer')}`): only which frame arrived, and when, "
                  "can move these numbers.", ""]
    elif summary["manifest"].get("pictograph_frames"):
        lines += [PICTOGRAPH_NOTE, ""]
    header = ["policy", "Turn 2 accuracy", "answered from the earlier scene", "stale frame", "frame age p50",
              "frame age p95", "frames / turn", "KB / turn", "frames / min", "trials"]

    def row(name: str, cells: dict) -> list[str]:
        kb = cells.get("bytes_sent_per_turn")
        return [name, cell_text(cells["accuracy"]), cell_text(cells["earlier_scene"]),
                cell_text(cells["stale_frame_rate"]) if cells.get("stale_frame_rate") else "n/a",
                _seconds(cells.get("frame_age_p50_s")), _seconds(cells.get("frame_age_p95_s")),
                "n/a" if cells.get("frames_sent_per_turn") is None else f"{cells['frames_sent_per_turn']:.1f}",
                "n/a" if kb is None else f"{kb / 1000:.1f}",
                "n/a" if cells.get("frames_per_minute") is None else f"{cells['frames_per_minute']:.1f}",
                str(cells["trials"])]

    for condition, per in sweep.items():
        lines += [f"### {condition}", "", *table(header, [row(f"`{p}`", cells) for p, cells in per.items()]), ""]
        gaps = [(p, gap, cells) for p, per_policy in per.items() for gap, cells in (per_policy.get("by_gap") or {}).items()]
        if len({gap for _, gap, _ in gaps}) > 1:
            lines += [f"Per Turn 2 gap (speech began this many ms after the scene changed), {condition}:", "",
                      *table(["policy", "gap", *header[1:]],
                             [[f"`{p}`", f"{gap} ms", *row(p, cells)[1:]] for p, gap, cells in gaps]), ""]
    return lines + ["Plot: `plots/frame_policy.png` (accuracy and stale-frame rate against frames sent a minute).",
                    ""]


def _impairments(summary: dict) -> list[str]:
    sweep = summary.get("by_impairment") or {}
    if not sweep:
        return []
    manifest = summary["manifest"]
    lines = ["## Real-world conditions (impairment profiles)", "",
             "The simulated glasses played each cell under an impairment profile (media_effects/impairments.toml, "
             "docs/impairments.md): noise and reverb on the audio, blur, darkness, shake and occlusion on the "
             f"frames, latency, loss and a bandwidth cap on the uplink; seed {manifest.get('impairment_seed', 0)}. "
             "Word error rate: the transcript the assistant got against the line the glasses spoke (mean over "
             "turns). Camera similarity: the share of the authored camera text's words found in the described "
             f"camera block (mean over turns with a described frame; describer `{manifest.get('describer')}`). "
             "Against clean: each impaired cell paired with the same clean cell (scored in both), Turn 2 "
             "accuracy difference with a paired bootstrap interval over scenarios and an exact McNemar test.", ""]
    if manifest.get("describer") == "authored":
        lines += ["The `authored` describer reads a synthetic frame's text from its JPEG comment, which no "
                  "video impairment touches: use `--describer ocr` to let blur and darkness reach the camera "
                  "block.", ""]

    def number(value, form="{:.3f}"):
        return "n/a" if value is None else form.format(value)

    for condition, rows in sweep.items():
        body = []
        for profile, row in rows.items():
            against = row.get("against_clean")
            paired = ("n/a" if not against or not against["pairs"] else
                      f"{100 * against['difference']:+.1f} pts [{100 * against['ci_low']:+.1f}, "
                      f"{100 * against['ci_high']:+.1f}], p = {against['p_value']:.3g}, {against['pairs']} pairs"
                      if against["ci_low"] is not None else f"{100 * against['difference']:+.1f} pts, "
                      f"{against['pairs']} pairs")
            body.append([f"`{profile}`", cell_text(row["accuracy"]), number(row["word_error_rate"]),
                         number(row["camera_similarity"]), _seconds(row["reply_done_p50_s"]),
                         number(row["audio_chunks_lost_per_trial"], "{:.1f}"),
                         number(row["frames_lost_per_trial"], "{:.1f}"), paired, str(row["trials"])])
        lines += [f"### {condition}", "",
                  *table(["profile", "Turn 2 accuracy", "word error rate", "camera similarity", "reply done p50",
                          "audio chunks lost / trial", "frames lost / trial", "Turn 2 against clean", "trials"],
                         body), ""]
    return lines


NO_FRAMES_WARNING = ("No Turn 2 of this sweep sent a camera frame, so the gap cannot change what the model saw: "
                     "differences between gaps are noise or speech timing, not staleness. Record frames "
                     "(`wearsim serve --record`) or add --synthetic-frames.")


def staleness_without_frames(summary: dict) -> bool:
    """A staleness sweep none of whose Turn 2s sent a frame (older summaries, without the count: False)."""
    sweep = summary.get("by_staleness") or {}
    rows = [row for gaps in sweep.values() for row in gaps.values()]
    return bool(rows) and all("with_frames" in row for row in rows) and not any(row["with_frames"] for row in rows)


def _latency(summary: dict) -> list[str]:
    latency = summary.get("latency") or {}
    names = (("first_token_s", "first reply text"), ("first_audio_s", "first reply audio"),
             ("first_voice_s", "first reply speech (voice to voice)"), ("reply_done_s", "reply done"))
    rows = [[name, _seconds(row["p50"]), _seconds(row["p95"]), str(row["n"])]
            for key, name in names if (row := latency.get(key)) and row["n"]]
    if not rows:
        return []
    backend = summary["manifest"].get("candidate_model") or "the candidate"
    return [f"## Latency ({backend})", "",
            f"Per turn, over every turn of every finished trial, in seconds from {latency['measured_from']}.", "",
            *table(["", "p50", "p95", "turns"], rows), ""]


def _subsets(summary: dict) -> list[str]:
    rows = summary.get("by_subset") or {}
    if not rows:
        return []
    condition = summary["primary"]["condition"]
    table_rows = [[name + (" (the headline)" if name == "bank" else ""), pct(row["balanced_accuracy"]),
                   interval(row["ci_low"], row["ci_high"]), f"{row['scored']} / {row['trials']}",
                   str(row["scenarios"])] for name, row in rows.items()]
    return [f"## Subsets ({condition})", "",
            "The headline is the bank subset's; the contrast subset (minimal pairs, the earlier object still "
            "in view) is reported on its own row.", "",
            *table(["subset", "balanced Turn 2 accuracy", "95% CI", "scored / trials", "scenarios"], table_rows), ""]


def _perception(summary: dict) -> list[str]:
    data = summary.get("perception")
    if not data:
        return []
    names = {"perceived": perceived_label(summary), "authored": "authored text (fallback)",
             "media": "media sent to the model", "none": "nothing sent"}
    rows = [[channel, *(f"{counts.get(k, 0)}" for k in names)] for channel, counts in data["sources"].items()]
    labels = {**LATENCY_STAGES, "asr_decode_s": "Whisper decode"}
    stages = [[labels[stage], _seconds(row["p50"]), _seconds(row["p95"]), str(row["n"])]
              for stage, row in data["stages_s"].items()]
    wer = data.get("speech_wer")
    heard = ([f"Word error rate of the transcript the assistant got, against the scenario's line the glasses "
              f"spoke: mean {wer['mean']:.3f}, median {wer['median']:.3f}, over {wer['n']} turns (0 is exact).", ""]
             if wer else [])
    return ["## Perception (simulated glasses)", "",
            f"Where each channel's content came from, over the {data['turns']} turns played. The flips "
            "perception caused, against a text-proxy run: `wearsim proxy-report TEXT_RUN THIS_RUN`.",
            "", *heard, *table(["channel", *names.values()], rows), "", *frame_table(summary, table),
            *table(["stage", "p50", "p95", "turns"], stages), ""]


def render_findings(summary: dict) -> str:
    from benchmark.report.proactive_findings import is_proactive, render_proactive_findings

    if is_proactive(summary):
        return f"{render_proactive_findings(summary).rstrip()}\n\n{cite_line(summary)}\n"
    summary = one_line(summary)
    lines = _headline(summary) + _conditions(summary) + _subsets(summary)
    lines += _breakdown(summary, "by_cue_type", "shift type (cue_type)")
    lines += _breakdown(summary, "by_difficulty", "difficulty tier")
    lines += _staleness(summary) + _frame_policies(summary) + _impairments(summary)
    lines += _perception(summary) + _latency(summary)
    lines += cost_section(summary, table) + fault_section(summary, table)
    lines += _confusion(summary) + _matrix(summary) + _judge_notes(summary) + _manifest(summary)
    plots = "Plots: `plots/balanced_accuracy.png`, `plots/accuracy_by_cue_type.png`, `plots/confusion.png`."
    return "\n".join([*lines, plots, "", cite_line(summary), ""])
