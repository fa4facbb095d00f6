"""The `wearsim` command. Each subcommand lives in its own module here with
`register(subparsers)`; modules import only argparse at the top and do their
heavy imports inside the function that runs the command.

A failure a user can fix is one line on stderr naming what failed and what
to change, never a traceback; `wearsim --debug COMMAND ...` shows the
traceback instead.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

# subcommand modules, in the order `wearsim --help` lists them
COMMAND_MODULES = (
    "benchmark.cli.validate",
    "benchmark.cli.card",
    "benchmark.cli.bench",
    "benchmark.cli.report",
    "benchmark.cli.view",
    "benchmark.cli.rescore",
    "benchmark.cli.annotate",
    "benchmark.cli.agreement",
    "benchmark.cli.labels",
    "benchmark.cli.judge_check",
    "benchmark.cli.compare",
    "benchmark.cli.merge",
    "benchmark.cli.proxy_report",
    "benchmark.cli.eval",
    "benchmark.cli.perceive",
    "benchmark.cli.media",
    "benchmark.cli.serve",
    "benchmark.cli.simulate",
    "benchmark.cli.models",
    "benchmark.cli.probe",
    "benchmark.cli.cache",
)


def version_text() -> str:
    from benchmark import BENCHMARK_VERSION, package_version

    return f"wearsim {package_version() or 'unknown (not installed)'} (benchmark {BENCHMARK_VERSION})"


class _Version(argparse.Action):
    """`--version`, computed only when asked for."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_text())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wearsim",
        description="Context-tracking benchmark and simulated glasses for AI wearable assistants.",
        epilog="Example: wearsim validate --json   (wearsim models lists the model ids and which API keys are set)",
    )
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    parser.add_argument(
        "--debug", action="store_true", help="show the Python traceback of a failure instead of the one-line message"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def one_line(exc: BaseException) -> str:
    """An exception as one line: its message's first line, the count of the rest."""
    text = str(exc).strip() or type(exc).__name__
    lines = [line for line in text.splitlines() if line.strip()]
    more = f" (and {len(lines) - 1} more lines; --debug shows all)" if len(lines) > 1 else ""
    return lines[0] + more


def load_dotenv(path: Path = Path(".env"), environ=os.environ) -> list[str]:
    """Variables from a `.env` file (KEY=VALUE lines, # comments, optional
    quotes) that the environment does not already set; returns their names.
    Values are never printed."""
    if not path.is_file():
        return []
    added = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.removeprefix("export ").split("=", 1)
        key, value = key.strip(), value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if key.isidentifier() and key not in environ:
            environ[key] = value
            added.append(key)
    return added


def main(argv: list[str] | None = None) -> int:
    load_dotenv()
    # before Whisper's engine starts: idle OpenMP threads sleep rather than spin on a busy machine
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    if settle := getattr(args, "settle", None):  # a command that also reads its flags from a file (bench --config)
        args = settle(parser, argv, args)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug:
            raise
        kind = "" if isinstance(exc, (RuntimeError, ValueError, OSError)) else f"{type(exc).__name__}: "
        print(
            f"wearsim {args.command}: {kind}{one_line(exc)} (wearsim --debug {args.command} ... shows the traceback)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
