"""`wearsim proxy-report`: how far the score moves from the text proxy to perceived media, and why."""

from __future__ import annotations

import argparse

EPILOG = """examples:
  wearsim bench --conditions baseline --output-dir runs/text
  wearsim bench --via stream --conditions baseline --output-dir runs/stream
  wearsim proxy-report runs/text runs/stream
  wearsim proxy-report runs/text runs/stream --condition baseline --output-dir reports/proxy

Writes proxy_report.json, proxy_report.md, proxy_report.html (self-contained)
and three PNG plots. Exit status 2 when the runs cannot be compared (e.g.
their manifests record different bank hashes).
"""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "proxy-report",
        help="check the text proxy against perceived media (two runs)",
        description="Pair the trials of run A (usually the text proxy) and run B (usually the simulated "
        "glasses) by (scenario, condition, trial). Reports balanced Turn 2 accuracy on each side, B - A "
        "with a paired bootstrap interval over scenarios and an exact McNemar test, the same per shift "
        "type and target class; per input channel the perceived/authored counts, Whisper's word error "
        "rate and the scene descriptions against the authored text; which channels were perceived in "
        "each flip; and the stream's latencies.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_a", metavar="TEXT_RUN", help="run dir A (usually the text proxy)")
    parser.add_argument("run_b", metavar="STREAM_RUN", help="run dir B (usually the simulated glasses)")
    parser.add_argument("--output-dir", help="where to write the report (default: STREAM_RUN/proxy_report)")
    parser.add_argument("--condition", help="prompt condition to compare (default: the ranking condition of A)")
    parser.add_argument("--scenarios", help="bank with the authored text (default: the bank the runs recorded)")
    parser.set_defaults(run=run)


def run(args) -> int:
    import sys
    from pathlib import Path

    from benchmark.proxy import ProxyReportError, build_proxy_report, write_proxy_report

    def fail(message: str) -> int:
        print(f"wearsim proxy-report: {message}", file=sys.stderr)
        return 2

    try:
        report = build_proxy_report(args.run_a, args.run_b, condition=args.condition, scenarios=args.scenarios)
    except ProxyReportError as exc:
        return fail(str(exc))
    if args.output_dir:
        out = Path(args.output_dir)
    elif Path(args.run_b).is_dir():
        out = Path(args.run_b) / "proxy_report"
    else:
        out = Path(args.run_b).parent / "proxy_report"
    try:
        files = write_proxy_report(report, out)
    except ValueError as exc:  # an output that is a link (core.safe_files)
        return fail(str(exc))
    except OSError as exc:
        return fail(f"cannot write the report to {out}: {exc.strerror or exc}")
    print(report["headline"]["text"])
    att = report["attribution"]
    if att["total"]:
        c = att["counts"]
        print(
            f"flips: {att['total']} (speech {c['speech']}, scene {c['scene']}, both {c['both']}, "
            f"neither {c['neither']}, unknown {c['unknown']})"
        )
    print(f"report: {files['markdown']}")
    print(f"html:   {files['html']}")
    return 0
