"""How well each rater agrees with the others, people and judges alike.

Raters are the annotators (`RUN_DIR/labels/NAME.jsonl`), the run's own
judge, and the judge of each rescore dir given (`wearsim agreement
--judges DIR`). An item counts for a pair of raters when both gave it one of
the item's labels; `cannot_tell` and an unscored verdict are counted apart,
never as a label.

- Cohen's kappa and raw agreement for every pair; Fleiss' kappa over the
  annotators, on the items every one of them labelled.
- The people's majority per item: the label most annotators gave, when at
  least two of them gave it ("cannot tell" is no label; one person's label,
  or a tie, is no majority, and is counted), and against it, for each judge, kappa, agreement and
  per-label precision and recall, a confusion matrix, and the items where
  they differ.

Intervals (`INTERVAL_RULE`): a 95% percentile bootstrap that resamples
scenarios (the items of one scenario are not independent), used over at
least `stats.MIN_BOOTSTRAP_SCENARIOS` scenarios when it has width; otherwise
the 95% Wilson interval of the observed agreement (or of the proportion, for
precision and recall), and for a kappa that interval carried through the
kappa formula with the chance agreement held at its observed value. So an
interval is never zero-width on fewer than 10 scenarios.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from benchmark import stats

DRAWS = 4000
PEOPLE_AGREEING = 2  # a people's majority: at least two people giving the item the same label
SEED = 4747
INTERVAL_RULE = (
    "95% bootstrap over scenarios when at least 10 scenarios and the bootstrap has width; otherwise (ci_method "
    "'wilson') the Wilson interval of the observed agreement, or of the proportion, and for a kappa that interval "
    "put through the kappa formula with chance agreement held at its observed value"
)


def _matrices(pairs: Sequence[tuple[str, str, str]], labels: Sequence[str]):
    """Per scenario, the confusion counts of (first, second) labels: (scenario ids, array S x L x L)."""
    import numpy as np

    index = {label: n for n, label in enumerate(labels)}
    scenarios = sorted({s for s, _, _ in pairs})
    where = {s: n for n, s in enumerate(scenarios)}
    counts = np.zeros((len(scenarios), len(labels), len(labels)))
    for scenario, a, b in pairs:
        counts[where[scenario], index[a], index[b]] += 1
    return scenarios, counts


def _draw_weights(scenarios: int):
    """How often each scenario is picked in each bootstrap draw (DRAWS x S)."""
    import numpy as np

    rng = np.random.default_rng(SEED)
    picks = rng.integers(0, scenarios, size=(DRAWS, scenarios))
    weights = np.zeros((DRAWS, scenarios))
    np.add.at(weights, (np.arange(DRAWS)[:, None], picks), 1)
    return weights


def _kappa_of(tables):
    """Cohen's kappa of each L x L table in `tables` (... x L x L); NaN where chance agreement is 1."""
    import numpy as np

    n = tables.sum(axis=(-2, -1))
    observed = np.trace(tables, axis1=-2, axis2=-1) / n
    chance = (tables.sum(axis=-1) * tables.sum(axis=-2)).sum(axis=-1) / (n * n)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(chance < 1, (observed - chance) / (1 - chance), np.nan), observed


def _percentile(values) -> tuple[float | None, float | None]:
    import numpy as np

    values = values[~np.isnan(values)]
    if values.size == 0:
        return None, None
    low, high = np.quantile(values, [0.025, 0.975])
    return float(low), float(high)


def _usable(scenarios: int, low, high) -> bool:
    return scenarios >= stats.MIN_BOOTSTRAP_SCENARIOS and low is not None and high > low


def _through_kappa(low: float | None, high: float | None, chance: float) -> tuple[float | None, float | None]:
    if low is None or high is None or chance >= 1:  # (the bootstrap gives both or neither)
        return None, None
    return max(-1.0, (low - chance) / (1 - chance)), min(1.0, (high - chance) / (1 - chance))


def cohen(pairs: Sequence[tuple[str, str, str]], labels: Sequence[str]) -> dict:
    """Kappa and raw agreement of (scenario, first label, second label) pairs, each with its interval."""
    if not pairs:
        return {
            "n": 0,
            "scenarios": 0,
            "kappa": None,
            "kappa_ci_low": None,
            "kappa_ci_high": None,
            "agreement": {"rate": None, "k": 0, "n": 0, "ci_low": None, "ci_high": None, "ci_method": None},
            "ci_method": None,
        }
    scenarios, counts = _matrices(pairs, labels)
    total = counts.sum(axis=0)
    kappa, observed = _kappa_of(total)
    n = int(total.sum())
    agree = int(round(float(observed) * n))
    chance = float((total.sum(axis=1) * total.sum(axis=0)).sum() / (n * n))
    drawn = (_draw_weights(len(scenarios)) @ counts.reshape(len(scenarios), -1)).reshape(DRAWS, *total.shape)
    kappas, agreements = _kappa_of(drawn)
    k_low, k_high = _percentile(kappas)
    a_low, a_high = _percentile(agreements)
    method = "bootstrap"
    if not (_usable(len(scenarios), k_low, k_high) and _usable(len(scenarios), a_low, a_high)):
        method = "wilson"
        a_low, a_high = stats.wilson_interval(agree, n)
        k_low, k_high = _through_kappa(a_low, a_high, chance)
    value = None if chance >= 1 else float(kappa)
    return {
        "n": n,
        "scenarios": len(scenarios),
        "kappa": value,
        "kappa_ci_low": k_low if value is not None else None,
        "kappa_ci_high": k_high if value is not None else None,
        "agreement": {"rate": agree / n, "k": agree, "n": n, "ci_low": a_low, "ci_high": a_high, "ci_method": method},
        "ci_method": method,
    }


def _fleiss_parts(rows):
    """(sum of per-item agreement P_i, items, per-label totals) of item rows of per-label counts."""
    import numpy as np

    rows = np.asarray(rows, dtype=float)
    raters = rows.sum(axis=1)
    p_items = ((rows * rows).sum(axis=1) - raters) / (raters * (raters - 1))
    return p_items.sum(), len(rows), rows.sum(axis=0)


def fleiss(items: Sequence[tuple[str, Sequence[str]]], labels: Sequence[str]) -> dict:
    """Fleiss' kappa of items each labelled by the same number (at least 2) of annotators:
    (scenario, [label of each annotator]) per item, with its interval."""
    import numpy as np

    raters = len(items[0][1]) if items else 0
    if not items or raters < 2:
        return {
            "kappa": None,
            "n": len(items),
            "raters": raters,
            "ci_low": None,
            "ci_high": None,
            "ci_method": None,
            "note": "needs at least two annotators who labelled the same items",
        }
    index = {label: n for n, label in enumerate(labels)}
    by_scenario: dict[str, list] = defaultdict(list)
    for scenario, given in items:
        row = [0] * len(labels)
        for label in given:
            row[index[label]] += 1
        by_scenario[scenario].append(row)
    scenarios = sorted(by_scenario)
    parts = [_fleiss_parts(by_scenario[s]) for s in scenarios]
    p_sum = np.array([p[0] for p in parts])
    count = np.array([p[1] for p in parts], dtype=float)
    totals = np.array([p[2] for p in parts])

    def kappa(p_sums, counts, label_totals):
        mean_p = p_sums / counts
        shares = label_totals / (counts * raters)[..., None]
        chance = (shares * shares).sum(axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(chance < 1, (mean_p - chance) / (1 - chance), np.nan), mean_p, chance

    value, mean_p, chance = kappa(p_sum.sum(), count.sum(), totals.sum(axis=0))
    weights = _draw_weights(len(scenarios))
    drawn, _, _ = kappa(weights @ p_sum, weights @ count, weights @ totals)
    low, high = _percentile(drawn)
    method = "bootstrap"
    if not _usable(len(scenarios), low, high):  # Wilson over the agreeing pairs of annotators
        method = "wilson"
        pairs = len(items) * raters * (raters - 1) / 2
        agreeing = int(round(float(mean_p) * pairs))
        low, high = _through_kappa(*stats.wilson_interval(agreeing, int(pairs)), float(chance))
    defined = bool(float(chance) < 1)
    return {
        "kappa": float(value) if defined else None,
        "n": len(items),
        "raters": raters,
        "ci_low": low if defined else None,
        "ci_high": high if defined else None,
        "ci_method": method,
    }


def proportion(rows: Sequence[tuple[str, bool]]) -> dict:
    """The share of True in (scenario, outcome) rows, with its interval."""
    import numpy as np

    k, n = sum(ok for _, ok in rows), len(rows)
    if n == 0:
        return {"rate": None, "k": 0, "n": 0, "ci_low": None, "ci_high": None, "ci_method": None}
    scenarios = sorted({s for s, _ in rows})
    where = {s: i for i, s in enumerate(scenarios)}
    ks, ns = np.zeros(len(scenarios)), np.zeros(len(scenarios))
    for scenario, ok in rows:
        ks[where[scenario]] += ok
        ns[where[scenario]] += 1
    weights = _draw_weights(len(scenarios))
    with np.errstate(divide="ignore", invalid="ignore"):
        low, high = _percentile((weights @ ks) / (weights @ ns))
    method = "bootstrap"
    if not _usable(len(scenarios), low, high):
        method = "wilson"
        low, high = stats.wilson_interval(k, n)
    return {"rate": k / n, "k": k, "n": n, "ci_low": low, "ci_high": high, "ci_method": method}


def majority(votes: Sequence[str], at_least: int = 1) -> str | None:
    """The label most annotators gave, when at least `at_least` of them gave it; None on a tie, with
    fewer votes for it, or with no vote. `votes` hold labels only ("cannot tell" is no vote).
    `wearsim agreement` asks for two (`PEOPLE_AGREEING`): one person's label is nobody's majority."""
    ranked = Counter(votes).most_common()
    if not ranked or ranked[0][1] < at_least or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def per_label(rows: Sequence[tuple[str, str, str]], labels: Sequence[str]) -> dict:
    """Precision and recall of a judge for each label, against the people's majority:
    rows are (scenario, majority, judge label)."""
    out = {}
    for label in labels:
        out[label] = {
            "precision": proportion([(s, m == label) for s, m, j in rows if j == label]),
            "recall": proportion([(s, j == label) for s, m, j in rows if m == label]),
        }
    return out
