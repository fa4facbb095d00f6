"""`wearsim agreement`: every judge of a run measured against the people who labelled it."""

from __future__ import annotations

import argparse

EPILOG = """examples:
  wearsim agreement runs/first
  wearsim agreement runs/first --judges runs/first-gpt runs/first-gemini      # rescore dirs of the same run
  wearsim agreement runs/first --what turn3

Opens with one verdict on the run's judge: too few items to say (and about how
many more, each labelled alike by two people, give a kappa interval 0.2 wide),
or its kappa against the people with its interval and what that means for the
run's numbers. A people's majority needs two people giving an item one label.
Reads RUN_DIR/labels/*.jsonl (written by wearsim annotate or wearsim labels import)
and writes RUN_DIR/agreement.json, agreement.md and agreement.png (Turn 3 and
remarks: agreement_turn3.*, agreement_remarks.*), then the run's report again
(findings.md, and index.html when it exists), which then say how well the judge
agrees with the people (Turn 2's agreement; a proactive run's, its remarks').
Intervals resample scenarios (Wilson under 10 scenarios). The figures rest on
one sample, which they name: a random one (wearsim annotate --sample N) or a
disagreement sample (--sample disagreements: where the judges disagree, so it
shows where the judge errs, not how often). The two are never pooled: with
labels of both, --sample says which to measure.
"""


def register(subparsers) -> None:
    from benchmark.labels import SAMPLES, WHATS

    parser = subparsers.add_parser(
        "agreement",
        help="measure the run's judges against people's labels",
        description="Cohen's kappa for every pair of raters (each annotator, the run's judge, each --judges "
        "rescore dir), Fleiss' kappa over the annotators, raw agreement, per-label precision and recall of each "
        "judge against the annotators' majority, each with a 95% interval over scenarios; a confusion matrix; "
        "and the items where a judge and the people disagree, linked to the viewer.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="run dir holding transcripts.jsonl and labels/")
    parser.add_argument(
        "--judges",
        nargs="+",
        default=[],
        metavar="DIR",
        help="rescore output dirs of this run (wearsim rescore RUN --output-dir DIR)",
    )
    parser.add_argument("--what", choices=WHATS, default="turn2", help="which labels (default turn2)")
    parser.add_argument(
        "--sample",
        choices=SAMPLES,
        help="the labels of which sample (default: the one the labels are of; labels of both samples are "
        "never pooled, so then this is needed)",
    )
    parser.add_argument(
        "--scenarios", metavar="BANK", help="the run's bank (default: the manifest's, else the shipped bank)"
    )
    parser.set_defaults(run=run)


def run(args) -> int:
    import sys
    from pathlib import Path

    from benchmark.labels.items import LabelError
    from benchmark.labels.refresh import measure_and_report
    from benchmark.labels.run import open_label_run

    try:
        run_dir = open_label_run(args.run_dir, args.scenarios)
        measured = measure_and_report(run_dir, args.what, [Path(d) for d in args.judges], sample=args.sample)
    except (LabelError, ValueError) as exc:
        print(f"wearsim agreement: {exc}", file=sys.stderr)
        return 2
    result = measured.result
    print(result["verdict"]["text"])
    for row in result["against_people"]:
        kappa = (
            "n/a"
            if row["kappa"] is None
            else (
                f"{row['kappa']:.2f} [{row['kappa_ci_low']:.2f}, {row['kappa_ci_high']:.2f}]"
                + (" (Wilson)" if row["ci_method"] == "wilson" else "")
            )
        )
        print(f"{row['judge']}: kappa {kappa} against the people's majority on {row['n']} items")
    if measured.line is not None:  # the report's line: Turn 2's agreement, or a proactive run's remarks'
        print(measured.line)
    print("wrote " + ", ".join(str(p) for p in measured.paths))
    return 0
