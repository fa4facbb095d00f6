"""`wearsim report`: rebuild summary.json, findings.md and plots/ from transcripts."""

from __future__ import annotations

import argparse

EPILOG = """examples:
  wearsim report runs/offline
  wearsim report runs/offline --html     # also write runs/offline/index.html (the run viewer)
  wearsim report --from-transcripts other_tool/transcripts.jsonl --output-dir runs/other_tool
"""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "report",
        help="score a run: summary.json, findings.md and plots/",
        description="Score the trials of a run dir (or of a transcripts file from any implementation "
        "of the benchmark) and write summary.json, findings.md and plots/.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_dir", nargs="?", help="run dir holding transcripts.jsonl (and manifest.json)")
    parser.add_argument(
        "--from-transcripts",
        metavar="FILE",
        help="read this transcripts JSON Lines file instead (ours or the external format)",
    )
    parser.add_argument("--output-dir", metavar="DIR", help="where to write (default: the run dir)")
    parser.add_argument("--json", action="store_true", help="print summary.json to stdout")
    parser.add_argument(
        "--html", action="store_true", help="also write index.html, the self-contained run viewer (see `wearsim view`)"
    )
    parser.set_defaults(run=run)


def run(args) -> int:
    import json
    import sys
    from pathlib import Path

    from benchmark.report import write_report
    from benchmark.report.findings import headline
    from benchmark.scoring import TranscriptError
    from benchmark.scoring.summary_view import RunSummary

    if args.from_transcripts:
        if not args.output_dir and not args.run_dir:
            print("wearsim report: --from-transcripts needs --output-dir DIR", file=sys.stderr)
            return 2
        out = Path(args.output_dir or args.run_dir)
        run_dir, transcripts = (Path(args.run_dir) if args.run_dir else out), Path(args.from_transcripts)
    elif args.run_dir:
        run_dir, transcripts, out = Path(args.run_dir), None, Path(args.output_dir or args.run_dir)
        if not run_dir.is_dir():
            print(f"wearsim report: {run_dir}: not a run dir", file=sys.stderr)
            return 2
    else:
        print("wearsim report: give RUN_DIR or --from-transcripts FILE --output-dir DIR", file=sys.stderr)
        return 2
    try:
        summary = write_report(run_dir, transcripts=transcripts, output_dir=out)
    except (TranscriptError, ValueError) as exc:
        print(f"wearsim report: {exc}", file=sys.stderr)
        return 1
    run_summary = RunSummary.from_json(summary)
    page = None
    if args.html:
        from benchmark.report.viewer import write_viewer

        page = write_viewer(run_dir, transcripts=transcripts, output_dir=out, summary=run_summary)
    if args.json:
        print(json.dumps(summary, indent=2))
        if page is not None:
            print(f"wrote {page}", file=sys.stderr)
        return 0
    from benchmark.report.proactive_findings import is_proactive, proactive_headline

    counts = run_summary.counts
    if is_proactive(run_summary):  # its cells' two numbers; the Q&A counts and cost lines would read 0
        print(proactive_headline(run_summary))
    else:
        from benchmark.report.camera_text import camera_text_note
        from benchmark.report.cost import cost_line

        print(headline(run_summary))
        if note := camera_text_note(run_summary):
            print(note)
        print(
            f"trials {counts.trials}, scored {counts.scored}, unscored {counts.turn_2_unscored}, "
            f"errored {counts.errored}"
        )
        print(cost_line(run_summary))
    print(f"wrote {out / 'summary.json'}, {out / 'findings.md'}, {out / 'plots'}/")
    if page is not None:
        print(f"wrote {page}")
    return 0
