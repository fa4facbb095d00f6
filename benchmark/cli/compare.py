"""`wearsim compare`: paired comparison of two runs."""

from __future__ import annotations

import argparse

from benchmark.cli import wrapped

EPILOG = """examples:
  wearsim compare runs/gpt-4o runs/gemini-2.0-flash
  wearsim compare runs/a runs/b --condition baseline --json
  wearsim compare runs/a runs/b runs/c runs/d --html runs/compared   # against latency and cost, every run
Each run's cost is priced with the prices its manifest recorded (older runs: benchmark/cost/prices.toml).
"""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="compare runs side by side, and A against B in detail",
        description=wrapped(
            "A table of every run given (balanced Turn 2 accuracy with its interval, repair rate, "
            "latency p50/p95, voice to voice, cost per correct answer, turns OK) and each run's paired difference "
            "against the first; then A against B in detail: trials paired by (scenario, condition, trial), the "
            "difference in balanced accuracy (B - A) with a paired bootstrap CI over scenarios, an exact McNemar "
            "test on Turn 2 pass, and the scenarios whose trials flipped. Proactive runs are compared apart: per run "
            "and cell recall, precision, false alarms a minute, time to speak and cost per hour watched, and each "
            "run against the first (recall and false alarms a minute, paired bootstrap over scenarios, McNemar on "
            "hits)."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_a", help="run dir or transcripts file A")
    parser.add_argument("run_b", help="run dir or transcripts file B")
    parser.add_argument(
        "more",
        nargs="*",
        metavar="RUN",
        help="more runs: a row each in the table, paired against A, and drawn on the plots "
        "(the detailed comparison is A against B)",
    )
    parser.add_argument("--condition", help="condition to compare (default: the ranking condition of A)")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument(
        "--html",
        metavar="DIR",
        help="also write DIR/comparison.html (the runs as a sortable table, each against the first) and "
        "plots: for question-and-answer runs DIR/accuracy_latency.png (balanced Turn 2 accuracy against "
        "first reply text p50/p95) and DIR/accuracy_cost.png (against the cost per trial); for proactive "
        "runs DIR/recall_false_alarms.png (recall against false alarms a minute) instead",
    )
    parser.set_defaults(run=run)


def run(args) -> int:
    import json
    import sys
    from pathlib import Path

    from benchmark.comparison.runs import compare_runs, render_comparison
    from benchmark.scoring import TranscriptError

    try:
        result = compare_runs(args.run_a, args.run_b, args.condition, tuple(args.more))
    except (TranscriptError, ValueError) as exc:
        print(f"wearsim compare: {exc}", file=sys.stderr)
        return 1
    text = render_comparison(result)
    print(json.dumps(result, indent=2) if args.json else text)
    if args.html:
        from benchmark.report.compare_page import write_comparison_page
        from core.safe_files import UnsafePathError

        try:
            if "proactive" in result:
                from benchmark.report.compare_proactive_page import write_proactive_page

                page = write_proactive_page(Path(args.html), text, result)
            else:
                page = write_comparison_page(Path(args.html), text, result)
        except (OSError, UnsafePathError) as exc:
            print(f"wearsim compare: cannot write {args.html}: {exc}", file=sys.stderr)
            return 1
        if "proactive" in result:
            print(f"proactive runs: {page} (plot: {page.parent / 'recall_false_alarms.png'})", file=sys.stderr)
        else:
            print(
                f"accuracy against latency and cost: {page} (plots: {page.parent / 'accuracy_latency.png'}, "
                f"{page.parent / 'accuracy_cost.png'})",
                file=sys.stderr,
            )
    return 0
