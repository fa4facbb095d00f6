"""`wearsim eval`: run one vision evaluator over a JSONL file of cases."""

from __future__ import annotations

import argparse

from benchmark.cli import wrapped
from candidates.providers import default_judge_model_id

EPILOG = """each line of --data is a JSON object: {"output", "expected_output", "input", ...};
"expected_output" may be a JSON object (the json validator's expected keys). Code validators run as
`uv run --script` (the result's details.runner says so; this interpreter only when uv is absent).
LLM judges also take "image" (a path) or "images" (paths), relative to the data file; a case without
one is skipped, and a failed judge call is that case's error.
examples:
  wearsim eval --evaluator count --data cases.jsonl
  wearsim eval --evaluator image-description --data cases.jsonl --judge-model openai:gpt-4o
  wearsim eval --evaluator comparison --data cases.jsonl --judge-model openai:llava --base-url http://127.0.0.1:8000/v1
"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "eval",
        help="run a vision evaluator (code validator or LLM judge) over cases",
        description=wrapped(
            "Score a JSONL file of cases (a model's output beside what was expected) with one vision "
            "evaluator: a code validator (count, ocr, json, chart) or an LLM judge that looks at the case's image; "
            "prints each case's result and the mean score."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--evaluator",
        required=True,
        help="count|ocr|json|chart, or image-description|activity|comparison|reasoning|"
        "structured-output|quality-assessment",
    )
    p.add_argument("--data", required=True, help="JSONL file of cases")
    p.add_argument("--judge-model", default=default_judge_model_id(), help="vision model for the LLM judges")
    p.add_argument(
        "--base-url",
        "--judge-base-url",
        dest="base_url",
        metavar="URL",
        help="the judge model's endpoint, e.g. an OpenAI-compatible server (default: "
        "WEARSIM_JUDGE_BASE_URL for an openai: judge, then OPENAI_BASE_URL)",
    )
    p.add_argument("--timeout", type=float, default=30.0, help="seconds before a validator is killed")
    p.set_defaults(run=run)


def _cases(path):
    import json

    cases = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: line {number}: invalid JSON: {exc.msg}") from None
        if not isinstance(data, dict):
            raise ValueError(f"{path}: line {number}: expected a JSON object")
        cases.append((number, data))
    return cases


def run(args) -> int:
    import asyncio
    import json
    import sys
    from pathlib import Path

    from benchmark.evaluators import VALIDATORS
    from benchmark.evaluators.judges import WEIGHTS

    path = Path(args.data)
    try:
        cases = _cases(path)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.evaluator in VALIDATORS:
        from benchmark.evaluators.runner import run_validator

        results = [run_validator(args.evaluator, data, timeout=args.timeout) for _, data in cases]
    elif args.evaluator in WEIGHTS:
        from benchmark.cli.endpoints import judge_base_url
        from candidates.model_ids import missing_credentials, parse_model_id
        from candidates.providers import PROVIDERS

        args.base_url = judge_base_url(args.base_url, None, args.judge_model)
        try:
            problem = missing_credentials(args.judge_model, base_url=args.base_url)
        except ValueError as exc:
            print(f"error: --judge-model: {exc}", file=sys.stderr)
            return 2
        if problem:
            print(f"error: {problem} (--judge-model {args.judge_model})", file=sys.stderr)
            return 2
        if not PROVIDERS[parse_model_id(args.judge_model)[0]].sees_images:
            print(
                f"error: --judge-model {args.judge_model} reads text only and these judges look at images: "
                "use a vision model, e.g. openai:gpt-4o-mini, gemini:gemini-2.5-flash, or openai:MODEL with "
                "--judge-base-url for a local vision server",
                file=sys.stderr,
            )
            return 2
        results = asyncio.run(_judge_all(args, path, cases))
    else:
        print(
            f"error: unknown evaluator {args.evaluator!r} (known: {', '.join([*VALIDATORS, *WEIGHTS])})",
            file=sys.stderr,
        )
        return 2
    print(f"{'line':>5}  {'status':<10} {'score':>6}  passed  note")
    for (number, _), result in zip(cases, results):
        note = result["details"].get("reason", "") if result["status"] != "processed" else ""
        print(
            f"{number:>5}  {result['status']:<10} {result['score']:>6.3f}  {str(result['passed']):<6}  "
            f"{note[:100]}".rstrip()
        )
    processed = [r for r in results if r["status"] == "processed"]
    summary = {
        "evaluator": args.evaluator,
        "cases": len(results),
        "processed": len(processed),
        "errors": sum(r["status"] == "error" for r in results),
        "skipped": sum(r["status"] == "skipped" for r in results),
        "passed": sum(r["passed"] for r in results),
        "mean_score": round(sum(r["score"] for r in processed) / len(processed), 4) if processed else None,
    }
    print(json.dumps(summary, indent=2))
    return 0


async def _judge_all(args, path, cases):
    import json

    from benchmark.evaluators.judges import VisionCase, judge_case
    from candidates import open_candidate

    results = []
    async with open_candidate(args.judge_model, base_url=args.base_url) as model:
        for _, data in cases:
            images = data.get("images") or ([data["image"]] if data.get("image") else [])
            expected = data.get("expected_output", "")
            expected = expected if isinstance(expected, str) else json.dumps(expected)
            case = VisionCase(
                input=str(data.get("input", "")),
                output=str(data.get("output", "")),
                expected_output=expected,
                images=tuple(path.parent / p for p in images),
            )
            try:
                results.append(await judge_case(args.evaluator, case, model))
            except (OSError, ValueError) as exc:
                results.append({"status": "error", "score": 0.0, "passed": False, "details": {"reason": str(exc)}})
    return results
