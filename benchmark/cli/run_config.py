"""`wearsim bench --config FILE.toml`: a run's flags read from a TOML file.

The file has flat keys named exactly as the flags in `wearsim bench --help`, without the leading `--`
(`max-tokens = 120`, `judge-family = "lexical"`, `synthetic-frames = true`); each value is the TOML type
the flag takes (a string, a whole number, a number, true/false for a flag that takes no value), and a flag
taking a comma list takes a string `"a,b"` or an array `["a", "b"]`. A path is read as on the command line
(relative to the working directory, not to the file). The values become the bench parser's
defaults and the command line is parsed again, so a flag given there wins over the file. Anything the file
gets wrong (no such file, not a regular file or over `MAX_CONFIG_BYTES`, invalid or too deeply nested TOML,
an unknown key, a wrong type or choice, a number out of its range in `RANGES`) is one line naming the file
and the key, and exit status 2, before anything else is checked. The same `RANGES` check the flags given
on the command line (`number_problem`, from `bench_checks.check_run_flags`): every float finite, every
count within its bounds.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import sys
from pathlib import Path

# keys the file cannot set: the file itself and --help
NOT_IN_FILE = ("config", "help")
MAX_CONFIG_BYTES = 1 << 20  # a config file is a few hundred bytes

# each number a run takes: (lowest, highest, whether the lowest itself is refused, what it is in words)
RANGES: dict[str, tuple[float, float, bool, str]] = {
    "trials": (1, 1000, False, "trials per cell"),
    "limit": (0, 100_000, False, "a count of scenarios"),
    "temperature": (0, 2, False, "a sampling temperature"),
    "max_tokens": (1, 100_000, False, "a reply length in tokens"),
    "speed": (0, 1000, True, "a pacing factor (1.0 is real time)"),
    "frame_size": (0, 8192, False, "a frame size in pixels (0: the default)"),
    "frame_quality": (0, 100, False, "a JPEG quality (0: the default)"),
    "impair_seed": (0, 2**32 - 1, False, "a seed"),
    "budget": (0, 1_000_000, False, "an amount of US dollars"),
    "concurrency": (1, 256, False, "a count of cells at once"),
    "max_error_rate": (0, 1, False, "a share from 0 to 1"),
}


def number_problem(dest: str, value) -> str | None:
    """Why `value` cannot be the number `dest` takes (None: it can): not finite, or out of `RANGES`."""
    import math

    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value} is not a finite number"
    if dest not in RANGES:
        return None if abs(value) <= 10**12 else f"{value} is out of range"
    low, high, open_low, words = RANGES[dest]
    if value < low or value > high or (open_low and value == low):
        below = f"more than {low:g}" if open_low else f"from {low:g}"
        return f"{value:g} is out of range: {words}, {below} to {high:g}"
    return None


class ConfigError(Exception):
    """The config file cannot be used; the message names the file and, for a value, its key."""


def options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """The parser's long flags by their name without `--` ("max-tokens"), as the file names them."""
    named = {}
    for action in parser._actions:  # argparse keeps no public list of a parser's actions
        for option in action.option_strings:
            if option.startswith("--") and option[2:] not in NOT_IN_FILE:
                named[option[2:]] = action
    return named


def read_config(path: str, parser: argparse.ArgumentParser) -> tuple[dict, str]:
    """({dest: value} for `parser.set_defaults`, the file's sha256). Raises ConfigError."""
    import tomllib

    from core.safe_files import UserFileRefused, read_user_file

    try:
        data = read_user_file(Path(path), MAX_CONFIG_BYTES, "config file")
    except UserFileRefused as exc:
        raise ConfigError(f"--config {exc}") from None
    except OSError as exc:
        raise ConfigError(f"--config {path}: cannot read it ({exc.strerror or exc})") from None
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"--config {path}: not valid TOML ({str(exc)[:200]})") from None
    except RecursionError:
        raise ConfigError(f"--config {path}: nested too deeply to be a config file (its keys are flat)") from None
    known = options(parser)
    values = {}
    for key, value in table.items():
        if key not in known:
            raise ConfigError(_unknown(path, key, value, known))
        action = known[key]
        values[action.dest] = _value(path, key, value, action)
    return values, hashlib.sha256(data).hexdigest()


def _unknown(path: str, key: str, value, known: dict) -> str:
    if key in NOT_IN_FILE:
        return f"--config {path}: {key} cannot be set in the file"
    close = difflib.get_close_matches(key.replace("_", "-"), known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    table = " is a table: the file takes flat keys only" if isinstance(value, dict) else ""
    return (
        f"--config {path}: unknown key {key!r}{table}{hint}; the keys are the flags of "
        "`wearsim bench --help` without the leading --"
    )


def _is_list_flag(action: argparse.Action) -> bool:
    """A flag whose value is a comma list (its metavar says so: NAME,... or MS,MS,...)."""
    return isinstance(action.metavar, str) and "," in action.metavar


def _expected(action: argparse.Action) -> str:
    """What a key's value must be, in words."""
    if action.nargs == 0:
        return "true or false"
    if action.type in (int, float):
        return "a whole number" if action.type is int else "a number"
    if action.choices is not None:
        return "one of " + ", ".join(f'"{c}"' for c in action.choices)
    if _is_list_flag(action):
        return f'a string or an array, e.g. "{action.metavar}"'
    return "a string"


def _value(path: str, key: str, value, action: argparse.Action):
    """`value` as the flag would have given it, or ConfigError naming the key."""
    if action.nargs == 0:  # a flag that takes no value: true sets it
        ok = isinstance(value, bool)
    elif isinstance(value, (bool, dict)):
        ok = False
    elif action.type is int:
        ok = isinstance(value, int)
    elif action.type is float:
        ok = isinstance(value, (int, float))
        value = float(value) if ok else value
    elif _is_list_flag(action) and isinstance(value, (list, int, float)):
        items = value if isinstance(value, list) else [value]
        ok = bool(items) and all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in items)
        value = ",".join(str(v) for v in items) if ok else value
    else:
        ok = isinstance(value, str) and (action.choices is None or value in action.choices)
    if not ok:
        raise ConfigError(f"--config {path}: {key} = {_show(value)}: expected {_expected(action)} (as --{key} takes)")
    if problem := number_problem(action.dest, value):
        raise ConfigError(f"--config {path}: {key} = {_show(value)}: {problem} (as --{key} takes)")
    return value


def _show(value) -> str:
    import json

    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def with_config(
    bench: argparse.ArgumentParser, top: argparse.ArgumentParser, argv: list[str], args: argparse.Namespace
) -> argparse.Namespace:
    """`args` again, parsed with `--config`'s values as the bench parser's defaults (the command line wins),
    and `config_file` ({"path", "sha256", "overridden_by_flags": the file's keys the command line changed})
    set, said in one line on stderr; `args` as it is without `--config`. Exits 2 on a bad file."""
    if not getattr(args, "config", None):
        return args
    try:
        values, sha256 = read_config(args.config, bench)
    except ConfigError as exc:
        bench.exit(2, f"error: {exc}\n")
    bench.set_defaults(**values)
    again = top.parse_args(argv)
    overridden = sorted(dest for dest, value in values.items() if getattr(again, dest, value) != value)
    again.config_file = {
        "path": str(Path(args.config).resolve()),
        "sha256": sha256,
        "overridden_by_flags": overridden,
    }
    said = f"; the command line overrode {', '.join(overridden)}" if overridden else ""
    print(f"read {len(values)} setting(s) from --config {args.config}{said}", file=sys.stderr)
    return again
