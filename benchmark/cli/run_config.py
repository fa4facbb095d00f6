"""`wearsim bench --config FILE.toml`: a run's flags read from a TOML file.

The file has flat keys named exactly as the flags in `wearsim bench --help`, without the leading `--`
(`max-tokens = 120`, `judge-family = "lexical"`, `synthetic-frames = true`); each value is the TOML type
the flag takes (a string, a whole number, a number, true/false for a flag that takes no value), and a flag
taking a comma list takes a string `"a,b"` or an array `["a", "b"]`. A path is read as on the command line
(relative to the working directory, not to the file). The values become the bench parser's
defaults and the command line is parsed again, so a flag given there wins over the file. Anything the file
gets wrong (no such file, invalid TOML, an unknown key, a wrong type or choice) is one line naming the file
and the key, and exit status 2, before anything else is checked.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
from pathlib import Path

# keys the file cannot set: the file itself and --help
NOT_IN_FILE = ("config", "help")


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

    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"--config {path}: no such file") from None
    except OSError as exc:
        raise ConfigError(f"--config {path}: cannot read it ({exc.strerror or exc})") from None
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"--config {path}: not valid TOML ({exc})") from None
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
    and `config_file` ({"path", "sha256"}) set; `args` as it is without `--config`. Exits 2 on a bad file."""
    if not getattr(args, "config", None):
        return args
    try:
        values, sha256 = read_config(args.config, bench)
    except ConfigError as exc:
        bench.exit(2, f"error: {exc}\n")
    bench.set_defaults(**values)
    again = top.parse_args(argv)
    again.config_file = {"path": str(Path(args.config).resolve()), "sha256": sha256}
    return again
