"""The one line `wearsim agreement` opens with: can the run's judge be trusted on this run, in words.

The rule (`verdict(result)`, on the run's judge against the people's majority):

- **Too few items to say** when the kappa is undefined, rests on fewer than `MIN_ITEMS` (20) items,
  or its 95% interval is wider than `MAX_WIDTH` (0.4). The line then says how many more items
  (each labelled alike by two people) would give an interval about `TARGET_WIDTH` (0.2) wide.
- Otherwise **the judge agrees with people at kappa K [lo, hi] on N items**, and one sentence on what
  that means for the run's numbers, read off the interval's low end: from 0.8 the judge labels much
  as a person would; from 0.6 it is substantial but its error is the size of small differences;
  below, the run's accuracy should not be trusted before the disagreements are read.

How many items: the width of `agreement.cohen`'s interval shrinks as 1/sqrt(N). The simulation in
`benchmarks/label_interval_width.py` (docs/judging.md, "How many labels"; results in
`benchmarks/results/label_interval_width.json`) measured median widths 0.44, 0.28, 0.20, 0.14 and
0.10 at 20, 50, 100, 200 and 400 items for a judge at kappa 0.83 (width x sqrt(N) = 2.0 throughout),
and 0.54, 0.34, 0.24, 0.17 and 0.12 for one at 0.67 (2.4). So an interval W wide takes
(c / W)^2 items, c = 2.0 for a kappa of 0.83 or more, 2.4 for 0.67 or less (or no kappa yet),
straight between: 100 to 144 items for 0.2. When the items are already 20 or more but the interval
is wide, its own width is scaled the same way: N x (width / 0.2)^2 items. `MIN_ITEMS` and
`MAX_WIDTH` are the simulation's smallest sample and about the width it measured there. (The
simulation drew Turn 2's four labels; a proactive run's three remark labels use the same rule.)
On a disagreement sample (`--sample disagreements`) the line says so: such a sample is drawn where
the judges disagree, so its kappa says where the judge errs, not how often.
"""

from __future__ import annotations

import math

TARGET_WIDTH = 0.2
MAX_WIDTH = 0.4
MIN_ITEMS = 20
# width x sqrt(items) of the kappa interval, measured at two judge kappas (label_interval_width.json)
WIDTH_ROOT_N = ((0.67, 2.4), (0.83, 2.0))


def width_constant(kappa: float | None) -> float:
    """c in width = c / sqrt(N), for a judge of this kappa (the weaker judge's when unknown)."""
    (low_k, low_c), (high_k, high_c) = WIDTH_ROOT_N
    if kappa is None or kappa <= low_k:
        return low_c
    if kappa >= high_k:
        return high_c
    return low_c + (high_c - low_c) * (kappa - low_k) / (high_k - low_k)


def items_for_width(kappa: float | None, width: float = TARGET_WIDTH) -> int:
    """About how many items give a kappa interval `width` wide, for a judge of this kappa."""
    return math.ceil(round((width_constant(kappa) / width) ** 2, 6))


def _figure(row: dict) -> str:
    return f"kappa {row['kappa']:.2f} [{row['kappa_ci_low']:.2f}, {row['kappa_ci_high']:.2f}]"


def _meaning(low: float) -> str:
    if low >= 0.8:
        return (
            "Even at the low end of its interval it labels much as a person would: the run's accuracy can rest "
            "on this judge; report this kappa beside it."
        )
    if low >= 0.6:
        return (
            "Substantial but short of a person: report this kappa beside the run's accuracy, and read "
            "differences of a few points between conditions as within the judge's error."
        )
    return (
        f"It may be as low as {low:.2f}: before trusting the run's accuracy, read the disagreements in "
        "agreement.md and try another judge (wearsim rescore, then wearsim agreement --judges DIR)."
    )


DISAGREEMENT_SAMPLE = (
    "This is a disagreement sample (the replies the run's judge and the offline judge disagree on, or the "
    "offline judge is unsure of, first): it shows where the judge errs, not how often; a random sample "
    "(wearsim annotate --sample N) measures the run's agreement."
)


def verdict(result: dict) -> dict:
    """`{"enough", "more", "text"}` for the run's judge (the first row of `against_people`); on a
    disagreement sample, said to be one."""
    found = _verdict(result)
    if result.get("sample") == "disagreements":
        found["text"] += " " + DISAGREEMENT_SAMPLE
    return found


def _verdict(result: dict) -> dict:
    row = result["against_people"][0]
    n, kappa = row["n"], row["kappa"]
    low, high = row.get("kappa_ci_low"), row.get("kappa_ci_high")
    judge = str(row["judge"]).removeprefix("judge ")
    width = None if kappa is None or low is None or high is None else high - low
    if width is not None and n >= MIN_ITEMS and width <= MAX_WIDTH:
        text = f"The judge ({judge}) agrees with people at {_figure(row)} on {n} items. {_meaning(low)}"
        return {"enough": True, "more": 0, "text": text}
    if width is None or n < MIN_ITEMS:
        more = max(1, items_for_width(kappa) - n)
    else:
        more = max(1, math.ceil(n * (width / TARGET_WIDTH) ** 2) - n)
    if n == 0:
        figure = ""
    elif kappa is None:
        figure = " (kappa undefined)"
    else:
        figure = f" (kappa {kappa:.2f})" if width is None else f" ({_figure(row)})"
    text = (
        f"Too few items to say how well the judge ({judge}) agrees with people: its kappa rests on {n} "
        f"item{'' if n == 1 else 's'}{figure}; about {more} more, each labelled alike by two people, would give "
        f"a kappa interval about {TARGET_WIDTH} wide."
    )
    return {"enough": False, "more": more, "text": text}
