"""`wearsim view`: write the run viewer, a self-contained index.html, into a run dir."""

from __future__ import annotations

import argparse

EPILOG = """examples:
  wearsim view runs/first                 # then open runs/first/index.html in a browser
  wearsim view runs/first --rebuild       # write summary.json, findings.md and plots/ again first
"""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "view",
        help="write index.html, a self-contained page to browse a run",
        description="Write index.html into a run dir: the headline and findings, the plots, and every "
        "trial (messages, replies, judge verdicts, code signals, provenance, latencies, frames) with "
        "filters by condition, shift type and outcome. It opens from a file with no server or network. "
        "The report (summary.json, findings.md, plots/) is written first when it is missing or older "
        "than transcripts.jsonl.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_dir", help="run dir holding transcripts.jsonl (and manifest.json)")
    parser.add_argument("--rebuild", action="store_true", help="write the report again before the page")
    parser.add_argument("--media", metavar="DIR", help="scenario media folder (default: the repository's media/)")
    parser.set_defaults(run=run)


def run(args) -> int:
    import sys
    from pathlib import Path

    from benchmark.report import write_report
    from benchmark.report.viewer import write_viewer
    from benchmark.scoring import TranscriptError
    from benchmark.scoring.summary_view import RunSummary

    run_dir = Path(args.run_dir)
    transcripts, summary_path = run_dir / "transcripts.jsonl", run_dir / "summary.json"
    if not transcripts.is_file():
        print(f"wearsim view: {run_dir}: not a run dir (no transcripts.jsonl)", file=sys.stderr)
        return 2
    stale = not summary_path.is_file() or summary_path.stat().st_mtime < transcripts.stat().st_mtime
    try:
        summary = RunSummary.from_json(write_report(run_dir)) if args.rebuild or stale else None
        page = write_viewer(run_dir, summary=summary, media_root=Path(args.media) if args.media else None)
    except (TranscriptError, ValueError) as exc:
        print(f"wearsim view: {exc}", file=sys.stderr)
        return 1
    print(page)
    return 0
