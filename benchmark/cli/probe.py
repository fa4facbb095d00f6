"""`wearsim probe MODEL`: one short live session against a realtime API, with checks and a trace."""

from __future__ import annotations

import argparse

EPILOG = """examples:
  wearsim probe openai-realtime:gpt-realtime-2
  wearsim probe gemini-live:gemini-3.8-live --trace gemini-probe.jsonl
  wearsim probe openai-realtime:gpt-realtime-2 --output text --scenario sc-05
It costs one short conversation (three spoken questions and their replies; the
third, "What am I holding?" over a pictograph frame, checks that the API
looks at the frames). The trace holds every message sent and received with
media as its size and no API key, nor 8 characters of one: attach it to a bug
report. It is written when the session fails too. docs/protocol.md lists
what each check is.
"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "probe",
        help="one short live session: what a realtime API does today",
        description="Open one session with a realtime API (OpenAI Realtime, Gemini Live) as the glasses would: "
        "a camera frame and a spoken question from the bank, then a second question talked over "
        '(barge-in), then a pictograph frame and "What am I holding?" (the sight check). Prints '
        "what it saw (event order, the input transcript's timing, usage by modality, errors, the "
        "objects the reply names) and writes a redacted trace of every message.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("model", metavar="MODEL", help="openai-realtime:MODEL or gemini-live:MODEL (wearsim models)")
    p.add_argument("--base-url", help="the API's endpoint, for a proxy or a local server (default: the provider's)")
    p.add_argument(
        "--output",
        choices=("audio", "text"),
        default="audio",
        help="how the API replies: audio (spoken, with its transcript; the default) or text",
    )
    p.add_argument("--scenario", default="sc-01", help="the bank scenario whose Turn 1 and 2 are asked")
    p.add_argument("--trace", help="where to write the trace (JSON lines); default probe-PROVIDER-MODEL-TIME.jsonl")
    p.set_defaults(run=run)


def run(args) -> int:
    import asyncio
    import sys
    from pathlib import Path

    from benchmark.probe import run_probe, trace_path
    from benchmark.probe_trace import Redactor, Trace, trace_target_problem
    from candidates.model_ids import is_realtime, missing_credentials, retired_problem
    from candidates.realtime_base import ModelNotFoundError
    from core.scenario import load_bank
    from core.scenes import SceneError, load_scene_specs

    redactor = Redactor.from_environment()

    def fail(text: str, code: int = 2) -> int:
        print(f"error: {redactor.text(text)}", file=sys.stderr)
        return code

    try:
        realtime = is_realtime(args.model)
    except ValueError as exc:
        return fail(str(exc))
    if not realtime:
        return fail(f"{args.model} is not a realtime model id: probe takes openai-realtime:MODEL or gemini-live:MODEL")
    if problem := retired_problem(args.model) or missing_credentials(args.model, base_url=args.base_url):
        return fail(problem)
    bank = load_bank()
    try:
        scenario = bank.get(args.scenario)
    except KeyError:
        return fail(f"--scenario {args.scenario}: no such scenario in the bank (wearsim validate --json lists them)")
    try:
        spec = load_scene_specs(bank).get(scenario.scenario_id)
    except SceneError as exc:
        return fail(str(exc))
    path = Path(args.trace) if args.trace else trace_path(args.model)
    if problem := trace_target_problem(path):  # before anything is asked of a paid API
        return fail(problem)
    print(f"probing {args.model} ({args.output} replies)", file=sys.stderr)
    trace = Trace(redactor=redactor)
    code = 0
    try:
        checks = asyncio.run(
            run_probe(
                args.model,
                scenario,
                spec.scenes.get("turn_2") if spec else None,
                base_url=args.base_url,
                output=args.output,
                trace=trace,
                say=lambda line: print(f"  {redactor.text(line)}", file=sys.stderr),
            )
        )
        for check in checks:
            print(redactor.text(check.line()))
        code = 0 if checks[0].ok else 1
    except ModelNotFoundError as exc:
        code = fail(str(exc))
    except Exception as exc:  # noqa: BLE001 - the session failed: say how, in one line, through the redactor
        code = fail(f"the probe session failed: {type(exc).__name__}: {str(exc)[:300]}", 1)
    finally:
        try:
            written = trace.write(path)  # what happened up to a failure too
        except (OSError, ValueError) as exc:
            code = fail(f"--trace {path}: not written: {exc}", code or 1)
        else:
            print(
                f"trace: {written} ({len(trace.lines)} messages; media shown as sizes, no keys)",
                file=sys.stderr if code else sys.stdout,
            )
    return code
