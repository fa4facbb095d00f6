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
import textwrap
from pathlib import Path

# the commands in the groups and order `wearsim --help` lists them; each lives in benchmark/cli/NAME.py
# (a dash in the name is an underscore in the module's)
COMMAND_GROUPS = (
    ("run a benchmark", ("bench", "rescore", "merge", "models", "probe", "cache")),
    ("inspect a run", ("report", "view", "compare", "proxy-report")),
    ("people's labels and the judge", ("annotate", "agreement", "labels", "judge-check")),
    ("scenarios and media", ("validate", "card", "media", "perceive", "eval")),
    ("glasses and the live demo", ("serve", "simulate")),
)
COMMAND_MODULES = tuple(f"benchmark.cli.{name.replace('-', '_')}" for _, names in COMMAND_GROUPS for name in names)


def wrapped(text: str) -> str:
    """A description as lines of at most 78 characters, for a command whose help keeps its epilog's lines as
    written (argparse's RawDescriptionHelpFormatter, which would leave the description one long line)."""
    return textwrap.fill(text, 78)


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
        usage="wearsim [-h] [--version] [--debug] COMMAND ...",
        epilog="Every command has --help: its options and examples.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    parser.add_argument(
        "--debug", action="store_true", help="show the Python traceback of a failure instead of the one-line message"
    )
    # the commands are listed in groups in the description, not by argparse (which lists them in one run)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", prog="wearsim", help=argparse.SUPPRESS)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    parser.description = command_list(subparsers)
    return parser


def command_list(subparsers) -> str:
    """The top-level help's description: the tagline, then every command with its one-line help, in groups."""
    helps = {action.dest: action.help or "" for action in subparsers._choices_actions}
    width = max(map(len, helps)) + 2
    lines = ["Context-tracking benchmark and simulated glasses for AI wearable assistants.", ""]
    for title, names in COMMAND_GROUPS:
        lines.append(f"{title}:")
        lines += [f"  {name:<{width}}{helps[name]}" for name in names]
    return "\n".join(lines)


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
