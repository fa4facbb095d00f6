"""Render findings.md from a summary dict alone (nothing else is read)."""

from __future__ import annotations

from benchmark.scoring.trials import LABELS

MANIFEST_ORDER = (
    "benchmark_version", "schema_revision", "camera_injection", "scenarios_sha256",
    "expected_answers_sha256", "interventions_sha256", "judge_prompt_version", "judge_prompt_sha256",
    "candidate_model", "judge_model", "judge_family", "judge_family_resolution", "ranking_judge",
    "trials", "temperature", "ranking_condition", "timestamp_utc", "runner_git_commit",
)


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def interval(low: float | None, high: float | None) -> str:
    return "n/a" if low is None or high is None else f"[{100 * low:.1f}%, {100 * high:.1f}%]"


def cell_text(cell: dict) -> str:
    return f"{pct(cell['accuracy'])} ({cell['k']}/{cell['n']}) {interval(cell['ci_low'], cell['ci_high'])}"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return lines


def _headline(summary: dict) -> list[str]:
    primary = summary["primary"]
    boot = primary["bootstrap"]
    return [
        "# Findings",
        "",
        f"**Balanced Turn 2 accuracy ({primary['condition']}): {pct(primary['balanced_accuracy'])}**, "
        f"95% CI {interval(primary['ci_low'], primary['ci_high'])}, over {primary['n']} scored trials "
        f"of {primary['scenarios']} scenarios ({primary['condition_reason']}).",
        "",
        f"The interval is a bootstrap that resamples {boot['resamples']} (the trials of one scenario are "
        f"not independent), {boot['draws']:,} draws, seed {boot['seed']}, {boot['interval']}. "
        f"Rule: {primary['rule']}.",
        "",
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
                    "no repair recorded"], rows)
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
            parts += [f"{c[k]} {k.replace('_', ' ')}" for k in ("repair_missing", "unscored", "errored") if c[k]]
            cells.append(", ".join(parts))
        rows.append([sid, row["target_context"], row["cue_type"], *cells])
    return ["## Scenario by condition", "",
            "Trials per outcome: pass; fail->repair-pass; fail->repair-fail (and any not repaired, unscored "
            "or errored).", "", *table(["scenario", "target", "shift type", *names], rows), ""]


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


def render_findings(summary: dict) -> str:
    lines = _headline(summary) + _manifest(summary) + _conditions(summary)
    lines += _breakdown(summary, "by_cue_type", "shift type (cue_type)")
    lines += _breakdown(summary, "by_difficulty", "difficulty tier")
    lines += _confusion(summary) + _matrix(summary) + _judge_notes(summary)
    lines += ["Plots: `plots/balanced_accuracy.png`, `plots/accuracy_by_cue_type.png`, `plots/confusion.png`.", ""]
    return "\n".join(lines)
