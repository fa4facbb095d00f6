"""`wearsim labels`: a run's sample out to Label Studio, and labels made elsewhere back in."""

from __future__ import annotations

import argparse

EPILOG = """examples:
  wearsim labels export runs/first --output tasks.json --sample 100 --seed 47
      # tasks.json for Label Studio's import, tasks.xml its labelling config
  wearsim labels import runs/first export.json                # a Label Studio JSON export
  wearsim labels import runs/first export.json --annotator ana
  wearsim labels import runs/first labels.csv                 # trial_key,label,annotator[,note]
then: wearsim agreement runs/first

Imported labels join RUN_DIR/labels/NAME.jsonl (a label for an item already
there replaces it). A row with an unknown trial key or a label outside the
item's ones stops the import with one line naming the file and the task or
line; nothing is written then.
"""


def register(subparsers) -> None:
    from benchmark.labels import DEFAULT_SEED, WHATS

    parser = subparsers.add_parser(
        "labels",
        help="export a sample to Label Studio; import Label Studio or CSV labels",
        description="Move a run's labelling sample and its labels between wearsim and other tools.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    export = actions.add_parser(
        "export",
        help="the sample as a Label Studio task file",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    export.add_argument("run_dir", metavar="RUN_DIR")
    export.add_argument("--output", required=True, metavar="FILE", help="the task file (.json); FILE.xml beside it")
    export.add_argument("--sample", type=int, default=100, metavar="N", help="as wearsim annotate (0: every item)")
    export.add_argument("--seed", type=int, default=DEFAULT_SEED, metavar="S", help="as wearsim annotate")
    export.add_argument("--what", choices=WHATS, default="turn2")
    export.add_argument("--scenarios", metavar="BANK")
    imported = actions.add_parser(
        "import",
        help="a Label Studio JSON export (.json) or a CSV (.csv) into labels/",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    imported.add_argument("run_dir", metavar="RUN_DIR")
    imported.add_argument("file", metavar="FILE", help="Label Studio JSON export (.json) or CSV (.csv)")
    imported.add_argument(
        "--annotator",
        metavar="NAME",
        help="who labelled a Label Studio export (default: each annotation's completed_by)",
    )
    imported.add_argument("--scenarios", metavar="BANK")
    parser.set_defaults(run=run)


def run(args) -> int:
    import sys
    from pathlib import Path

    from benchmark.labels.exchange import export_label_studio, read_csv, read_label_studio
    from benchmark.labels.items import LabelError
    from benchmark.labels.run import open_label_run
    from benchmark.labels.store import import_labels

    try:
        run_dir = open_label_run(args.run_dir, args.scenarios)
        if args.action == "export":
            sample = run_dir.sample(args.what, args.sample or None, args.seed)
            tasks, config = export_label_studio(sample, args.what, Path(args.output))
            print(f"wrote {len(sample)} tasks to {tasks} and the labelling config to {config}")
            return 0
        path = Path(args.file)
        if path.suffix.lower() == ".csv":
            labels = read_csv(path, run_dir.known)
        else:
            labels = read_label_studio(path, run_dir.known, args.annotator)
        counts = import_labels(Path(args.run_dir), labels, run_dir.known)
    except (LabelError, ValueError) as exc:
        print(f"wearsim labels: {exc}", file=sys.stderr)
        return 2
    for name, n in counts.items():
        print(f"{name}: {n} labels imported into {Path(args.run_dir) / 'labels' / (name + '.jsonl')}")
    if not counts:
        print("no labels in the file (cancelled or empty annotations are skipped)")
    return 0
