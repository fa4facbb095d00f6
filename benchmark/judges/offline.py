"""The offline judge's decision: the learned model over a reply's features.

`offline_decision` reads the reply (`benchmark.judges.features.reply_features`), scores each
label with the stored multinomial logistic regression (`offline_weights.json`, fitted by
`scripts/train_offline_judge.py` from `offline_training.json`) and keeps the most likely label
when its probability reaches the stored threshold (chosen on held-out folds; docs/offline_judge.md).
It leaves a reply unscored, with the reason, when

- it is empty (`empty response`);
- it holds nothing to judge by (`no signal`, the rules' reason: no answer word, no frame
  description word of its own, no question, no decline, no declared context), or its words are
  mixed (`mixed: names both scenes ...`, the rules' reason);
- the model is not sure enough (`below the operating point: ...`, with the rules' reading).
"""

from __future__ import annotations

import json
import math
import operator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from benchmark.judges.features import FEATURE_NAMES, reply_features
from core.scenario import AnswerKey

HERE = Path(__file__).resolve().parent
WEIGHTS_PATH = HERE / "offline_weights.json"
TABLE_PATH = HERE / "offline_training.json"


@dataclass(frozen=True, kw_only=True)
class OfflineDecision:
    label: str | None  # None: unscored
    reason: str  # the verdict's rationale (or unscored reason)
    confidence: float = 0.0  # the model's probability of its most likely label
    probabilities: dict | None = None  # label -> probability (None when the model was not asked)


@lru_cache(maxsize=1)
def load_model(path: Path = WEIGHTS_PATH) -> dict:
    """The stored model, read once. Its feature list must be this code's."""
    model = json.loads(path.read_text(encoding="utf-8"))
    if tuple(model["features"]) != FEATURE_NAMES:
        raise ValueError(
            f"{path}: its features do not match benchmark.judges.features; retrain with "
            "python -m scripts.train_offline_judge"
        )
    return model


def label_probabilities(values: tuple[float, ...], model: dict) -> dict[str, float]:
    """The model's probability of each label for one feature vector (plain Python: 52 x 4 products)."""
    z = [(v - m) / s for v, m, s in zip(values, model["mean"], model["scale"])]
    columns = zip(*model["weights"])  # (a row per feature: one column per label)
    logits = [b + sum(map(operator.mul, z, column)) for column, b in zip(columns, model["intercepts"])]
    top = max(logits)
    e = [math.exp(v - top) for v in logits]
    total = sum(e)
    return {label: p / total for label, p in zip(model["labels"], e)}


def offline_decision(
    response: str,
    answers: AnswerKey,
    *,
    camera: str | None = None,
    frames: tuple[str | None, str | None] | None = None,
    user: str | None = None,
    threshold: float | None = None,
) -> OfflineDecision:
    """The label of one reply, or None with the reason. `threshold` overrides the stored one."""
    if not response or not response.strip():
        return OfflineDecision(label=None, reason="empty response")
    reading = reply_features(response, answers, camera=camera, frames=frames, user=user)
    rules = reading.decision
    if not reading.asks_model:
        return OfflineDecision(label=None, reason=rules.rule)
    model = load_model()
    probs = label_probabilities(reading.values, model)
    label = max(probs, key=probs.__getitem__)
    confidence = probs[label]
    cut = model["threshold"] if threshold is None else threshold
    read = f"rules: {rules.label or 'unscored'}, {rules.rule}"
    if confidence < cut:
        return OfflineDecision(
            label=None,
            reason=f"below the operating point: {label} at {confidence:.2f} < {cut:.2f} ({read})",
            confidence=confidence,
            probabilities=probs,
        )
    return OfflineDecision(
        label=label, reason=f"model: {label} at {confidence:.2f} ({read})", confidence=confidence, probabilities=probs
    )
