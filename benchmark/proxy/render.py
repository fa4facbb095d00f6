"""The proxy report's text, written for a reader new to the project.

`blocks(report)` turns the report dict into a list of plain blocks
(headings, paragraphs, lists, tables, images); `render_markdown` and
`benchmark.proxy.html.render_html` render the same blocks, so the two files
say the same thing.
"""

from __future__ import annotations

from benchmark.proxy.channels import ATTRIBUTION, CHANNELS, LATENCY_STAGES
from benchmark.proxy.plots import CATEGORY_NAMES
from benchmark.report.findings import one_line

Block = tuple  # ("h1"|"h2"|"h3"|"p", text) | ("list", [text]) | ("table", headers, rows) | ("img", plot, caption)

VIA = {
    "direct": "the text proxy (authored camera descriptions and utterances sent as text)",
    "stream": "the simulated glasses (speech through Whisper, frames through a scene describer, "
    "authored text where a channel has no media)",
}


# what a stream run's glasses sent where no recording exists (`pairing.frames_drawn`)
FRAMES_DRAWN = {
    "pictograph": "; frames without a recording were pictographs (each turn's scene spec drawn as "
    "pictures: objects, hands, setting, no caption)",
    "synthetic": "; frames without a recording were synthetic (the authored camera text drawn)",
}


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def pts(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:+.1f} pts"


def interval(low: float | None, high: float | None) -> str:
    return "n/a" if low is None or high is None else f"[{100 * low:+.1f}, {100 * high:+.1f}] pts"


def num(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


def _runs(report: dict) -> list[Block]:
    out: list[Block] = [("h2", "What is compared")]
    items = []
    for label, run in report["runs"].items():
        what = VIA.get(run["via"], f"a run made via {run['via']}")
        drawn = FRAMES_DRAWN.get(run.get("frames"), "")
        items.append(
            f"Run {label}: {run['path']}, {what}; candidate {run['candidate_model']}, "
            f"judge {run['judge_model'] or 'unknown'}, {run['trials']} trials{drawn}."
        )
    out.append(("list", items))
    out.append(
        (
            "p",
            "Each scenario is a two-turn conversation: at Turn 2 the user's situation has changed, and "
            "the judge labels the Turn 2 answer as being about the current scene, the prior one, a "
            "request to clarify, or an abstention. A trial passes when that label is the scenario's "
            "target. Trials are paired across the runs by scenario, prompt condition and trial index; "
            f"this report uses condition {report['condition']} ({report['condition_reason']}).",
        )
    )
    text = report["authored_text"]
    where = f"{text['source']} ({text['note']})" if text["used"] else f"none: {text['note']}"
    out.append(
        (
            "p",
            f"Bank: {report['bank_check']['note']}. Authored text the perceived channels are measured "
            f"against: {where}.",
        )
    )
    return out


def _headline(report: dict) -> list[Block]:
    head, cells = report["headline"], report["cells"]
    mc = head["mcnemar"]
    out: list[Block] = [("h2", "Headline"), ("p", head["text"])]
    out.append(
        (
            "table",
            ["measure", "A", "B", "B - A", "95% interval of B - A"],
            [
                [
                    "balanced Turn 2 accuracy (current, prior)",
                    pct(head["balanced_accuracy_a"]),
                    pct(head["balanced_accuracy_b"]),
                    pts(head["difference"]),
                    interval(head["ci_low"], head["ci_high"]),
                ],
                [
                    "flips (exact McNemar, two-sided)",
                    f"{mc['a_pass_b_fail']} passed only in A",
                    f"{mc['a_fail_b_pass']} passed only in B",
                    "",
                    f"p = {mc['p_value']:.3g}",
                ],
            ],
        )
    )
    if not head["is_measurement"] and head["scored_pairs"]:
        out.append(
            (
                "p",
                f"The figures above are computed on the {head['scored_pairs']} pair(s) scored on both "
                "sides only: a description of those pairs, not an estimate for the bank.",
            )
        )
    out.append(
        (
            "table",
            ["pairs of the condition", "count"],
            [
                ["cells in either run", cells["cells"]],
                ["cells in both runs", cells["in_both"]],
                ["scored on both sides (used above)", cells["scored_both"]],
                ["only in A / only in B", f"{cells['only_a']} / {cells['only_b']}"],
                ["errored in A / in B", f"{cells['errored_a']} / {cells['errored_b']}"],
                ["unscored by the judge in A / in B", f"{cells['unscored_a']} / {cells['unscored_b']}"],
            ],
        )
    )
    out.append(
        (
            "img",
            "paired_accuracy",
            "Left: balanced Turn 2 accuracy of each run. Right: the paired "
            "difference B - A (dot) and its 95% interval (line), overall and per shift type and target.",
        )
    )
    return out


def _reading(report: dict) -> list[Block]:
    boot = report["headline"]["bootstrap"]
    return [
        ("h2", "How to read the numbers"),
        (
            "list",
            [
                "Turn 2 accuracy: the share of trials whose Turn 2 answer got the scenario's target label.",
                "Balanced accuracy: the mean of the accuracy on scenarios whose target is current and on those whose "
                "target is prior, so neither kind outweighs the other. The per-group tables below pool all targets.",
                "B - A: how many percentage points run B scored above run A (negative: below).",
                f"95% interval: {boot['draws']:,} times, the scenarios are drawn again with replacement and the "
                "difference is recomputed with both runs on the same draw (seed "
                f"{boot['seed']}); the interval holds the middle 95% of those differences. If it contains 0, these "
                "scenarios cannot tell the two runs apart.",
                "A flip is a pair that passed in one run and failed in the other. McNemar's exact test asks whether "
                "flips in one direction outnumber the other by more than coin tosses would; p is that chance "
                "(two-sided). With 3 flips one way and 0 the other, p = 0.25.",
                "Perceived means a channel came from media (the Whisper transcript, a scene description of a frame); "
                "authored means the scenario's hand-written text was sent (the text proxy, or the glasses' fallback).",
            ],
        ),
    ]


def _groups(report: dict) -> list[Block]:
    headers = ["group", "pairs", "A", "B", "B - A", "95% interval", "only A passed", "only B passed", "McNemar p"]
    out: list[Block] = []
    for key, title in (("by_cue_type", "By shift type"), ("by_target_class", "By target class")):
        out.append(("h2", title))
        rows = [
            [
                r["group"],
                r["pairs"],
                pct(r["accuracy_a"]),
                pct(r["accuracy_b"]),
                pts(r["difference"]),
                interval(r["ci_low"], r["ci_high"]),
                r["a_pass_b_fail"],
                r["a_fail_b_pass"],
                f"{r['p_value']:.3g}",
            ]
            for r in report[key]
        ]
        out.append(
            (
                "p",
                "Turn 2 accuracy of the pairs scored on both sides, all targets pooled; interval and test as above."
                if rows
                else "No pairs scored on both sides.",
            )
        )
        if rows:
            out.append(("table", headers, rows))
    return out


def _channels(report: dict) -> list[Block]:
    ch = report["channels"]
    rows = []
    for channel in CHANNELS:
        for label in ("A", "B"):
            p = ch[label]["provenance"][channel]
            rows.append(
                [
                    channel + (" (Turn 1 only)" if channel == "context" else ""),
                    label,
                    p["perceived"],
                    p["authored"],
                    p["none"],
                ]
            )
    out: list[Block] = [
        ("h2", "Input channels"),
        (
            "p",
            "Turns 1 and 2 of every trial of the condition in each "
            "run (errored trials recorded no turns). Context is the camera block sent before Turn 1.",
        ),
        ("table", ["channel", "run", "perceived", "authored", "not sent"], rows),
    ]
    speech = {label: ch[label]["speech"] for label in ("A", "B")}
    out.append(("h3", "Speech recognition"))
    out.append(
        (
            "p",
            f"Measure: {speech['B']['measure']}. "
            + " ".join(
                f"Run {label}: no perceived speech."
                if not s["n"]
                else f"Run {label}: {s['n']} perceived utterances, mean {num(s['mean'])}, median {num(s['median'])}."
                for label, s in speech.items()
            ),
        )
    )
    worst = [
        [label, r["scenario_id"], r["trial"], r["turn"], num(r["wer"]), r["authored"], r["perceived"]]
        for label, s in speech.items()
        for r in s["worst"]
    ]
    if worst:
        out.append(("p", "Worst utterances (up to 10 per run):"))
        out.append(("table", ["run", "scenario", "trial", "turn", "WER", "authored", "Whisper heard"], worst))
        out.append(("img", "wer_histogram", "Word error rate per perceived utterance (0 = word for word)."))
    camera = {label: ch[label]["camera"] for label in ("A", "B")}
    out.append(("h3", "Scene descriptions"))
    texts = []
    for label, c in camera.items():
        if not c["n"]:
            texts.append(f"Run {label}: no perceived camera blocks.")
            continue
        nouns = ", ".join(f"{n} ({k})" for n, k in list(c["new_nouns"].items())[:8]) or "none"
        texts.append(
            f"Run {label}: {c['n']} perceived blocks; {c['with_new_object_nouns']} "
            f"({pct(c['new_object_noun_rate'])}) name an object noun the authored block did not "
            f"(the authoring rules forbid naming objects; most named: {nouns}); similarity to the "
            f"authored block mean {num(c['similarity']['mean'])}, median {num(c['similarity']['median'])}."
        )
    out.append(("p", " ".join(texts) + f" Similarity measure: {camera['B']['similarity']['measure']}."))
    least = [
        [label, r["scenario_id"], r["turn"], r["channel"], num(r["similarity"]), r["authored"], r["perceived"]]
        for label, c in camera.items()
        for r in c["least_similar"]
    ]
    if least:
        out.append(("table", ["run", "scenario", "turn", "block", "similarity", "authored", "described"], least))
    return out


def _attribution(report: dict) -> list[Block]:
    att = report["attribution"]
    c = att["counts"]
    out: list[Block] = [("h2", "Which channel moved the score")]
    if not att["total"]:
        out.append(
            (
                "p",
                "No flips: every pair scored on both sides passed in both runs or failed in both."
                if report["cells"]["scored_both"]
                else "No pair is scored on both sides, so no flip to attribute.",
            )
        )
        return out
    text = (
        f"Of {att['total']} flips, speech recognition errors could explain {c['speech']}, scene descriptions "
        f"{c['scene']}, both {c['both']}, neither (authored on both channels) {c['neither']}."
    )
    if c["unknown"]:
        text += f" {c['unknown']} come from records with no per-turn provenance."
    out.append(
        (
            "p",
            text + " A channel could explain a flip when it was perceived on Turn 1 or 2 of that "
            "trial (in either run); this is opportunity, not proof. A flip with neither channel perceived "
            "comes from something else: sampling, the judge, or the stream's timing.",
        )
    )
    out.append(
        (
            "table",
            [
                "scenario",
                "trial",
                "shift type",
                "target",
                "flip",
                "label A",
                "label B",
                "speech perceived on turns",
                "scene perceived on turns",
                "channels",
            ],
            [
                [
                    f["scenario_id"],
                    f["trial"],
                    f["cue_type"],
                    f["target_context"],
                    f["direction"],
                    f["label_a"],
                    f["label_b"],
                    ", ".join(map(str, f["speech_perceived_turns"])) or "-",
                    ", ".join(map(str, f["scene_perceived_turns"])) or "-",
                    CATEGORY_NAMES[f["category"]],
                ]
                for f in att["flips"]
            ],
        )
    )
    out.append(
        (
            "img",
            "flips_by_channel",
            "Flips per shift type and direction, coloured by perceived channels: "
            + ", ".join(CATEGORY_NAMES[k] for k in ATTRIBUTION if k != "unknown")
            + ".",
        )
    )
    return out


def _latency(report: dict) -> list[Block]:
    lat = {label: report["channels"][label]["latency"] for label in ("A", "B")}
    rows = [
        [text]
        + [
            v
            for label in ("A", "B")
            for v in (lat[label][name]["n"] or "-", seconds(lat[label][name]["p50"]), seconds(lat[label][name]["p95"]))
        ]
        for name, text in LATENCY_STAGES
    ]
    note = (
        "Seconds over Turns 1 and 2, from the end of the user's speech unless the stage says otherwise; "
        "p50 is the median, p95 the value 95% of turns stay under (linear interpolation). A text-proxy "
        "run records none of these. Turn 1 includes the model reading the system prompt."
    )
    return [
        ("h2", "Latency of the simulated glasses"),
        ("p", note),
        ("table", ["stage", "A n", "A p50", "A p95", "B n", "B p50", "B p95"], rows),
    ]


def blocks(report: dict) -> list[Block]:
    return [
        ("h1", "Proxy validation report"),
        ("p", report["question"]),
        *_runs(report),
        *_headline(report),
        *_reading(report),
        *_groups(report),
        *_channels(report),
        *_attribution(report),
        *_latency(report),
    ]


def _cell(value) -> str:
    return one_line(str(value)).replace("\\", "\\\\").replace("|", "\\|")


def render_markdown(report: dict, images: dict[str, str]) -> str:
    lines: list[str] = []
    for block in blocks(report):
        kind = block[0]
        if kind in ("h1", "h2", "h3"):
            lines += ["#" * int(kind[1]) + " " + one_line(block[1]), ""]
        elif kind == "p":
            lines += [one_line(block[1]), ""]
        elif kind == "list":
            lines += [f"- {one_line(item)}" for item in block[1]] + [""]
        elif kind == "table":
            lines.append("| " + " | ".join(_cell(h) for h in block[1]) + " |")
            lines.append("|" + "---|" * len(block[1]))
            lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in block[2]] + [""]
        elif kind == "img" and block[1] in images:
            lines += [f"![{block[1].replace('_', ' ')}]({images[block[1]]})", "", one_line(block[2]), ""]
    return "\n".join(lines)
