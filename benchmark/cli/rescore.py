"""`wearsim rescore`: judge recorded responses again with another judge."""

from __future__ import annotations

import argparse

EPILOG = """examples:
  wearsim rescore runs/offline --judge-family lexical --output-dir runs/offline-lexical
  wearsim rescore other/transcripts.jsonl --judge-family openai --judge-model gpt-4o-mini \\
      --scenarios benchmark/v1 --output-dir runs/other-rescored
  wearsim rescore runs/gpt --judge-family openai --judge-model openai:llama3 \\
      --judge-base-url http://127.0.0.1:8001/v1 --cache --output-dir runs/gpt-llama-judge
A second rescore with --cache and the same judge asks the judge nothing.
"""


def register(subparsers) -> None:
    from benchmark.judges.family import judge_families

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
    parser.add_argument("--judge-family", required=True, help=", ".join(judge_families()))
    parser.add_argument("--judge-model", help="judge model id (not needed for lexical)")
    parser.add_argument(
        "--judge-base-url",
        metavar="URL",
        help="the judge's endpoint, e.g. an OpenAI-compatible server (default: "
        "WEARSIM_JUDGE_BASE_URL for an openai: judge, then OPENAI_BASE_URL)",
    )
    parser.add_argument(
        "--cache",
        action="store_true",
        help="store and reuse the judge's replies in the response cache (see wearsim cache)",
    )
    parser.add_argument(
        "--cache-dir", metavar="DIR", help="the cache directory (default WEARSIM_CACHE_DIR, else ~/.cache/wearsim)"
    )
    parser.add_argument("--scenarios", metavar="BANK", help="bank dir or JSONL file (default: the shipped bank)")
    parser.add_argument("--output-dir", required=True, metavar="DIR", help="new run dir to write")
    parser.set_defaults(run=run)


class _Progress:
    """The rescore's progress on stderr: redrawn in place on a terminal (at most ten times a second), a plain
    line per tenth of the trials or per 30 s in a log (`benchmark.run.progress.Pace`). `rescore` reports
    each trial as "rescored N/TOTAL: ..."."""

    def __init__(self):
        self.pace = None

    def __call__(self, text: str) -> None:
        import re

        from benchmark.run.progress import Pace

        self.pace = self.pace or Pace()
        count = re.match(r"rescored (\d+)/(\d+)", text)
        done, total = (int(count[1]), int(count[2])) if count else (0, 0)
        if self.pace.due(done, total, force=bool(total) and done == total):
            self.pace.write(f"{text:<100}" if self.pace.live else text)

    def close(self) -> None:
        if self.pace is not None:
            self.pace.close()


def run(args) -> int:
    import sys

    from benchmark.cli.endpoints import effective_base_url, judge_base_url, named_judge
    from benchmark.judges import JudgeFamilyError, judge_model_id
    from benchmark.judges.kinds import is_offline, offline_fallback
    from benchmark.report.findings import pct
    from benchmark.rescore import RescoreError, rescore
    from benchmark.scoring import TranscriptError
    from candidates.model_ids import missing_credentials
    from core.scenario import BankError

    cache = None
    base_url = args.judge_base_url
    judge_model = args.judge_model
    if not is_offline(args.judge_family):  # the judge's key, checked before anything is read or written
        try:
            model_id = judge_model_id(args.judge_family, args.judge_model)
            base_url = effective_base_url(model_id, judge_base_url(args.judge_base_url, args.judge_family, model_id))
            problem = missing_credentials(model_id, base_url=base_url, base_url_flag="--judge-base-url")
        except (JudgeFamilyError, ValueError) as exc:
            print(f"wearsim rescore: {exc}", file=sys.stderr)
            return 2
        if problem:
            print(
                f"wearsim rescore: {problem} (the judge of --judge-family {args.judge_family}; "
                f"--judge-family {offline_fallback()} needs no key)",
                file=sys.stderr,
            )
            return 2
        try:  # a judge the user did not name, at a custom endpoint: recorded as the endpoint names it
            judge_model = named_judge(args.judge_model, model_id, base_url)
        except ValueError as exc:
            print(f"wearsim rescore: {exc}; nothing was written", file=sys.stderr)
            return 2
        if args.cache:
            from pathlib import Path

            from benchmark.judges.family import set_default_cache
            from candidates.cache import ResponseCache

            cache = ResponseCache(Path(args.cache_dir).expanduser() if args.cache_dir else None)
            set_default_cache(cache)
    progress = _Progress()  # one per run: its stream is the stderr of the moment it first writes
    try:
        summary = rescore(
            args.source,
            judge_family=args.judge_family,
            judge_model=judge_model,
            scenarios=args.scenarios,
            output_dir=args.output_dir,
            base_url=base_url,
            progress=progress,
        )
    except (RescoreError, TranscriptError, BankError, ValueError) as exc:
        print(f"wearsim rescore: {exc}", file=sys.stderr)
        return 1
    finally:
        progress.close()
        if cache is not None:
            from benchmark.judges.family import set_default_cache

            set_default_cache(None)
    if cache is not None:
        print(
            f"response cache {cache.directory}: {cache.hits} judge replies from the cache, {cache.misses} requested",
            file=sys.stderr,
        )
    from benchmark.report.findings import headline
    from benchmark.report.proactive_findings import is_proactive, proactive_headline
    from benchmark.scoring.summary_view import RunSummary

    run_summary = RunSummary.from_json(summary)
    agreement = run_summary.judge_agreement

    if is_proactive(run_summary):  # remarks judged and decided again, under today's rule (echoes included)
        print("with the new judge and rule:\n" + proactive_headline(run_summary))
        print(f"wrote {args.output_dir}")
        return 0
    print(f"with the new judge: {headline(run_summary)}")
    if agreement:
        kappa = "n/a" if agreement.kappa is None else f"{agreement.kappa:.3f}"
        print(
            f"agreement with the recorded labels: {pct(agreement.agreement)} over {agreement.n} trials, kappa {kappa}"
        )
    else:
        print("no recorded labels to compare with")
    print(f"wrote {args.output_dir}")
    return 0
