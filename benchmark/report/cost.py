"""What a run cost, as findings.md, the terminal and the viewer show it (from summary.json's `cost`)."""

from __future__ import annotations

from benchmark.scoring.summary_view import RunSummary


def usd(value: float | None) -> str:
    """Dollars with enough digits for a fraction of a cent; `unknown` for null."""
    if value is None:
        return "unknown"
    if value == 0:
        return "$0"
    if abs(value) < 0.000001:
        return f"${value:.1e}"
    if abs(value) >= 1:
        return f"${value:,.2f}"
    return f"${value:.6f}".rstrip("0")


def spend(row: dict, part: str, key: str | None = None) -> str:
    """A cost block's `{part}_usd` (or `key`) in words: `unpriced` when it is unknown because a model of
    that part has no price (a judge a custom endpoint named, say: never priced at another model's rates),
    else as `usd` says it."""
    value = row.get(key or f"{part}_usd")
    if value is None and any(str(why).startswith("no price for") for why in row.get(f"{part}_unknown") or ()):
        return "unpriced"
    return usd(value)


def per_correct(row: dict) -> str:
    """A cost block's spend per correct Turn 2 answer, or why there is none."""
    if row.get("per_correct_turn2_usd") is None and row.get("correct_turn2") == 0:
        return "n/a (no correct answer)"
    return usd(row.get("per_correct_turn2_usd"))


def budget_lead(run: RunSummary, *, markdown: bool = False) -> str | None:
    """When the run stopped on its budget: the line that says so, and how many cells remain."""
    budget = run.cost.get("budget") or {}
    if not budget.get("stopped_on_budget"):
        return None
    why = (
        "a reply's cost could not be known (" + "; ".join(budget.get("unknown") or []) + ")"
        if budget.get("unknown")
        else f"{usd(budget.get('spent_usd'))} spent of the {usd(budget.get('budget_usd'))} budget"
    )
    lead = f"The run stopped on its budget: {budget.get('cells_remaining')} cells remain"
    if markdown:
        finish = (
            "Once what the reason names is changed, the same `wearsim bench` command finishes the run (a "
            "larger `--budget` alone does not help)."
            if budget.get("unknown")
            else "The same `wearsim bench` command with a larger `--budget` finishes the run."
        )
        return (
            f"**{lead}** ({why}). No new cell started once the budget was passed; the numbers below cover "
            f"the cells that ran. {finish}"
        )
    return f"{lead} ({why})"


def cost_line(run: RunSummary) -> str:
    """One line for `wearsim bench`: the ranking condition's cost."""
    condition = run.primary.condition
    row = (run.cost.get("conditions") or {}).get(condition)
    if not row:
        return "cost: no finished trials"
    transcribed = (
        f" (input transcription {usd(row.get('transcription_usd'))} of it)" if row.get("transcription") else ""
    )
    text = (
        f"cost ({condition}): candidate {spend(row, 'candidate')}{transcribed}, judge "
        f"{spend(row, 'judge')} over {row['trials']} trials; per correct Turn 2 answer {per_correct(row)}"
    )
    if row["unknown"]:
        text += f" (unknown: {'; '.join(row['unknown'][:3])})"
    return text


def tokens_text(tokens: dict | None) -> str:
    """A usage object (`Usage.to_json`) in words; `?` where the provider did not say."""
    if not tokens:
        return "none (no model was asked)"

    def part(name: str) -> str:
        value = tokens.get(name)
        return "?" if value is None else f"{value:,}"

    return (
        f"in {part('input_tokens')} (text {part('input_text_tokens')}, audio {part('input_audio_tokens')}, "
        f"image {part('input_image_tokens')}; cached {part('cached_input_tokens')}), out "
        f"{part('output_tokens')} (text {part('output_text_tokens')}, audio {part('output_audio_tokens')})"
    )


def transcription_text(model: str, usage: dict) -> str:
    """One transcription model's usage (summary.json's `transcription` entry) in words."""
    parts = []
    if usage.get("input_tokens") or usage.get("output_tokens"):

        def part(name: str) -> str:
            value = usage.get(name)
            return "?" if value is None else f"{value:,}"

        parts.append(
            f"in {usage['input_tokens']:,} tokens (audio {part('input_audio_tokens')}, text "
            f"{part('input_text_tokens')}), out {usage['output_tokens']:,}"
        )
    if usage.get("seconds"):
        parts.append(f"{usage['seconds']:,.1f} s of audio billed by the minute")
    if not usage.get("reported", True):
        parts.append("some usage not reported")
    return f"`{model}` over {usage.get('turns', '?')} turns: {'; '.join(parts) or 'nothing billed'}"


def _transcription_lines(block: dict, table) -> list[str]:
    """The input transcription, apart: what it cost per condition and what was billed."""
    rows = {name: r for name, r in (block.get("conditions") or {}).items() if r.get("transcription")}
    if not rows:
        return []
    lines = [
        "",
        "Input transcription: the realtime API transcribes the user's speech with a model of its own and "
        "bills it apart from the reply, by tokens or by the second, priced by that model's entry. It is "
        "part of the candidate's spend above.",
        "",
    ]
    lines += table(
        ["condition", "input transcription", "share of the candidate's spend"],
        [
            [
                name,
                usd(r.get("transcription_usd")),
                f"{r['transcription_usd'] / r['candidate_usd']:.1%}"
                if r.get("transcription_usd") is not None and r.get("candidate_usd")
                else "n/a",
            ]
            for name, r in rows.items()
        ],
    )
    run = (block.get("run") or {}).get("transcription") or {}
    lines += ["", *(f"Transcribed: {transcription_text(model, usage)}." for model, usage in run.items())]
    return lines


def cost_section(run: RunSummary, table) -> list[str]:
    """findings.md's "Cost" section; `table` is findings' markdown table builder."""
    block = run.cost
    rows = block.get("conditions") or {}
    if not rows:
        return []
    lines = [
        "## Cost",
        "",
        f"USD, priced with {block.get('prices_from', 'the shipped table')}: each reply's tokens by modality "
        "(text, audio, image; cached input apart) times the model's price per million tokens. Per correct "
        "Turn 2 answer: the candidate's spend divided by its correct Turn 2 answers. A model or a kind of "
        "token with no price gives an unknown cost, never 0. Errored trials are left out (their replies "
        "are not recorded).",
        "",
    ]
    lines += table(
        [
            "condition",
            "candidate",
            "judge",
            "candidate per trial",
            "judge per trial",
            "per correct Turn 2",
            "correct / trials",
        ],
        [
            [
                name,
                spend(r, "candidate"),
                spend(r, "judge"),
                spend(r, "candidate", "candidate_usd_per_trial"),
                spend(r, "judge", "judge_usd_per_trial"),
                per_correct(r),
                f"{r['correct_turn2']} / {r['trials']}",
            ]
            for name, r in rows.items()
        ],
    )
    for condition, gaps in (block.get("by_staleness") or {}).items():
        lines += ["", f"Per staleness gap ({condition}):", ""]
        lines += table(
            ["gap", "candidate", "per trial", "per correct Turn 2", "correct / trials"],
            [
                [
                    f"{gap} ms",
                    usd(r["candidate_usd"]),
                    usd(r["candidate_usd_per_trial"]),
                    per_correct(r),
                    f"{r['correct_turn2']} / {r['trials']}",
                ]
                for gap, r in gaps.items()
            ],
        )
    for condition, policies in (block.get("by_frame_policy") or {}).items():
        lines += ["", f"Per frame policy ({condition}):", ""]
        lines += table(
            ["policy", "candidate", "per trial", "per correct Turn 2", "correct / trials"],
            [
                [
                    f"`{policy}`",
                    usd(r["candidate_usd"]),
                    usd(r["candidate_usd_per_trial"]),
                    per_correct(r),
                    f"{r['correct_turn2']} / {r['trials']}",
                ]
                for policy, r in policies.items()
            ],
        )
    lines += _transcription_lines(block, table)
    totals = block.get("run") or {}
    lines += [
        "",
        f"Tokens of the candidate: {tokens_text(totals.get('candidate_tokens'))}.",
        f"Tokens of the judges: {tokens_text(totals.get('judge_tokens'))}. (`?`: the provider did not say.)",
    ]
    unknown = totals.get("unknown") or []
    if unknown:
        lines += ["", "Why a cost is unknown:", "", *(f"- {why}" for why in unknown[:10])]
    bounds = totals.get("upper_bound") or []
    if bounds:
        lines += ["", "Where a figure is an upper bound:", "", *(f"- {note}" for note in bounds[:10])]
    for problem in block.get("price_problems") or []:
        lines += ["", f"- a recorded price could not be read: {problem}"]
    budget = block.get("budget")
    if budget:
        lines += [
            "",
            f"Budget: {usd(budget['budget_usd'])}; spent by the run (replies from the response cache "
            f"not counted again): {usd(budget['spent_usd'])}"
            + (f"; stopped with {budget['cells_remaining']} cells not run." if budget["stopped_on_budget"] else "."),
        ]
    return lines + [""]
