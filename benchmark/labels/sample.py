"""A sample worth an afternoon: stratified by the judge's label and by scenario.

`draw_sample(items, n, seed)` splits the items by the run judge's label
(`unscored` is a stratum of its own), gives each stratum an equal share of
`n` (a stratum smaller than its share gives all it has, and the rest goes to
the others), and inside a stratum takes the scenarios in turn, so a rare
label is seen and no scenario fills the sample. The draw depends only on the
items' keys, their labels and the seed: every annotator who runs
`wearsim annotate` with the same seed gets the same items in the same order.

`--sample disagreements` (`disagreements_first`) is for finding judge errors
fast: the items where the run's judge and the offline judge (`lexical`, run
again on each reply) give different labels, or the offline judge is unsure
(it leaves the reply unscored: no signal, mixed, or below the operating
point), come first, their scenarios in turn; then the rest, drawn as above.
The order depends only on the items, both judges' labels and the seed. Such
a sample is chosen for the judges' hard items: its agreement says where the
judge errs, not how often, so its labels are never pooled with a random
sample's (`benchmark.labels.measure`).

`parse_sample` reads the option: `N` (0: every item), `disagreements` (at
most `DEFAULT_SIZE` items) or `disagreements:N`.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass

from benchmark.labels import DEFAULT_SEED, SAMPLES

DEFAULT_SIZE = 100  # items in a sample when no number is given


@dataclass(frozen=True, kw_only=True)
class SampleChoice:
    kind: str  # one of SAMPLES
    n: int | None  # None: every item


def parse_sample(text: object) -> SampleChoice:
    """`--sample`'s value: `N` (a random sample; 0: every item), `disagreements` or `disagreements:N`.
    Anything else is a `ValueError` of one line."""
    raw = str(text).strip()
    kind, _, size = raw.partition(":") if not raw.isdigit() else ("random", "", raw)
    if kind not in SAMPLES or (kind == "random" and not size):
        raise ValueError(
            f"--sample {raw[:40]!r}: give a number N (0: every item), 'disagreements' or 'disagreements:N'"
        )
    if not size:
        return SampleChoice(kind=kind, n=DEFAULT_SIZE)
    if not size.isdigit():
        raise ValueError(f"--sample {raw[:40]!r}: the size must be 0 (every item) or more")
    return SampleChoice(kind=kind, n=int(size) or None)


def _shares(sizes: dict[str, int], n: int) -> dict[str, int]:
    """Equal shares of `n` over the strata, none above its size, what is left over handed on."""
    shares = dict.fromkeys(sizes, 0)
    left = min(n, sum(sizes.values()))
    while left > 0:
        open_strata = sorted(s for s in sizes if shares[s] < sizes[s])
        each = max(1, left // len(open_strata))
        for stratum in open_strata:
            take = min(each, sizes[stratum] - shares[stratum], left)
            shares[stratum] += take
            left -= take
            if left == 0:
                break
    return shares


def _round_robin(items: list, rng: random.Random) -> list:
    """The items with their scenarios taken in turn (scenarios and the items of each in a seeded order)."""
    by_scenario: dict[str, list] = defaultdict(list)
    for item in items:
        by_scenario[item.scenario_id].append(item)
    queues = [by_scenario[s] for s in sorted(by_scenario)]
    rng.shuffle(queues)
    for queue in queues:
        rng.shuffle(queue)
    order = []
    while any(queues):
        for queue in queues:
            if queue:
                order.append(queue.pop(0))
    return order


def draw_sample(items: list, n: int | None, seed: int = DEFAULT_SEED) -> list:
    """`n` items (all of them when `n` is None or at least their number), stratified by judge label and
    scenario, in a seeded order."""
    items = sorted(items, key=lambda item: item.key)
    rng = random.Random(seed)
    if n is None or n >= len(items):
        rng.shuffle(items)
        return items
    strata: dict[str, list] = defaultdict(list)
    for item in items:
        strata[item.judge_label or "unscored"].append(item)
    shares = _shares({label: len(group) for label, group in strata.items()}, n)
    chosen = []
    for label in sorted(strata):
        chosen += _round_robin(strata[label], rng)[: shares[label]]
    rng.shuffle(chosen)
    return chosen


def disagreements_first(items: list, offline: dict, n: int | None, seed: int = DEFAULT_SEED) -> list:
    """The items the run's judge (`item.judge_label`) and the offline judge (`offline[key]`; None: unsure)
    disagree on, or the offline judge is unsure of, first, their scenarios in turn in a seeded order; then
    the rest as `draw_sample` draws them; `n` in all (None: every item)."""
    items = sorted(items, key=lambda item: item.key)
    flagged = [item for item in items if offline.get(item.key) is None or offline[item.key] != item.judge_label]
    first = _round_robin(flagged, random.Random(seed))[:n]
    chosen = {item.key for item in first}
    rest = [item for item in items if item.key not in chosen]
    left = None if n is None else n - len(first)
    return first + (draw_sample(rest, left, seed) if left is None or left > 0 else [])
