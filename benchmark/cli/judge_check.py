"""`wearsim judge-check`: a judge measured against a file of reference labels, before it is trusted."""

from __future__ import annotations

import argparse

EPILOG = """examples:
  wearsim judge-check ../shared/data/judge-tuning/careful_labels.jsonl            # the lexical judge
  wearsim judge-check careful_labels.jsonl --judge-family openai --judge-model openai:qwen2.5 \\
      --judge-base-url http://127.0.0.1:8001/v1 --output qwen-judge.json
  wearsim judge-check runs/first                                  # the people's labels of a run (wearsim annotate)
  wearsim judge-check export.json --run runs/first                # a Label Studio export of that run
  wearsim judge-check labels.csv --run runs/first                 # trial_key,label,annotator[,note]

LABELS is careful labels (JSON Lines: file, scenario_id, condition, trials, label;
the replies files and v1bank/ beside it), a run dir or its labels/ folder, a Label
Studio JSON export or a CSV (these two with --run, the run whose replies they
label). The reference is the label given, or the annotators' majority; items with
null, "cannot tell" only, a tie, or a Turn 3 or remark label are skipped and counted.
Prints coverage, Cohen's kappa with its 95% interval over scenarios, agreement,
per-label precision and recall, and the confusion matrix. A file that cannot be
read as one of these is one line, `error: FILE: line N: ...`, exit 2, nothing written.
"""

MAX_CONCURRENCY = 64


def _concurrency(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_CONCURRENCY:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to {MAX_CONCURRENCY}, got {text!r}")
    return value


def register(subparsers) -> None:
    from benchmark.judges.family import judge_families
    from benchmark.judges.kinds import offline_fallback
    from benchmark.labels.check import DEFAULT_CONCURRENCY

    parser = subparsers.add_parser(
        "judge-check",
        help="measure a judge (lexical or an LLM) against reference labels",
        description="Judge every labelled Turn 2 reply with one judge and measure it against the labels: "
        "coverage, Cohen's kappa with its 95% interval, agreement, per-label precision and recall, and the "
        "confusion matrix. With no --judge-family and no judge key set it checks the lexical judge.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "labels", metavar="LABELS", help="careful-labels JSONL, a run dir, a Label Studio JSON or a CSV"
    )
    parser.add_argument(
        "--run", dest="run_dir", metavar="RUN_DIR", help="the run whose replies a Label Studio export or a CSV labels"
    )
    parser.add_argument(
        "--scenarios", metavar="BANK", help="the run's bank (default: its manifest's, else the shipped)"
    )
    parser.add_argument(
        "--judge-family", help=f"{', '.join(judge_families())} (default: {offline_fallback()} when no key is set)"
    )
    parser.add_argument("--judge-model", help="the judge model id (not for lexical)")
    parser.add_argument(
        "--judge-base-url",
        metavar="URL",
        help="the judge's OpenAI-compatible endpoint (default: WEARSIM_JUDGE_BASE_URL, then OPENAI_BASE_URL)",
    )
    parser.add_argument("--output", metavar="FILE.json", help="write the figures as JSON too")
    parser.add_argument("--force", action="store_true", help="write --output over an existing file")
    parser.add_argument(
        "--concurrency",
        type=_concurrency,
        default=DEFAULT_CONCURRENCY,
        metavar="N",
        help=f"LLM judge calls at a time (default {DEFAULT_CONCURRENCY})",
    )
    parser.set_defaults(run=run)


class JudgeChoiceError(ValueError):
    """The flags do not name a judge that can be opened; the message says what to pass."""


def resolve_judge(args) -> tuple[str, str | None, str | None, str | None]:
    """(family, model id, base URL, endpoint host) of the judge the flags name, opened as `wearsim rescore`
    opens one; `JudgeChoiceError` when they name none that can be opened here."""
    from benchmark.cli.endpoints import effective_base_url, judge_base_url, named_judge
    from benchmark.judges import JudgeFamilyError, judge_model_id, resolve_judge_family
    from benchmark.judges.family import endpoint_host, judge_families
    from benchmark.judges.kinds import is_offline, offline_fallback
    from candidates.model_ids import missing_credentials

    requested = args.judge_family or "auto"
    base_url = judge_base_url(args.judge_base_url, requested, args.judge_model)
    try:
        family, _ = resolve_judge_family(requested, "", base_url=base_url)
    except JudgeFamilyError as exc:
        if args.judge_family:
            raise JudgeChoiceError(str(exc)) from None
        raise JudgeChoiceError(
            "a judge key or endpoint is set, so name the judge to check: --judge-family " + "|".join(judge_families())
        ) from None
    if is_offline(family):
        if args.judge_model or args.judge_base_url:
            raise JudgeChoiceError(
                "--judge-model and --judge-base-url go with an LLM judge (--judge-family openai ...)"
            )
        return family, None, None, None
    try:
        model_id = judge_model_id(family, args.judge_model)
        problem = missing_credentials(model_id, base_url=base_url, base_url_flag="--judge-base-url")
        reached = effective_base_url(model_id, base_url)
        endpoint = endpoint_host(reached)
    except (JudgeFamilyError, ValueError) as exc:
        raise JudgeChoiceError(str(exc)) from None
    if problem:
        raise JudgeChoiceError(
            f"{problem} (the judge of --judge-family {family}; --judge-family {offline_fallback()} needs no key)"
        )
    try:  # a judge at a custom endpoint is named by the endpoint, never the family's default
        model_id = judge_model_id(family, named_judge(args.judge_model, model_id, reached))
    except (JudgeFamilyError, ValueError) as exc:
        raise JudgeChoiceError(str(exc)) from None
    return family, model_id, base_url, endpoint


class _Progress:
    """Items judged so far on stderr, paced as a run's progress is (`benchmark.run.progress.Pace`)."""

    def __init__(self):
        from benchmark.run.progress import Pace

        self.pace = Pace()

    def __call__(self, done: int, total: int) -> None:
        if self.pace.due(done, total, force=done == total):
            self.pace.write(f"judged {done}/{total}")

    def close(self) -> None:
        self.pace.close()


def _output_path(args):
    """The --output path when it may be written (checked before anything is judged), else None."""
    from pathlib import Path

    if not args.output:
        return None
    out = Path(args.output)
    if out.is_dir():
        raise JudgeChoiceError(f"--output {out}: a folder; give a file name")
    if (out.exists() or out.is_symlink()) and not args.force:
        raise JudgeChoiceError(f"--output {out}: already exists (--force writes over it)")
    if not out.parent.is_dir():
        raise JudgeChoiceError(f"--output {out}: no folder {out.parent}")
    return out


def run(args) -> int:
    import asyncio
    import json
    import sys

    from benchmark.judges import open_judge
    from benchmark.judges.kinds import is_offline
    from benchmark.labels.check import JudgeCallError, judge_all, judge_facts, measure, render
    from benchmark.labels.items import LabelError
    from benchmark.labels.reference import read_references
    from core.safe_files import write_atomic

    try:
        family, model, base_url, endpoint = resolve_judge(args)
        out = _output_path(args)
        references = read_references(args.labels, args.run_dir, args.scenarios)
    except (JudgeChoiceError, LabelError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    progress = _Progress() if not is_offline(family) and references.items else None

    async def check() -> dict:
        async with open_judge(family, model, base_url=base_url) as judge:
            verdicts = await judge_all(judge, references, concurrency=args.concurrency, progress=progress)
            return measure(references, verdicts, judge_facts(judge, endpoint))

    try:
        report = asyncio.run(check())
    except JudgeCallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        if progress is not None:
            progress.close()
    print(render(report))
    if out is not None:
        write_atomic(out, json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        print(f"wrote {out}")
    return 0
