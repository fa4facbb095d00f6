"""Issue 60, item 6: the help a newcomer reads. `wearsim --help` fits on a screen (40 lines) and lists
every command in groups with a line each; every example line in every `--help` (subcommands of
subcommands included) parses with wearsim's own parser, with no run of spaces where a line continuation
was lost; `bench --help` is short; the words it uses mean one thing."""

from __future__ import annotations

import argparse
import re
import shlex

import pytest

from benchmark.cli import COMMAND_GROUPS, build_parser

# a line that is an example: indented `wearsim ...`, or card's one-line `example: wearsim ...`
EXAMPLE = re.compile(r"^(?:\s+|examples?: )(wearsim .*)$")


def help_texts() -> dict[str, tuple[argparse.ArgumentParser, str]]:
    """Every parser's help, by its command line (`wearsim`, `wearsim bench`, `wearsim media synth`, ...)."""
    texts: dict[str, tuple[argparse.ArgumentParser, str]] = {}

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        texts[name] = (parser, parser.format_help())
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, child in action.choices.items():
                    walk(child, f"{name} {sub}")

    walk(build_parser(), "wearsim")
    return texts


def examples(text: str) -> list[str]:
    """The example commands of one help text, a line ending in a backslash joined with the next."""
    found, lines = [], text.splitlines()
    i = 0
    while i < len(lines):
        match = EXAMPLE.match(lines[i])
        i += 1
        if not match:
            continue
        command = match.group(1)
        while command.rstrip().endswith("\\") and i < len(lines):
            command = command.rstrip()[:-1].rstrip() + " " + lines[i].strip()
            i += 1
        found.append(command)
    return found


def without_comment(command: str) -> str:
    return re.split(r"\s+#\s", command, maxsplit=1)[0].rstrip()


def test_top_level_help_fits_in_40_lines_with_every_command_in_a_group(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    parser = build_parser()
    out = parser.format_help()
    lines = out.splitlines()
    assert len(lines) <= 40, len(lines)
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    commands = set(next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices)
    grouped = [name for _, names in COMMAND_GROUPS for name in names]
    assert sorted(grouped) == sorted(commands) and len(grouped) == len(set(grouped)) >= 21
    assert {"judge-check", "card", "validate", "eval", "bench", "serve"} <= commands
    for title, names in COMMAND_GROUPS:
        start = lines.index(f"{title}:")
        for offset, name in enumerate(names, 1):  # each command under its group, with a description
            row = lines[start + offset].split()
            assert row[0] == name and len(row) >= 3, lines[start + offset]


@pytest.mark.parametrize("command", ["card", "validate", "eval"])
def test_every_command_says_what_it_does(command):
    parser, _ = help_texts()[f"wearsim {command}"]
    assert parser.description and len(parser.description.split()) >= 10


def test_every_example_parses_with_its_own_parser(capsys):
    texts = help_texts()
    checked, bad = 0, []
    for where, (_, text) in texts.items():
        for example in examples(text):
            command = without_comment(example)
            argv = shlex.split(command)[1:]
            try:  # wearsim's parser hands the rest to the named command's own (merge's help shows bench --shard)
                build_parser().parse_args(argv)
            except SystemExit:
                bad.append(f"{where}: {example}: {capsys.readouterr().err.strip()}")
            if "  " in command:
                bad.append(f"{where}: {example} (a run of spaces: a lost line continuation?)")
            checked += 1
    assert not bad, "\n".join(bad)
    assert checked >= 60, checked
    assert any("--describer authored" in e for e in examples(texts["wearsim bench"][1]))


def test_a_lost_line_continuation_is_caught():
    text = "examples:\n  wearsim bench --model m --via stream       --limit 3\n"
    assert "  " in without_comment(examples(text)[0])
    text = "examples:\n  wearsim bench --model m \\\n      --limit 3   # three\n"
    assert without_comment(examples(text)[0]) == "wearsim bench --model m --limit 3"


def test_examples_sit_in_their_block_and_the_serve_help_ends_in_prose():
    for where, (_, text) in help_texts().items():
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if EXAMPLE.match(line) and not line.startswith("example: "):
                before = lines[i - 1]
                assert (
                    before.strip().startswith(("examples:", "wearsim"))
                    or before.rstrip().endswith("\\")
                    or (before.startswith("  wearsim") or before.startswith("      "))
                ), f"{where}: an example away from its block: {line}"
    serve = help_texts()["wearsim serve"][1].rstrip().splitlines()
    assert not EXAMPLE.match(serve[-1])


def test_bench_help_is_short_and_the_rest_is_in_docs():
    from tests.paths import ROOT

    out = help_texts()["wearsim bench"][1]
    assert len(out.splitlines()) <= 180
    assert out.startswith("usage: wearsim bench [OPTIONS]")
    assert "docs/usage.md" in out
    usage = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
    for detail in ("WEARSIM_DESCRIBER_BASE_URL", "130/143", "hash of each cell", "fonts-noto-color-emoji"):
        assert detail in usage, detail


def test_help_words_mean_one_thing():
    texts = {where: " ".join(text.split()) for where, (_, text) in help_texts().items()}
    assert "checks 4 and 5" not in texts["wearsim validate"]
    assert "identification" in texts["wearsim validate"]
    compare = texts["wearsim compare"]
    assert "recall_false_alarms.png" in compare and "for proactive runs" in compare
    serve = texts["wearsim serve"]
    assert "--host HOST the address to listen on" in serve and "--port PORT the port to listen on" in serve
    # the proactive question is a check-in in help; `probe` is the command that tries a realtime API
    assert "check-in" in serve and "check-in" in texts["wearsim bench"]
    assert not re.search(r"\bprobes\b", serve.replace("--probe-", ""))
