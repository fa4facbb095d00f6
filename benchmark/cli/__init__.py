"""The `wearsim` command. Each subcommand lives in its own module here with
`register(subparsers)`; modules import only argparse at the top and do their
heavy imports inside the function that runs the command."""

from __future__ import annotations

import argparse
import importlib
import sys

# subcommand modules, in the order `wearsim --help` lists them
COMMAND_MODULES = (
    "benchmark.cli.validate",
    "benchmark.cli.card",
    "benchmark.cli.bench",
    "benchmark.cli.report",
    "benchmark.cli.view",
    "benchmark.cli.rescore",
    "benchmark.cli.compare",
    "benchmark.cli.proxy_report",
    "benchmark.cli.eval",
    "benchmark.cli.perceive",
    "benchmark.cli.media",
    "benchmark.cli.serve",
    "benchmark.cli.simulate",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wearsim",
        description="Context-tracking benchmark and simulated glasses for AI wearable assistants.",
        epilog="Example: wearsim validate --json",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
