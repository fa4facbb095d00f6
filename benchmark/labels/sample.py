"""A sample worth an afternoon: stratified by the judge's label and by scenario.

`draw_sample(items, n, seed)` splits the items by the run judge's label
(`unscored` is a stratum of its own), gives each stratum an equal share of
`n` (a stratum smaller than its share gives all it has, and the rest goes to
the others), and inside a stratum takes the scenarios in turn, so a rare
label is seen and no scenario fills the sample. The draw depends only on the
items' keys, their labels and the seed: every annotator who runs
`wearsim annotate` with the same seed gets the same items in the same order.
"""

from __future__ import annotations

import random
from collections import defaultdict

from benchmark.labels import DEFAULT_SEED


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
