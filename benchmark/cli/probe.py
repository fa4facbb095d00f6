"""`wearsim probe MODEL`: one short live session against a realtime API, with checks and a trace."""

from __future__ import annotations

import argparse

EPILOG = """examples:
  wearsim probe openai-realtime:gpt-realtime-2
  wearsim probe gemini-live:gemini-3.8-live --trace gemini-probe.jsonl
  wearsim probe openai-realtime:gpt-realtime-2 --output text --scenario sc-05
It costs one short conversation (two spoken questions and their replies). The
trace holds every message sent and received with media as its size and no
API key: attach it to a bug report. docs/protocol.md lists what each check is.
"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "probe", help="one short live session against a realtime API: which documented behaviours it shows",
        description="Open one session with a realtime API (OpenAI Realtime, Gemini Live) as the glasses would: "
                    "a camera frame and a spoken question from the bank, then a second question talked over "
                    "(barge-in). Prints what it saw (event order, the input transcript's timing, usage by "
                    "modality, errors) and writes a redacted trace of every message.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", metavar="MODEL", help="openai-realtime:MODEL or gemini-live:MODEL (wearsim models)")
    p.add_argument("--base-url", help="the API's endpoint, for a proxy or a local server (default: the provider's)")
    p.add_argument("--output", choices=("audio", "text"), default="audio",
                   help="how the API replies: audio (spoken, with its transcript; the default) or text")
    p.add_argument("--scenario", default="sc-01", help="the bank scenario whose Turn 1 and 2 are asked")
    p.add_argument("--trace", help="where to write the trace (JSON lines); default probe-PROVIDER-MODEL-TIME.jsonl")
    p.set_defaults(run=run)


def run(args) -> int:
    import asyncio
    import sys
    from pathlib import Path

    from candidates.model_ids import is_realtime, missing_credentials, retired_problem
    from candidates.realtime_base import ModelNotFoundError
    from benchmark.probe import run_probe, trace_path
    from core.scenario import load_bank

    def fail(text: str, code: int = 2) -> int:
        print(f"error: {text}", file=sys.stderr)
        return code

    try:
        realtime = is_realtime(args.model)
    except ValueError as exc:
        return fail(str(exc))
    if not realtime:
        return fail(f"{args.model} is not a realtime model id: probe takes openai-realtime:MODEL or gemini-live:MODEL")
    if problem := retired_problem(args.model) or missing_credentials(args.model, base_url=args.base_url):
        return fail(problem)
    try:
        scenario = load_bank().get(args.scenario)
    except KeyError:
        return fail(f"--scenario {args.scenario}: no such scenario in the bank (wearsim validate --json lists them)")
    path = Path(args.trace) if args.trace else trace_path(args.model)
    print(f"probing {args.model} ({args.output} replies)", file=sys.stderr)
    trace = None
    try:
        checks, trace = asyncio.run(run_probe(args.model, scenario, base_url=args.base_url, output=args.output,
                                              say=lambda line: print(f"  {line}", file=sys.stderr)))
    except ModelNotFoundError as exc:
        return fail(str(exc))
    except Exception as exc:  # noqa: BLE001 - the session failed: say how, in one line (no key is in it)
        return fail(f"the probe session failed: {type(exc).__name__}: {str(exc)[:300]}", 1)
    for check in checks:
        print(check.line())
    print(f"trace: {trace.write(path)} ({len(trace.lines)} messages; media shown as sizes, no keys)")
    return 0 if checks[0].ok else 1
