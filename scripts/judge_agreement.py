"""Agreement of the rules (`benchmark.judges.rules`, the offline judge's first input) with hand labels.

The offline judge's own figures on the same set: `python -m scripts.offline_judge_figures`.

The hand-labelled set lives in `tests/fixtures/judging/`: `scenarios.json`
(per fixture scenario: the Turn 1 and Turn 2 speech and camera text and the
four answer lists) and `responses.jsonl` (one response a line with its human
label, for a fixture scenario (`scenario`) or for a scenario of the shipped
bank (`bank_scenario`), whose answer lists are then read from the bank). A
response the lexical judge leaves unscored counts as a disagreement; for Cohen's
kappa it is a fifth category, "unscored".

    python -m scripts.judge_agreement [FIXTURE_DIR]
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from benchmark.judges.rules import lexical_label, scenario_frames
from benchmark.stats import cohen_kappa
from core.judge import LABELS
from core.scenario import ANSWER_LISTS, AnswerKey, load_bank

FIXTURE_DIR = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "judging"
UNSCORED = "unscored"


@dataclass(frozen=True)
class LabelledResponse:
    response_id: str
    scenario: str
    response: str
    human_label: str
    kind: str
    split: str  # "tuning" (seen while writing the rules) or "holdout" (written after they were frozen)
    answers: AnswerKey
    frames: tuple[str | None, str | None] = (None, None)  # (earlier, current) frame descriptions


@dataclass(frozen=True)
class Agreement:
    total: int
    agreed: int
    kappa: float | None
    per_label: dict  # human label -> (agreed, total)
    lexical_labels: tuple[str, ...]
    human_labels: tuple[str, ...]

    @property
    def percent(self) -> float:
        return 100.0 * self.agreed / self.total if self.total else 0.0

    @property
    def scored(self) -> int:
        return sum(label != UNSCORED for label in self.lexical_labels)

    @property
    def coverage(self) -> float:
        return 100.0 * self.scored / self.total if self.total else 0.0

    def line(self) -> str:
        kappa = "undefined" if self.kappa is None else f"{self.kappa:.2f}"
        return (
            f"{self.agreed}/{self.total} agree ({self.percent:.1f}%), Cohen's kappa {kappa}, "
            f"coverage {self.scored}/{self.total} ({self.coverage:.1f}%)"
        )


def load_labelled_set(directory: Path = FIXTURE_DIR) -> list[LabelledResponse]:
    scenarios_path = directory / "scenarios.json"
    responses_path = directory / "responses.jsonl"
    scenarios = json.loads(scenarios_path.read_text(encoding="utf-8"))
    keys, frames = {}, {}
    for name, body in scenarios.items():
        for field in ANSWER_LISTS:
            if not isinstance(body.get(field), list):
                raise ValueError(f"{scenarios_path}: {name}: field '{field}' must be a list of strings")
        keys[name] = AnswerKey(**{field: tuple(body[field]) for field in ANSWER_LISTS})
        earlier = " ".join(t for t in (body.get("context_image"), body.get("turn_1_image")) if t)
        frames[name] = (earlier or None, body.get("turn_2_image"))
    items = []
    bank = None
    for number, line in enumerate(responses_path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{responses_path}: line {number}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: invalid JSON: {exc.msg}") from exc
        for field in ("id", "response", "label"):
            if not isinstance(raw.get(field), str):
                raise ValueError(f"{where}: field '{field}' must be a string")
        if isinstance(raw.get("bank_scenario"), str):  # answer lists from the shipped bank
            bank = bank or load_bank()
            try:
                scenario = bank.get(raw["bank_scenario"])
                keys.setdefault(raw["bank_scenario"], scenario.answers)
                frames.setdefault(raw["bank_scenario"], scenario_frames(scenario))
            except KeyError as exc:
                raise ValueError(f"{where}: field 'bank_scenario': {exc.args[0]}") from exc
            raw["scenario"] = raw["bank_scenario"]
        elif raw.get("scenario") not in keys:
            raise ValueError(f"{where}: field 'scenario': unknown fixture scenario {raw.get('scenario')!r}")
        if raw["label"] not in LABELS:
            raise ValueError(f"{where}: field 'label' must be one of {', '.join(LABELS)}")
        items.append(
            LabelledResponse(
                raw["id"],
                raw["scenario"],
                raw["response"],
                raw["label"],
                str(raw.get("kind", "")),
                str(raw.get("split", "tuning")),
                keys[raw["scenario"]],
                frames[raw["scenario"]],
            )
        )
    return items


def lexical_agreement(items: list[LabelledResponse]) -> Agreement:
    human, lexical = [], []
    per_label: dict[str, list[int]] = {label: [0, 0] for label in LABELS}
    for item in items:
        label, _ = lexical_label(item.response, item.answers, frames=item.frames)
        label = label or UNSCORED
        human.append(item.human_label)
        lexical.append(label)
        per_label[item.human_label][1] += 1
        per_label[item.human_label][0] += int(label == item.human_label)
    agreed = sum(h == x for h, x in zip(human, lexical))
    return Agreement(
        len(items),
        agreed,
        cohen_kappa(human, lexical),
        {k: tuple(v) for k, v in per_label.items()},
        tuple(lexical),
        tuple(human),
    )


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m scripts.judge_agreement",
        description="Agreement of the rules with the hand-labelled responses.",
        epilog="Example: python -m scripts.judge_agreement -v",
    )
    parser.add_argument(
        "directory",
        nargs="?",
        type=Path,
        default=FIXTURE_DIR,
        help="directory with scenarios.json and responses.jsonl (default: the shipped set)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="list every disagreement")
    args = parser.parse_args(argv)
    directory = args.directory
    items = load_labelled_set(directory)
    result = lexical_agreement(items)
    print(f"all: {result.line()}")
    for split in sorted({item.split for item in items}):
        print(f"{split}: {lexical_agreement([i for i in items if i.split == split]).line()}")
    for label, (agreed, total) in result.per_label.items():
        print(f"  {label:8s} {agreed}/{total}")
    if args.verbose:
        for item, got in zip(items, result.lexical_labels):
            if got != item.human_label:
                print(f"  {item.response_id}: human {item.human_label}, lexical {got}: {item.response}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
