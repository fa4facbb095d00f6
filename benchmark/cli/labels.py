"""`wearsim labels`: a run's sample and its labels out to Label Studio or a CSV, and labels made elsewhere back in."""

from __future__ import annotations

import argparse

EPILOG = """examples:
  wearsim labels export runs/first --output labels.json       # Label Studio JSON, labels.xml its config
  wearsim labels export runs/first --output labels.csv        # trial_key,label,annotator,note,time
  wearsim labels export runs/first --output out.txt --format csv --force
  wearsim labels import runs/first labels.json                # a Label Studio JSON export (or ours)
  wearsim labels import runs/first export.json --annotator-map users.json   # {"1": "ana", "7": "ben"}
  wearsim labels import runs/first export.json --annotator ana
  wearsim labels import runs/first labels.csv                 # trial_key,label,annotator[,note]
  wearsim labels import runs/first hard.json --sample disagreements   # labels of a disagreement sample
then: wearsim agreement runs/first

An export holds the sample (--sample, --seed: the items wearsim annotate shows)
and every label given to it, and any other item of the kind someone labelled.
Its format is --format, else the output's suffix (.json, .csv); an existing
file (or, for JSON, FILE.xml) is kept unless --force.

Imported labels join RUN_DIR/labels/NAME.jsonl (a label for an item already
there replaces it; one unchanged is left as it is, and one changed there after
the file's time, a Label Studio annotation's updated_at or the CSV's time, is
kept: so export, edit, import changes only what was edited). The annotator of a Label Studio annotation is
--annotator, else its user in --annotator-map, else the e-mail or name its
completed_by carries; a bare user id needs --annotator-map. A row with an
unknown trial key or a label outside the item's ones stops the import with one
line naming the file and the task or line; nothing is written then. After an
import the run's agreement and the human-check line of findings.md and the
viewer are measured again.
"""


def register(subparsers) -> None:
    from benchmark.labels import DEFAULT_SEED, SAMPLES, WHATS

    parser = subparsers.add_parser(
        "labels",
        help="move a sample and its labels to and from Label Studio or CSV",
        description="Move a run's labelling sample and its labels between wearsim and other tools.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    export = actions.add_parser(
        "export",
        help="the sample and its labels as a Label Studio JSON export or a CSV",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    export.add_argument("run_dir", metavar="RUN_DIR")
    export.add_argument(
        "--output", required=True, metavar="FILE", help="FILE.json (Label Studio; FILE.xml beside it) or FILE.csv"
    )
    export.add_argument("--format", choices=("json", "csv"), help="the format (default: from the output's suffix)")
    export.add_argument("--force", action="store_true", help="overwrite an existing output (and FILE.xml)")
    export.add_argument(
        "--sample",
        default="100",
        metavar="N|disagreements[:N]",
        help="as wearsim annotate (0: every item; disagreements: the judges' disagreements first)",
    )
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
    imported.add_argument("--annotator", metavar="NAME", help="who labelled the whole Label Studio export")
    imported.add_argument(
        "--annotator-map",
        metavar="FILE",
        help='a JSON object from Label Studio user ids to annotator names, {"1": "ana", "7": "ben"}',
    )
    imported.add_argument(
        "--sample",
        choices=SAMPLES,
        help="the sample the file's labels were drawn by, where the file does not say (default: the sample of "
        "the label already there, else random); the two are never pooled",
    )
    imported.add_argument("--scenarios", metavar="BANK")
    parser.set_defaults(run=run)


def _export(args, run_dir) -> int:
    from pathlib import Path

    from benchmark.labels.export import write_export
    from benchmark.labels.sample import parse_sample

    sample = run_dir.sample_of(args.what, parse_sample(args.sample), args.seed)
    paths, items, labels = write_export(run_dir, args.what, sample, Path(args.output), args.format, args.force)
    config = f" and the labelling config to {paths[1]}" if len(paths) > 1 else ""
    print(f"wrote {items} items and {labels} labels to {paths[0]}{config}")
    return 0


def _import(args, run_dir) -> int:
    import sys
    from dataclasses import replace
    from pathlib import Path

    from benchmark.labels.exchange import read_annotator_map, read_csv, read_label_studio
    from benchmark.labels.items import LabelError
    from benchmark.labels.refresh import refresh_human_check
    from benchmark.labels.store import import_labels, label_path

    path = Path(args.file)
    if path.suffix.lower() == ".csv":
        if args.annotator or args.annotator_map:
            raise LabelError(
                f"{path}: a CSV names its annotator on every row; --annotator and --annotator-map "
                "are for a Label Studio export"
            )
        labels = read_csv(path, run_dir.known)
    else:
        mapping = read_annotator_map(Path(args.annotator_map)) if args.annotator_map else None
        labels = read_label_studio(path, run_dir.known, args.annotator, mapping)
    if args.sample:  # the sample of the labels the file does not say one for
        labels = [label if label.sample else replace(label, sample=args.sample) for label in labels]
    counts = import_labels(run_dir.run_dir, labels, run_dir.known)
    for name, (written, same, kept) in counts.items():
        notes = [f"{same} already there unchanged"] if same else []
        if kept:
            notes.append(f"{kept} kept as changed in labels/ after the file was written")
        also = f" ({'; '.join(notes)})" if notes else ""
        print(f"{name}: {written} labels imported into {label_path(run_dir.run_dir, name)}{also}")
    if not counts:
        print("no labels in the file (cancelled or empty annotations are skipped)")
    if not any(written for written, _, _ in counts.values()):
        return 0
    try:
        measured = refresh_human_check(run_dir, {label.what for label in labels}, args.sample)
    except ValueError as exc:  # the labels are in; only the report's line could not be measured again
        print(
            f"wearsim labels: the labels are saved; the human check was not measured again ({exc}); "
            f"run wearsim agreement {args.run_dir}",
            file=sys.stderr,
        )
        return 0
    if measured is not None:
        for source in measured.dropped:
            print(f"(the last agreement's --judges {source} is no longer there: measured without it)")
        print(measured.line or measured.result["verdict"]["text"])
    return 0


def run(args) -> int:
    import sys

    from benchmark.labels.items import LabelError
    from benchmark.labels.run import open_label_run

    try:
        run_dir = open_label_run(args.run_dir, args.scenarios)
        return _export(args, run_dir) if args.action == "export" else _import(args, run_dir)
    except (LabelError, ValueError) as exc:
        print(f"wearsim labels: {exc}", file=sys.stderr)
        return 2
