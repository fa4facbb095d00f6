"""`wearsim probe MODEL`: one short live session against a realtime API, with checks and a trace."""

from __future__ import annotations

import argparse

from candidates.providers import form_list, realtime_forms

EPILOG = """examples:
  wearsim probe openai-realtime:gpt-realtime-2
  wearsim probe gemini-live:gemini-3.8-live --trace gemini-probe.jsonl
  wearsim probe openai-realtime:gpt-realtime-2 --output text --scenario sc-05
  wearsim probe gemini-live:gemini-3.8-live --base-url https://127.0.0.1:9443 --ca-file cert.pem
A server of your own: OpenAI Realtime as http://HOST:PORT/v1 (http becomes ws),
Gemini Live as https://HOST:PORT (the SDK always speaks TLS and adds its own
path); neither asks for a key when --base-url is given. A certificate of its
own (self-signed) is trusted with --ca-file PEM, or SSL_CERT_FILE=PEM.
It costs one short conversation (three spoken questions and their replies; the
third, "What am I holding?" over a pictograph frame, checks that the API
looks at the frames). The trace holds every message sent and received with
media as its size and no API key, nor 8 characters of one: attach it to a bug
report. It is written when the session fails too, the error as its last
line. docs/protocol.md lists what each check is.
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
    p.add_argument("model", metavar="MODEL", help=f"{form_list(realtime_forms())} (wearsim models)")
    p.add_argument(
        "--base-url",
        metavar="URL",
        help="the API's endpoint, for a proxy or a server of your own (default: the provider's): "
        "http://HOST:PORT/v1 for OpenAI Realtime, https://HOST:PORT for Gemini Live",
    )
    p.add_argument(
        "--ca-file",
        metavar="PEM",
        help="trust the certificates in PEM (a local server's self-signed one) for this session; the same "
        "as setting SSL_CERT_FILE=PEM",
    )
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
    import os
    import sys
    from pathlib import Path

    from benchmark.probe.live import run_probe, trace_path
    from benchmark.probe.trace import Redactor, Trace, trace_target_problem
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
    if args.ca_file:
        if not Path(args.ca_file).is_file():
            return fail(f"--ca-file {args.ca_file}: no such file (a PEM certificate)")
        os.environ["SSL_CERT_FILE"] = str(Path(args.ca_file).resolve())  # read by every TLS context made after
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
        said = f"the probe session failed: {type(exc).__name__}: {str(exc)[:300]}"
        if untrusted_certificate(exc):
            said = (
                "the probe session failed: the server's certificate is not trusted (CERTIFICATE_VERIFY_FAILED): "
                "for a server with a certificate of its own (self-signed), pass --ca-file PEM or set SSL_CERT_FILE"
            )
        trace("error", {"type": "probe.error", "error": said, "exception": type(exc).__name__})
        code = fail(said, 1)
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


def untrusted_certificate(exc: BaseException) -> bool:
    """The failure, or one it was raised from (a retry's error wraps the connection's), is a TLS
    certificate that did not verify."""
    import ssl

    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(cause):
            return True
        cause = cause.__cause__ or cause.__context__
    return False
