"""The lexical judge's coverage-agreement curve on its development set (issue 35).

Each decision of the lexical judge has a strength (`benchmark.judges.rules.DECISION_STRENGTH`
and the count margins); leaving every decision below a threshold unscored trades coverage for
agreement. For each threshold this prints and records coverage, agreement over the scored replies
and Cohen's kappa over them, for the development set's tuning half, its locked half, and the
291 hand-labelled responses of `tests/fixtures/judging/` (scored the same way here), and marks the
operating point (`MIN_STRENGTH`). Writes `benchmarks/results/judge_coverage.json` and the plot
`benchmarks/results/judge_coverage.png`.

    .venv/bin/python benchmarks/judge_coverage.py
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmark.judges.rules import MIN_STRENGTH, lexical_decision  # noqa: E402
from benchmark.report.chart import Figure, palette  # noqa: E402
from core.scenario import load_bank  # noqa: E402
from scripts.judge_agreement import FIXTURE_DIR, load_labelled_set  # noqa: E402
from scripts.judge_development_set import (  # noqa: E402
    DevelopmentReply,
    JudgedReply,
    coverage_curve,
    figures,
    judge_replies,
    load_development_half,
)

RESULTS = ROOT / "benchmarks" / "results"


def judged_hand_set() -> list[JudgedReply]:
    """The 291 hand-labelled responses as judged replies (agreement counted over the scored ones)."""
    judged = []
    for item in load_labelled_set(FIXTURE_DIR):
        decision = lexical_decision(item.response, item.answers, frames=item.frames, min_strength=0.0)
        reply = DevelopmentReply(item.response_id, None, item.kind, item.human_label, "", item.response)
        judged.append(JudgedReply(reply, decision.label, decision.rule, decision.strength))
    return judged


def curve_rows(judged: list[JudgedReply]) -> list[dict]:
    return [
        {
            "min_strength": t,
            "coverage": round(f.coverage, 4),
            "agreement": round(f.agreement, 4),
            "kappa": None if f.kappa is None else round(f.kappa, 4),
            "scored": f.scored,
            "agreed": f.agreed,
            "total": f.total,
        }
        for t, f in coverage_curve(judged)
    ]


def plot(curves: dict[str, list[dict]], path: Path) -> None:
    fig = Figure(
        760,
        480,
        "Lexical judge: agreement with the hand labels as it leaves more replies unscored\n"
        "one point per threshold on decision strength; ringed: the operating point",
    )
    ax = fig.axes(78, 62, 220, 60, x=(0.3, 1.0), y=(0.75, 1.01))
    entries = []
    for index, (name, rows) in enumerate(curves.items()):
        colour = palette(index)
        points = [(r["coverage"], r["kappa"] if r["kappa"] is not None else 0.0) for r in rows]
        ax.line(points, colour=colour)
        for row, (x, y) in zip(rows, points):
            ax.marker(x, y, colour=colour, size=7)
            if row["min_strength"] <= MIN_STRENGTH or row is rows[0]:
                ax.marker(x, y, colour="white", size=4)
        entries.append((name, colour, "dot"))
    ax.hline(0.80, colour="#888888", dash=(4, 3), width=1)
    ax.vline(0.75, colour="#888888", dash=(4, 3), width=1)
    ax.frame()
    ax.x_ticks([0.3, 0.4, 0.5, 0.6, 0.75, 0.9, 1.0], ["30%", "40%", "50%", "60%", "75%", "90%", "100%"], size=9)
    ax.y_ticks([0.75, 0.8, 0.85, 0.9, 0.95, 1.0])
    ax.x_label("coverage (share of replies the judge labels)")
    ax.y_label("Cohen's kappa on the labelled replies", beside=48)
    ax.legend(entries, corner="outside right")
    fig.text(ax.right + 14, ax.top + 90, "dashed: the goals\n(kappa 0.80 at\ncoverage 0.75)", size=9)
    fig.save(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], epilog="Example: .venv/bin/python benchmarks/judge_coverage.py"
    )
    parser.add_argument("--output", type=Path, default=RESULTS / "judge_coverage.json")
    parser.add_argument("--plot", type=Path, default=RESULTS / "judge_coverage.png")
    args = parser.parse_args(argv)
    bank = load_bank()
    halves = {half: judge_replies(load_development_half(half, bank=bank)) for half in ("tuning", "locked", "fresh")}
    curves = {f"development, {half} half": curve_rows(judged) for half, judged in halves.items() if half != "fresh"}
    curves["fresh replies (written freely)"] = curve_rows(halves["fresh"])
    curves["291 hand-labelled responses"] = curve_rows(judged_hand_set())
    result = {"operating_point": MIN_STRENGTH, "curves": curves, "at_operating_point": {}}
    for half, judged in halves.items():
        at = figures(judged, MIN_STRENGTH)
        result["at_operating_point"][half] = {
            "coverage": round(at.coverage, 4),
            "agreement": round(at.agreement, 4),
            "kappa": None if at.kappa is None else round(at.kappa, 4),
            "scored": at.scored,
            "agreed": at.agreed,
            "total": at.total,
        }
        print(f"{half} at the operating point (min strength {MIN_STRENGTH}): {at.line()}")
        unscored = [j for j in judged if j.label is None]
        for j in unscored:
            print(f"  unscored {j.reply.reply_id} ({j.reply.human_label}): {j.rule}")
    for name, rows in curves.items():
        print(name)
        for row in rows:
            kappa = "undefined" if row["kappa"] is None else f"{row['kappa']:.3f}"
            print(
                f"  min strength {row['min_strength']:>4}: coverage {row['coverage']:.3f}, "
                f"agreement {row['agreement']:.3f}, kappa {kappa}"
            )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    plot(curves, args.plot)
    print(f"wrote {args.output} and {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
