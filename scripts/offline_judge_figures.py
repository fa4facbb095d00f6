"""The offline judge's figures: grouped cross-validation on the real replies, and the hand-written sets.

Reads only what the repository holds: the derived table (`benchmark/judges/offline_training.json`)
and `tests/fixtures/judging/`. Prints the lines docs/judging.md quotes and writes
`benchmarks/results/offline_judge.json`.

- Cross-validation: `FOLDS` folds grouped by scenario (`learn.grouped_folds`); each fold's replies
  are labelled by a model fitted on the other folds, at a threshold chosen on those other folds
  alone (an inner grouped cross-validation), so no figure comes from data the model or its
  threshold saw. Against the recorded LLM labels (`raw`) and against them with my review applied
  (`reviewed`, `scripts/offline_label_review.json`). The rules alone are measured on the same rows.
- The coverage-agreement curve: the pooled held-out probabilities at every threshold of the grid.
- The locked other-styles set (`other_styles.jsonl`), the 291 responses and the development set,
  judged by the shipped model.

    .venv/bin/python -m scripts.offline_judge_figures
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from benchmark.judges import learn
from benchmark.judges.features import FEATURE_NAMES
from benchmark.judges.lexical import LexicalJudge
from benchmark.judges.offline import TABLE_PATH, offline_decision
from benchmark.judges.rules import scenario_frames
from benchmark.labels.figures import Figures, figures
from core.judge import LABELS, JudgeCase
from core.records import build_user_turn
from core.scenario import load_bank

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "judging"
OTHER_STYLES = FIXTURES / "other_styles.jsonl"
RESULTS = ROOT / "benchmarks" / "results" / "offline_judge.json"


def _guesses(probs: np.ndarray, threshold: float) -> list[str | None]:
    return [LABELS[int(p.argmax())] if p.max() >= threshold and p.max() > 0 else None for p in probs]


def cross_validation(rows: list[dict]) -> dict:
    """Per fold and pooled figures with nested thresholds, the curve, and the rules on the same rows."""
    folds = learn.grouped_folds(rows)
    probs = learn.held_out(rows, folds)
    guess: list[str | None] = [None] * len(rows)
    thresholds = {}
    for fold in sorted(set(folds)):
        inner = [row for row, f in zip(rows, folds) if f != fold]
        inner_probs = learn.held_out(inner, learn.grouped_folds(inner, learn.FOLDS - 1))
        thresholds[fold] = learn.choose_threshold([row[learn.TARGET] for row in inner], inner_probs)
        for i in (i for i, f in enumerate(folds) if f == fold):
            guess[i] = _guesses(probs[i : i + 1], thresholds[fold])[0]
    rules = []
    for row in rows:
        values = dict(zip(FEATURE_NAMES, row["x"]))
        rules.append(next((label for label in LABELS if values[f"rule_{label}"] == 1.0), None))
    out = {"thresholds": thresholds, "folds": {}, "pooled": {}, "rules": {}, "curve": {}}
    for target in ("label", "reviewed"):
        truth = [row[target] for row in rows]
        out["pooled"][target] = figures(truth, guess)
        out["rules"][target] = figures(truth, rules)
        out["folds"][target] = {
            fold: figures(
                [truth[i] for i, f in enumerate(folds) if f == fold],
                [guess[i] for i, f in enumerate(folds) if f == fold],
            )
            for fold in sorted(set(folds))
        }
        out["curve"][target] = learn.curve(truth, probs)
    out["scenarios"] = {
        fold: sorted({row["scenario"] for row, f in zip(rows, folds) if f == fold}) for fold in sorted(set(folds))
    }
    return out


def other_styles(path: Path = OTHER_STYLES) -> tuple[Figures, list[tuple[dict, str | None, str]]]:
    """The locked set judged by `LexicalJudge` as a run would call it (camera block in the message)."""
    bank = load_bank()
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    judge = LexicalJudge()
    out = []
    for item in items:
        scenario = bank.get(item["bank_scenario"])
        message = build_user_turn(scenario.turn_2_image if item["camera"] else None, scenario.turn_2_user)
        verdict = judge.label_now(JudgeCase(scenario=scenario, turn=2, user_message=message, response=item["response"]))
        out.append((item, verdict.label, verdict.rationale))
    return figures([item["label"] for item, _, _ in out], [label for _, label, _ in out]), out


def hand_sets() -> dict[str, Figures]:
    """The 291 responses (unscored counted as a disagreement, as `scripts.judge_agreement` does) and
    the development set's halves."""
    from scripts.judge_agreement import load_labelled_set
    from scripts.judge_development_set import load_development_half

    items = load_labelled_set(FIXTURES)
    out = {
        "291 responses": figures(
            [i.human_label for i in items],
            [offline_decision(i.response, i.answers, frames=i.frames).label for i in items],
        )
    }
    bank = load_bank()
    for half in ("tuning", "locked", "fresh"):
        replies = load_development_half(half, bank=bank)
        out[f"development {half}"] = figures(
            [r.human_label for r in replies],
            [
                offline_decision(r.response, r.scenario.answers, frames=scenario_frames(r.scenario)).label
                for r in replies
            ],
        )
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m scripts.offline_judge_figures",
        description="The offline judge's cross-validation and hand-set figures.",
        epilog="Example: python -m scripts.offline_judge_figures -v",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="list the locked set's disagreements")
    args = parser.parse_args(argv)
    rows = json.loads(TABLE_PATH.read_text(encoding="utf-8"))["rows"]
    cv = cross_validation(rows)
    report: dict = {"cross_validation": {}, "hand_sets": {}}
    for target in ("label", "reviewed"):
        name = "raw" if target == "label" else "reviewed"
        for fold, fig in cv["folds"][target].items():
            print(f"cv {name} fold {fold} (threshold {cv['thresholds'][fold]}): {fig.line()}")
        print(f"cv {name} pooled: {cv['pooled'][target].line()}")
        print(f"rules {name}: {cv['rules'][target].line()}")
        report["cross_validation"][name] = {
            "folds": {str(f): fig.as_dict() for f, fig in cv["folds"][target].items()},
            "pooled": cv["pooled"][target].as_dict(),
            "rules": cv["rules"][target].as_dict(),
            "curve": cv["curve"][target],
        }
    report["cross_validation"]["thresholds"] = {str(k): v for k, v in cv["thresholds"].items()}
    report["cross_validation"]["scenarios"] = {str(k): v for k, v in cv["scenarios"].items()}
    locked, judged = other_styles()
    print(f"other styles (locked): {locked.line()}")
    report["other_styles"] = locked.as_dict()
    if args.verbose:
        for item, label, why in judged:
            if label != item["label"]:
                print(f"  {item['id']} {item['style']}: {item['label']} -> {label or 'unscored'} ({why})")
    for name, fig in hand_sets().items():
        print(f"{name}: {fig.line()}")
        report["hand_sets"][name] = fig.as_dict()
    RESULTS.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
