"""findings.md's tables per condition: conditions, classes and repair, the breakdowns, subsets,
perception, latency, the confusion matrix, scenario by condition and the judge notes."""

from __future__ import annotations

from benchmark.judges.kinds import is_offline, offline_kind
from benchmark.report.frame_source import frame_table, perceived_label
from benchmark.report.text_format import cell_text, interval, pct, seconds, table
from benchmark.scoring.summary_view import RunSummary
from benchmark.scoring.trials import LABELS
from core.records import LATENCY_STAGES


def conditions_section(run: RunSummary) -> list[str]:
    lines = ["## Conditions", ""]
    rows = [
        [
            name,
            pct(cond.balanced_accuracy),
            cell_text(cond.per_class["current"]),
            cell_text(cond.per_class["prior"]),
            str(cond.scored),
            str(
                sum(
                    int(cond.per_class[c]["n"])
                    for c in (run.primary.classes or ("current", "prior"))
                    if c in cond.per_class
                )
            ),
        ]
        for name, cond in run.conditions.items()
    ]
    lines += table(
        ["condition", "balanced accuracy", "current", "prior", "scored trials", "of them in the balanced accuracy"],
        rows,
    )
    lines += [
        "",
        "## Per class",
        "",
        "Accuracy with a 95% Wilson interval. `clarify` and `abstain` are auxiliary rows: they do not "
        "enter the balanced accuracy. A class with no trials shows n/a.",
        "",
    ]
    names = list(run.conditions)
    rows = [
        [
            label,
            "primary" if label in run.primary.classes else "auxiliary",
            *(cell_text(run.conditions[n].per_class[label]) for n in names),
        ]
        for label in LABELS
    ]
    lines += table(["class", "role", *names], rows)
    lines += [
        "",
        "## Repair (Turn 3)",
        "",
        "Repair rate = Turn 3 passes / Turn 2 misses whose repair anchor was sent and judged.",
        "",
    ]
    rows = []
    for name, cond in run.conditions.items():
        r = cond.repair_rate
        rows.append(
            [
                name,
                pct(r.rate),
                f"{r.k}/{r.n}",
                interval(r.ci_low, r.ci_high),
                str(r.turn_2_misses),
                str(r.turn_3_unscored),
                str(r.not_attempted),
            ]
        )
    lines += table(
        ["condition", "repair rate", "k/n", "95% Wilson", "Turn 2 misses", "Turn 3 unscored", "repair not sent"], rows
    )
    return lines + [""]


def breakdown_section(data: dict[str, dict], title: str) -> list[str]:
    """A breakdown (`by_cue_type`, `by_difficulty`): condition -> value -> cell."""
    names = list(data)
    values = sorted({v for per in data.values() for v in per})
    rows = [[v, *(cell_text(data[n][v]) if v in data[n] else "-" for n in names)] for v in values]
    return [f"## By {title}", "", "Turn 2 accuracy over all target contexts.", "", *table([title, *names], rows), ""]


def subsets_section(run: RunSummary) -> list[str]:
    if not run.by_subset:
        return []
    rows = [
        [
            name + (" (the headline)" if name == "bank" else ""),
            pct(row["balanced_accuracy"]),
            interval(row["ci_low"], row["ci_high"]),
            f"{row['scored']} / {row['trials']}",
            str(row["scenarios"]),
        ]
        for name, row in run.by_subset.items()
    ]
    return [
        f"## Subsets ({run.primary.condition})",
        "",
        "The headline is the bank subset's; the contrast subset (minimal pairs, the earlier object still "
        "in view) is reported on its own row.",
        "",
        *table(["subset", "balanced Turn 2 accuracy", "95% CI", "scored / trials", "scenarios"], rows),
        "",
    ]


def perception_section(run: RunSummary) -> list[str]:
    data = run.perception
    if data is None:
        return []
    names = {
        "perceived": perceived_label(run),
        "authored": "authored text (fallback)",
        "media": "media sent to the model",
        "none": "nothing sent",
    }
    rows = [[channel, *(f"{counts.get(k, 0)}" for k in names)] for channel, counts in data.sources.items()]
    labels = {**LATENCY_STAGES, "asr_decode_s": "Whisper decode"}
    stages = [[labels[stage], seconds(row.p50), seconds(row.p95), str(row.n)] for stage, row in data.stages_s.items()]
    wer = data.speech_wer
    heard = (
        [
            f"Word error rate of the transcript the assistant got, against the scenario's line the glasses "
            f"spoke: mean {wer.mean:.3f}, median {wer.median:.3f}, over {wer.n} turns (0 is exact).",
            "",
        ]
        if wer
        else []
    )
    return [
        "## Perception (simulated glasses)",
        "",
        f"Where each channel's content came from, over the {data.turns} turns played. The flips "
        "perception caused, against a text-proxy run: `wearsim proxy-report TEXT_RUN THIS_RUN`.",
        "",
        *heard,
        *table(["channel", *names.values()], rows),
        "",
        *frame_table(run, table),
        *table(["stage", "p50", "p95", "turns"], stages),
        "",
    ]


LATENCY_NAMES = (
    ("first_token_s", "first reply text"),
    ("first_audio_s", "first reply audio"),
    ("first_voice_s", "first reply speech (voice to voice)"),
    ("reply_done_s", "reply done"),
)


def latency_section(run: RunSummary) -> list[str]:
    latency = run.latency
    rows = [
        [name, seconds(row.p50), seconds(row.p95), str(row.n)]
        for key, name in LATENCY_NAMES
        if (row := latency.stage(key)).n
    ]
    if not rows:
        return []
    backend = run.manifest.candidate_model or "the candidate"
    return [
        f"## Latency ({backend})",
        "",
        f"Per turn, over every turn of every finished trial, in seconds from {latency.measured_from}.",
        "",
        *table(["", "p50", "p95", "turns"], rows),
        "",
    ]


def confusion_section(run: RunSummary) -> list[str]:
    condition = run.primary.condition
    data = run.confusion.get(condition)
    if not data:
        return []
    cols = [*LABELS, "unscored"]
    rows = [[target, *(str(data[target][c]) for c in cols)] for target in LABELS]
    return [
        f"## Confusion ({condition})",
        "",
        "Rows: target context; columns: Turn 2 judge label.",
        "",
        *table(["target \\ judge", *cols], rows),
        "",
    ]


def matrix_section(run: RunSummary) -> list[str]:
    names = list(run.conditions)
    rows = []
    for sid, row in run.scenario_matrix.items():
        cells = []
        for name in names:
            c = row["conditions"].get(name)
            if c is None:
                cells.append("-")
                continue
            parts = [
                f"{c['pass']} pass",
                f"{c['repair_pass']} fail->repair-pass",
                f"{c['repair_fail']} fail->repair-fail",
            ]
            parts += [
                f"{c[k]} {what}"
                for k, what in (
                    ("repair_missing", "fail->repair-unjudged"),
                    ("unscored", "unscored"),
                    ("errored", "errored"),
                )
                if c[k]
            ]
            cells.append(", ".join(parts))
        rows.append([sid, row["target_context"], row["cue_type"], *cells])
    return [
        "## Scenario by condition",
        "",
        "Trials per outcome: pass; fail->repair-pass; fail->repair-fail (and any fail->repair-unjudged: "
        "its Turn 3 unscored or not sent, the Repair table's last two columns; unscored; errored).",
        "",
        *table(["scenario", "target", "shift type", *names], rows),
        "",
    ]


def judge_notes_section(run: RunSummary) -> list[str]:
    manifest, counts = run.manifest, run.counts
    lines = ["## Judge notes", ""]
    family = manifest.judge_family
    lines.append(
        f"- Judge: family `{family or 'unknown'}`, model `{manifest.judge_model or '-'}`"
        + (f" at `{manifest.judge_endpoint}`" if manifest.judge_endpoint and not is_offline(family) else "")
        + (f" ({manifest.judge_family_resolution})" if manifest.judge_family_resolution else "")
        + "."
    )
    if (kind := offline_kind(family)) and not kind.publication:
        lines.append(
            f"- **The judge is `{kind.name}` ({kind.method}, no model). It is not the publication "
            "judge: use an LLM judge from another family than the candidate for numbers you report.**"
        )
    lines.append(
        f"- Trials: {counts.trials}; scored {counts.scored}; Turn 2 unscored (judge label null) "
        f"{counts.turn_2_unscored}; errored {counts.errored}; Turn 3 sent {counts.turn_3_attempted}, "
        f"of which unscored {counts.turn_3_unscored}. Unscored and errored trials are excluded from "
        "every accuracy."
    )
    if counts.superseded_records:
        lines.append(
            f"- {counts.superseded_records} earlier record(s) were replaced by a later record of the same cell."
        )
    agreement = run.judge_agreement
    if agreement:
        kappa = "n/a" if agreement.kappa is None else f"{agreement.kappa:.3f}"
        lines.append(
            f"- Judge agreement ({agreement.between}): {pct(agreement.agreement)} over "
            f"{agreement.n} trials, Cohen's kappa {kappa}."
        )
    code = run.code_signals
    lines.append(
        f"- Code signals vs judge: the code-signal label differs from the judge label in "
        f"{code.disagree} of {code.n} comparable trials ({pct(code.rate)}); trials whose "
        "signals match no list or several lists are not comparable."
    )
    worst = sorted(code.by_scenario.items(), key=lambda kv: (-kv[1]["disagree"], kv[0]))
    worst = [(sid, row) for sid, row in worst if row["disagree"]]
    if worst:
        lines += [
            "",
            *table(
                ["scenario", "disagree", "comparable", "rate"],
                [[sid, str(r["disagree"]), str(r["n"]), pct(r["rate"])] for sid, r in worst],
            ),
        ]
    return lines + [""]
