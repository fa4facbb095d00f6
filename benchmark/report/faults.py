"""What findings.md (and `wearsim bench`) say about faults: "turns OK" over every planned cell
first, then each category (`benchmark.faults`), from summary.json's `faults` block alone."""

from __future__ import annotations

from benchmark.scoring.summary_parts import Faults

MEANINGS = {
    "rate_limited": "the API said too many requests",
    "session_limit": "the API ended the live session (goAway, session expired)",
    "connection_lost": "the connection dropped and could not be replaced",
    "refused": "the API declined the request",
    "empty_reply": "a reply to Turn 1 or 2 had no text and no audio",
    "timeout": "no answer in time",
    "provider_error": "another error the API sent",
    "harness_error": "a fault of ours (our server, a bug, a setting)",
    "judge_unscored": "every turn answered; the judge gave Turn 2 no label",
}


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def fault_lead(faults: Faults | None, *, markdown: bool = False) -> str | None:
    """ "Turns OK: 47 of 50 planned cells (94.0%)", then each category's count and the cells not run;
    None for a summary written before faults were counted."""
    if faults is None:
        return None
    planned, ok = faults.planned, faults.ok
    parts = [f"{n} {category}" for category, n in faults.by_fault.items()]
    if faults.not_run:
        parts.append(f"{faults.not_run} not run")
    rest = "; ".join(parts) if parts else "no faults"
    lead = f"Turns OK: {ok} of {planned} planned cells"
    if markdown:
        return (
            f"**{lead}** ({_share(ok, planned)}): every turn answered and the judge labelled Turn 2; a cell "
            "whose Turn 2 the judge left unscored is not OK, nor is one that errored or did not run. "
            f"The others: {rest} (the Faults section says what each means)."
        )
    return f"{lead} ({_share(ok, planned)}; an unscored, errored or unrun cell is not OK); {rest}"


def fault_section(faults: Faults | None, table) -> list[str]:
    if faults is None:
        return []
    rows = [
        [
            f"`{category}`",
            str(n),
            _share(n, faults.planned),
            MEANINGS.get(category, ""),
            "yes" if category != "judge_unscored" else "no",
            faults.examples.get(category, "")[:160],
        ]
        for category, n in faults.by_fault.items()
    ]
    lines = [
        "## Faults",
        "",
        f"Every planned cell ({faults.planned}) counts: {faults.ok} OK, {faults.recorded} played, "
        f"{faults.not_run} not run. A cell that errored or whose Turn 2 has no label gets one category; "
        "the exit status and `--max-error-rate` count the API's faults and ours (here "
        f"{faults.counted}, {_share(faults.counted, faults.planned)} of the planned cells), never a "
        "model's miss or an unscored judgement.",
        "",
    ]
    if rows:
        lines += table(
            [
                "category",
                "cells",
                "of planned",
                "what happened",
                "counted",
                "example: the first cell's error, or why the judge gave no label",
            ],
            rows,
        ) + [""]
    reasons = faults.judge_unscored_reasons
    if reasons:
        lines += [
            "Why the judge gave no label: " + ", ".join(f"{n} {reason}" for reason, n in reasons.items()) + ".",
            "",
        ]
    return lines
