"""The offline judge's figures: grouped cross-validation on the real replies, and the hand-written sets.

Reads only what the repository holds: the derived table (`benchmark/judges/offline_training.json`)
and `tests/fixtures/judging/`. Prints the lines docs/judging.md quotes and writes
`benchmarks/results/offline_judge.json`.

- Against the careful labels, two ways, so no figure comes from data the model or its threshold saw:
  leave one file out (fit on three kinds of reply, label the fourth), and `FOLDS` folds grouped by
  scenario pooled over the four files (`learn.grouped_folds`). Each held-out part's threshold is
  chosen by an inner grouped cross-validation on the other parts alone. The rules alone are
  measured on the same rows.
- The coverage-agreement curve: the pooled held-out probabilities of the grouped folds.
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


def held_out_labels(rows: list[dict], split: list) -> tuple[list[str | None], dict, np.ndarray]:
    """Each row's label from a model fitted on the rows of the other parts of `split` (one value per
    row: its file, or its scenario fold), at a threshold chosen by a grouped cross-validation on those
    other parts alone; the thresholds; and the held-out probabilities."""
    probs = learn.held_out(rows, split)
    guess: list[str | None] = [None] * len(rows)
    thresholds = {}
    for part in sorted(set(split)):
        inner = [row for row, s in zip(rows, split) if s != part]
        inner_probs = learn.held_out(inner, learn.grouped_folds(inner, learn.FOLDS - 1))
        thresholds[part] = learn.choose_threshold([row["label"] for row in inner], inner_probs)
        for i in (i for i, s in enumerate(split) if s == part):
            guess[i] = _guesses(probs[i : i + 1], thresholds[part])[0]
    return guess, thresholds, probs


def _by(rows: list[dict], key: str, truth: list[str], guess: list[str | None]) -> dict[str, Figures]:
    return {
        value: figures(
            [t for t, row in zip(truth, rows) if row[key] == value],
            [g for g, row in zip(guess, rows) if row[key] == value],
        )
        for value in sorted({row[key] for row in rows})
    }


def cross_validation(rows: list[dict]) -> dict:
    """Leave one file out, and five folds grouped by scenario pooled over the files: figures per
    held-out part, per file and pooled; the rules alone on the same rows; the pooled curve."""
    truth = [row["label"] for row in rows]
    rules = []
    for row in rows:
        values = dict(zip(FEATURE_NAMES, row["x"]))
        rules.append(next((label for label in LABELS if values[f"rule_{label}"] == 1.0), None))
    out: dict = {}
    files = [row["file"] for row in rows]
    guess, thresholds, _ = held_out_labels(rows, files)
    out["leave_one_file_out"] = {"thresholds": thresholds, "files": _by(rows, "file", truth, guess)}
    folds = learn.grouped_folds(rows)
    guess, thresholds, probs = held_out_labels(rows, folds)
    for row, fold in zip(rows, folds):
        row["fold"] = fold
    out["grouped_folds"] = {
        "thresholds": thresholds,
        "pooled": figures(truth, guess),
        "folds": _by(rows, "fold", truth, guess),
        "files": _by(rows, "file", truth, guess),
        "curve": learn.curve(truth, probs),
    }
    out["rules"] = {"pooled": figures(truth, rules), "files": _by(rows, "file", truth, rules)}
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
    lofo, grouped = cv["leave_one_file_out"], cv["grouped_folds"]
    for name, fig in lofo["files"].items():
        print(f"leave {name} out (threshold {lofo['thresholds'][name]}): {fig.line()}")
    for fold, fig in grouped["folds"].items():
        print(f"grouped fold {fold} (threshold {grouped['thresholds'][fold]}): {fig.line()}")
    print(f"grouped folds pooled: {grouped['pooled'].line()}")
    for name, fig in grouped["files"].items():
        print(f"  of which {name}: {fig.line()}")
    print(f"rules alone, pooled: {cv['rules']['pooled'].line()}")
    report: dict = {
        "data": "benchmark/judges/offline_training.json (careful labels; ../shared/data/judge-tuning)",
        "leave_one_file_out": {
            "thresholds": lofo["thresholds"],
            "files": {k: v.as_dict() for k, v in lofo["files"].items()},
        },
        "grouped_folds": {
            "thresholds": {str(k): v for k, v in grouped["thresholds"].items()},
            "pooled": grouped["pooled"].as_dict(),
            "folds": {str(k): v.as_dict() for k, v in grouped["folds"].items()},
            "files": {k: v.as_dict() for k, v in grouped["files"].items()},
            "curve": grouped["curve"],
        },
        "rules": {
            "pooled": cv["rules"]["pooled"].as_dict(),
            "files": {k: v.as_dict() for k, v in cv["rules"]["files"].items()},
        },
        "hand_sets": {},
    }
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
