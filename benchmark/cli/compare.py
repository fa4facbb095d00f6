"""`wearsim compare`: paired comparison of two runs."""

from __future__ import annotations

import argparse

EPILOG = """examples:
  wearsim compare runs/gpt-4o runs/gemini-2.0-flash
  wearsim compare runs/a runs/b --condition baseline --json
"""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="compare two runs trial by trial",
        description="Pair trials by (scenario, condition, trial). Reports the difference in balanced "
        "accuracy (B - A) with a paired bootstrap CI over scenarios, an exact McNemar test on Turn 2 "
        "pass, and the scenarios whose trials flipped.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_a", help="run dir or transcripts file A")
    parser.add_argument("run_b", help="run dir or transcripts file B")
    parser.add_argument("--condition", help="condition to compare (default: the ranking condition of A)")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.set_defaults(run=run)


def run(args) -> int:
    import json
    import sys

    from benchmark.compare import compare_runs, render_comparison
    from benchmark.scoring import TranscriptError

    try:
        result = compare_runs(args.run_a, args.run_b, args.condition)
    except (TranscriptError, ValueError) as exc:
        print(f"wearsim compare: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2) if args.json else render_comparison(result))
    return 0
