"""Retrain the offline judge from real replies, in two steps.

1. `extract`: read the careful labels and the real replies they label (outside the repository:
   `WEARSIM_JUDGE_TUNING`, then `<repo>/../shared/data/judge-tuning`, then
   `/work/shared/data/judge-tuning`), turn each Turn 2 reply into its feature vector and write the
   derived table `benchmark/judges/offline_training.json`: per reply its file, the scenario id, a
   trial key, the vector and the careful readers' label. Numbers and ids only: no reply text enters
   the repository, and no judge's label.
2. `fit`: fit the model to that table (`benchmark.judges.learn.train`) and write
   `benchmark/judges/offline_weights.json`.

With no step named, both run. `--check` redoes both from the raw replies in memory and says
whether the stored table and weights are reproduced exactly (exit 1 when not).

    .venv/bin/python -m scripts.train_offline_judge            # extract, then fit
    .venv/bin/python -m scripts.train_offline_judge fit        # refit from the stored table only
    .venv/bin/python -m scripts.train_offline_judge --check
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from benchmark.judges.evidence import camera_block
from benchmark.judges.features import FEATURE_NAMES, reply_features
from benchmark.judges.learn import DECIMALS, train
from benchmark.judges.offline import TABLE_PATH, WEIGHTS_PATH
from benchmark.judges.rules import scenario_frames
from benchmark.labels.reference import camera_was_sent
from core.judge import LABELS
from core.records import build_user_turn
from core.scenario import load_bank

ROOT = Path(__file__).resolve().parents[1]
CAREFUL = "careful_labels.jsonl"
ENV = "WEARSIM_JUDGE_TUNING"


class MissingData(RuntimeError):
    """The real replies are not where the script looks."""


def data_candidates() -> list[Path]:
    places = [Path(os.environ[ENV])] if os.environ.get(ENV) else []
    return places + [ROOT.parent / "shared" / "data" / "judge-tuning", Path("/work/shared/data/judge-tuning")]


def locate_data() -> Path:
    """The directory holding the careful labels, the replies they label and their bank (`v1bank/`)."""
    tried = data_candidates()
    for place in tried:
        if (place / CAREFUL).is_file() and (place / "v1bank" / "scenarios.json").is_file():
            return place
    raise MissingData(
        f"no {CAREFUL} with a v1bank/ beside it in any of: "
        + ", ".join(str(p) for p in tried)
        + f" (set {ENV} to the judge-tuning directory)"
    )


def read_jsonl(path: Path) -> list[dict]:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}: line {number}: {exc.msg}") from exc
    return rows


def extract(directory: Path) -> dict:
    """The derived table: per reply the two careful readers agree on, its file, scenario, the
    scenario's target, the feature vector and the readers' label. The LLM labels recorded beside
    them are never read."""
    bank = load_bank(directory / "v1bank")
    replies: dict[str, dict[tuple[str, str, int], dict]] = {}
    rows = []
    for item in read_jsonl(directory / CAREFUL):
        if item.get("label") not in LABELS:
            continue  # the readers differ (13 replies): no reference
        name = item["file"]
        if name not in replies:
            replies[name] = {(r["scenario_id"], r["condition"], r["trial"]): r for r in read_jsonl(directory / name)}
        record = replies[name][(item["scenario_id"], item["condition"], item["trials"][0])]
        scenario = bank.get(item["scenario_id"])
        camera = record.get("turn_2_image") if camera_was_sent(name) else None
        user = record.get("turn_2_user") or scenario.turn_2_user
        reading = reply_features(
            record.get("turn_2_response") or "",
            scenario.answers,
            camera=camera_block(build_user_turn(camera, user)),
            frames=scenario_frames(scenario),
            user=user,
        )
        rows.append(
            {
                "file": name.removeprefix("replies_").removesuffix(".jsonl"),
                "scenario": scenario.scenario_id,
                "target": scenario.target_context,
                "trial": f"{item['condition']}/{item['trials'][0]}",
                "x": [round(v, DECIMALS) for v in reading.values],
                "label": item["label"],
            }
        )
    rows.sort(key=lambda row: (row["file"], row["scenario"], row["trial"]))
    return {
        "source": f"{CAREFUL}: the replies two careful readers labelled alike, from four files of real "
        "replies on the v1 bank (gemini-2.5-flash-lite with and without a camera, gpt-4o-mini)",
        "features": list(FEATURE_NAMES),
        "rows": rows,
    }


def dumps(document: dict) -> str:
    """JSON with one table row (or one weight row) a line, so a retraining's diff is readable."""
    head = {key: value for key, value in document.items() if key not in ("rows", "weights")}
    lines = [json.dumps(head, separators=(",", ":"))[:-1]]
    for key in ("rows", "weights"):
        if key in document:
            items = ",\n".join(json.dumps(item, separators=(",", ":")) for item in document[key])
            lines.append(f',"{key}":[\n{items}\n]')
    return "".join(lines) + "}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scripts.train_offline_judge",
        description="Retrain the offline judge: extract features from the real replies, then fit the weights.",
        epilog="Example: python -m scripts.train_offline_judge --check",
    )
    parser.add_argument("step", nargs="?", choices=("extract", "fit", "all"), default="all")
    parser.add_argument(
        "--check",
        action="store_true",
        help="redo both steps from the raw replies and compare with the stored files (writes nothing)",
    )
    args = parser.parse_args(argv)
    try:
        if args.check:
            table = extract(locate_data())
            weights = train(table)
            same_table = TABLE_PATH.read_text(encoding="utf-8") == dumps(table)
            same_weights = WEIGHTS_PATH.read_text(encoding="utf-8") == dumps(weights)
            print(
                f"table {'reproduced' if same_table else 'DIFFERS'} ({len(table['rows'])} rows); "
                f"weights {'reproduced' if same_weights else 'DIFFER'}"
            )
            return 0 if same_table and same_weights else 1
        if args.step in ("extract", "all"):
            table = extract(locate_data())
            TABLE_PATH.write_text(dumps(table), encoding="utf-8")
            print(f"wrote {TABLE_PATH.relative_to(ROOT)} ({len(table['rows'])} rows)")
        table = json.loads(TABLE_PATH.read_text(encoding="utf-8"))
        if args.step in ("fit", "all"):
            weights = train(table)
            WEIGHTS_PATH.write_text(dumps(weights), encoding="utf-8")
            print(f"wrote {WEIGHTS_PATH.relative_to(ROOT)} (threshold {weights['threshold']})")
    except MissingData as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
