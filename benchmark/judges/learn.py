"""The offline judge's model: a multinomial logistic regression written out in numpy.

Deterministic by construction: weights start at zero, full-batch gradient descent runs a fixed
number of steps with a fixed step size and an L2 penalty, and the stored figures are rounded to
six decimals, so refitting the same table gives the same JSON on any machine.

`train(table)` fits the shipped model from the derived table (`offline_training.json`: per reply
its file, a scenario id, a trial key, the feature vector and the careful readers' label) and
chooses the confidence threshold on held-out folds only (`choose_threshold` over `held_out`, folds grouped by scenario).
"""

from __future__ import annotations

import numpy as np

from benchmark.judges.features import FEATURE_NAMES, model_reads
from core.judge import LABELS

L2 = 0.5  # penalty on the (standardised) weights, not on the intercepts
ITERATIONS = 1500
PRIOR_STRENGTH = 3.0  # logit the rules' label starts with (`rules_prior`)
STEP = 0.5
FOLDS = 5
DECIMALS = 6
THRESHOLD_GRID = tuple(round(0.25 + 0.05 * i, 2) for i in range(15))  # 0.25 ... 0.95
# the operating point keeps at least this share of held-out replies labelled (a margin: replies of other
# model families will be read less surely)
MIN_HELD_OUT_COVERAGE = 0.93


def fit_softmax(
    x: np.ndarray,
    y: np.ndarray,
    *,
    prior: np.ndarray | None = None,
    l2: float = L2,
    iterations: int = ITERATIONS,
    step: float = STEP,
    balanced: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(mean, scale, weights (features x labels), intercepts) fitted to rows `x` with label indices `y`.

    `prior` (features x labels, on the raw features' scale) is where the weights start and what the
    L2 penalty pulls them back to (zero when None): the fit departs from it only as far as the
    data pushes."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = (x - mean) / scale
    n, d = z.shape
    k = len(LABELS)
    target = np.zeros((n, k))
    target[np.arange(n), y] = 1.0
    # each label weighs the same in total (`balanced`), so the rarer labels are not read as noise
    counts = target.sum(axis=0)
    weight = (target @ np.where(counts > 0, n / (k * np.maximum(counts, 1.0)), 0.0))[:, None] if balanced else 1.0
    w0 = np.zeros((d, k)) if prior is None else prior * scale[:, None]  # the same logits on the standardised scale
    w = w0.copy()
    b = np.zeros(k)
    for _ in range(iterations):
        p = _softmax(z @ w + b)
        error = weight * (p - target) / n
        w -= step * (z.T @ error + l2 * (w - w0))
        b -= step * error.sum(axis=0)
    return mean, scale, w, b


def rules_prior(strength: float = PRIOR_STRENGTH) -> np.ndarray:
    """The starting weights: the rules' label (`rule_current`, ...) adds `strength` to that label's
    logit and nothing else counts. With few real replies of a kind (the real ones hold few
    questions back), the model keeps the rules' reading of it."""
    prior = np.zeros((len(FEATURE_NAMES), len(LABELS)))
    for k, label in enumerate(LABELS):
        prior[FEATURE_NAMES.index(f"rule_{label}"), k] = strength
    return prior


def _softmax(logits: np.ndarray) -> np.ndarray:
    logits = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(logits)
    return e / e.sum(axis=1, keepdims=True)


def probabilities(model: dict, x: np.ndarray) -> np.ndarray:
    """Per row, the probability of each label (`LABELS` order) under a stored model."""
    z = (x - np.asarray(model["mean"])) / np.asarray(model["scale"])
    return _softmax(z @ np.asarray(model["weights"]) + np.asarray(model["intercepts"]))


def _rounded(values) -> list:
    return np.round(np.asarray(values, dtype=float), DECIMALS).tolist()


def fit_model(rows: list[dict], *, l2: float = L2, iterations: int = ITERATIONS, balanced: bool = True) -> dict:
    """A stored model (plain lists, rounded) fitted to table rows (`x` and the careful readers' `label`)."""
    x = np.asarray([row["x"] for row in rows], dtype=float)
    y = np.asarray([LABELS.index(row["label"]) for row in rows])
    mean, scale, w, b = fit_softmax(x, y, prior=rules_prior(), l2=l2, iterations=iterations, balanced=balanced)
    return {"mean": _rounded(mean), "scale": _rounded(scale), "weights": _rounded(w), "intercepts": _rounded(b)}


def grouped_folds(rows: list[dict], folds: int = FOLDS) -> list[int]:
    """Each row's fold: the scenarios, sorted by their target context and id, dealt round-robin, so
    no scenario is in two folds and each fold holds scenarios of every target."""
    scenarios = sorted({(row["target"], row["scenario"]) for row in rows})
    scenarios = [scenario for _, scenario in scenarios]
    fold_of = {scenario: i % folds for i, scenario in enumerate(scenarios)}
    return [fold_of[row["scenario"]] for row in rows]


def judged(row: dict) -> bool:
    """The judge asks the model about this reply (`features.model_reads`)."""
    return model_reads(dict(zip(FEATURE_NAMES, row["x"])))


def held_out(rows: list[dict], folds: list[int], **fit_options) -> np.ndarray:
    """Each row's label probabilities from a model fitted without its fold (all zero for a reply
    the judge leaves unscored before asking the model)."""
    out = np.zeros((len(rows), len(LABELS)))
    asked = [judged(row) for row in rows]
    for fold in sorted(set(folds)):
        fit_rows = [row for row, f, a in zip(rows, folds, asked) if f != fold and a]
        test = [i for i, (f, a) in enumerate(zip(folds, asked)) if f == fold and a]
        model = fit_model(fit_rows, **fit_options)
        out[test] = probabilities(model, np.asarray([rows[i]["x"] for i in test], dtype=float))
    return out


def kappa(truth: list[str], guess: list[str]) -> float:
    """Cohen's kappa over the labelled rows (0.0 when undefined)."""
    from benchmark.stats import cohen_kappa

    value = cohen_kappa(truth, guess)
    return 0.0 if value is None else value


def curve(truth: list[str], probs: np.ndarray) -> list[dict]:
    """Coverage, agreement and kappa over the labelled rows at every threshold of the grid."""
    best = probs.max(axis=1)
    guesses = [LABELS[i] for i in probs.argmax(axis=1)]
    points = []
    for threshold in THRESHOLD_GRID:
        kept = [i for i in range(len(truth)) if best[i] >= threshold]
        t = [truth[i] for i in kept]
        g = [guesses[i] for i in kept]
        agreed = sum(a == b for a, b in zip(t, g))
        points.append(
            {
                "threshold": threshold,
                "coverage": len(kept) / len(truth) if truth else 0.0,
                "agreement": agreed / len(kept) if kept else 0.0,
                "kappa": kappa(t, g) if kept else 0.0,
            }
        )
    return points


def choose_threshold(truth: list[str], probs: np.ndarray) -> float:
    """The threshold with the highest held-out kappa among those that keep at least
    `MIN_HELD_OUT_COVERAGE` of the rows labelled (the lowest such threshold on a tie)."""
    usable = [p for p in curve(truth, probs) if p["coverage"] >= MIN_HELD_OUT_COVERAGE]
    return max(usable, key=lambda p: (round(p["kappa"], 9), -p["threshold"]))["threshold"]


def train(table: dict) -> dict:
    """The shipped model: fitted to every row of the table the judge would ask it about, with the
    confidence threshold chosen on the held-out probabilities of a grouped `FOLDS`-fold
    cross-validation."""
    rows = table["rows"]
    probs = held_out(rows, grouped_folds(rows))
    model = fit_model([row for row in rows if judged(row)])
    threshold = choose_threshold([row["label"] for row in rows], probs)
    return {
        "labels": list(LABELS),
        "features": list(table["features"]),
        "fitted_to": "label",
        "l2": L2,
        "iterations": ITERATIONS,
        "step": STEP,
        "threshold": threshold,
        **model,
    }
