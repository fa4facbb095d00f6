"""`wearsim rescore`: judge recorded responses again with another judge."""

from __future__ import annotations

import argparse

EPILOG = """examples:
  wearsim rescore runs/offline --judge-family lexical --output-dir runs/offline-lexical
  wearsim rescore other/transcripts.jsonl --judge-family openai --judge-model gpt-4o-mini \\
      --scenarios benchmark/v1 --output-dir runs/other-rescored
"""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "rescore",
        help="re-judge recorded responses into a new run dir",
        description="Re-judge the recorded Turn 2 and Turn 3 responses without calling the candidate. "
        "Answer keys come from the bank, joined by scenario_id. Writes a new run dir whose summary "
        "reports agreement with the recorded labels.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("source", metavar="RUN_DIR_OR_FILE", help="run dir or transcripts JSON Lines file")
    parser.add_argument("--judge-family", required=True, help="lexical, openai, gemini, claude, ...")
    parser.add_argument("--judge-model", help="judge model id (not needed for lexical)")
    parser.add_argument("--judge-base-url", help="base URL of an OpenAI-compatible judge server")
    parser.add_argument("--scenarios", metavar="BANK", help="bank dir or JSONL file (default: the shipped bank)")
    parser.add_argument("--output-dir", required=True, metavar="DIR", help="new run dir to write")
    parser.set_defaults(run=run)


def run(args) -> int:
    import sys

    from benchmark.candidates.factory import missing_credentials
    from benchmark.judges import JudgeFamilyError, judge_model_id
    from benchmark.report.findings import pct
    from benchmark.rescore import RescoreError, rescore
    from benchmark.scenario import BankError
    from benchmark.scoring import TranscriptError

    if args.judge_family.strip().lower() != "lexical":  # the judge's key, checked before anything is read or written
        try:
            model_id = judge_model_id(args.judge_family, args.judge_model)
            problem = missing_credentials(model_id, base_url=args.judge_base_url, base_url_flag="--judge-base-url")
        except (JudgeFamilyError, ValueError) as exc:
            print(f"wearsim rescore: {exc}", file=sys.stderr)
            return 2
        if problem:
            print(f"wearsim rescore: {problem} (the judge of --judge-family {args.judge_family}; "
                  "--judge-family lexical needs no key)", file=sys.stderr)
            return 2
    try:
        summary = rescore(args.source, judge_family=args.judge_family, judge_model=args.judge_model,
                          scenarios=args.scenarios, output_dir=args.output_dir, base_url=args.judge_base_url)
    except (RescoreError, TranscriptError, BankError, ValueError) as exc:
        print(f"wearsim rescore: {exc}", file=sys.stderr)
        return 1
    agreement = summary.get("judge_agreement")
    primary = summary["primary"]
    print(f"balanced Turn 2 accuracy ({primary['condition']}) with the new judge: {pct(primary['balanced_accuracy'])}")
    if agreement:
        kappa = "n/a" if agreement["kappa"] is None else f"{agreement['kappa']:.3f}"
        print(f"agreement with the recorded labels: {pct(agreement['agreement'])} over {agreement['n']} trials, "
              f"kappa {kappa}")
    else:
        print("no recorded labels to compare with")
    print(f"wrote {args.output_dir}")
    return 0
