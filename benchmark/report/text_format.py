"""The small text helpers findings.md, the viewer and the proxy report format values with:
percentages, intervals, one-line values from a run dir, markdown tables."""

from __future__ import annotations

import re
from dataclasses import fields, is_dataclass, replace

LINE_BREAKS = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]+")  # line breaks and other control characters


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def interval(low: float | None, high: float | None) -> str:
    return "n/a" if low is None or high is None else f"[{100 * low:.1f}%, {100 * high:.1f}%]"


def cell_text(cell: dict) -> str:
    return f"{pct(cell['rate'])} ({cell['k']}/{cell['n']}) {interval(cell['ci_low'], cell['ci_high'])}"


def one_line(value):
    """`value` (a string, or a dict, list, tuple or record of `benchmark.scoring.summary_view` holding
    strings) with every run of line breaks and other control characters in its strings made one space: a
    value from a run dir (a cue type, a condition name, a scenario id) can never start a line of its own in
    a markdown file."""
    if isinstance(value, str):
        return LINE_BREAKS.sub(" ", value)
    if isinstance(value, dict):
        return {one_line(k): one_line(v) for k, v in value.items()}
    if isinstance(value, list):
        return [one_line(v) for v in value]
    if isinstance(value, tuple):
        return tuple(one_line(v) for v in value)
    if is_dataclass(value) and not isinstance(value, type):
        return replace(value, **{f.name: one_line(getattr(value, f.name)) for f in fields(value)})
    return value


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return lines


def seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f} s"
