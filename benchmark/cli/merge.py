"""`wearsim merge`: join the run dirs of a sharded run (`wearsim bench --shard K/N`) into one."""

from __future__ import annotations

import argparse

EPILOG = """examples:
  wearsim bench --model openai:gpt-4o-mini --shard 1/2 --output-dir runs/gpt-1of2   # on one machine
  wearsim bench --model openai:gpt-4o-mini --shard 2/2 --output-dir runs/gpt-2of2   # on another
  wearsim merge runs/gpt-1of2 runs/gpt-2of2 --output-dir runs/gpt
The shards must share one manifest (bank hashes, models, judge, settings, prices); a mismatch or two dirs
holding the same cell is refused, naming the field or the cell. Slurm, Kubernetes and CI: docs/sharding.md.
exit status: 0 merged; 2 refused (nothing is written).
"""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "merge",
        help="join the shards of a sharded run into one run dir",
        description="Check that the run dirs are the shards of one run, then write one run dir holding all "
        "their records, kept media and the report, as an unsharded run would have.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("shards", nargs="+", metavar="DIR", help="the shards' run dirs")
    parser.add_argument("--output-dir", required=True, metavar="OUT", help="the merged run dir (new)")
    parser.set_defaults(run=run)


def run(args) -> int:
    import sys
    from pathlib import Path

    from benchmark.merge.runs import MergeError, merge_runs
    from benchmark.report.findings import headline
    from benchmark.scoring import TranscriptError
    from benchmark.scoring.summary_view import RunSummary

    try:
        merged = merge_runs([Path(p) for p in args.shards], Path(args.output_dir))
    except (MergeError, TranscriptError, ValueError, OSError) as exc:  # MergeError names the field or cell
        print(f"wearsim merge: {exc}", file=sys.stderr)
        return 2
    print(
        f"merged {merged['shards']} shards: {merged['records']} records, {merged['media_files']} media files "
        f"-> {args.output_dir}",
        file=sys.stderr,
    )
    if merged["refused"]:  # the records still name them; the viewer shows them as missing
        shown = merged["refused"][:20]
        print(
            f"refused {len(merged['refused'])} media files (not copied; what a kept frame or WAV cannot be):\n  "
            + "\n  ".join(shown)
            + (f"\n  ... and {len(merged['refused']) - 20} more" if len(merged["refused"]) > 20 else ""),
            file=sys.stderr,
        )
    if merged["missing"]:
        print(f"note: shard {', '.join(merged['missing'])} not given: its cells count as not run", file=sys.stderr)
    print(headline(RunSummary.from_json(merged["summary"])))
    print(f"report: {Path(args.output_dir) / 'findings.md'}")
    return 0
