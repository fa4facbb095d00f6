"""Issue 50: every realtime model id an example names (`wearsim COMMAND --help`, the README, docs/) is one
`wearsim models` lists as current, so a newcomer who copies an example runs a model that exists."""

from __future__ import annotations

import argparse
import re

from tests.paths import ROOT

# a realtime id: provider, then a model name (a placeholder such as MODEL or M is upper case and not an id)
REALTIME_ID = re.compile(r"\b(openai-realtime|gemini-live):([a-z0-9][A-Za-z0-9._-]*[A-Za-z0-9])")
# no document is exempt: docs/performance.md's commands ran against the local conformance server
# (tests/fake_realtime.py, which takes any id), but a reader copies them all the same (issue 60, item 9)
RECORDS: set[str] = set()


def current_ids(capsys) -> set[str]:
    from benchmark.cli import main

    assert main(["models"]) == 0
    text = capsys.readouterr().out
    section = text[text.index("realtime models the providers list as current") : text.index("shut down")]
    return {m.group(0) for m in REALTIME_ID.finditer(section)}


def help_texts() -> dict[str, str]:
    from benchmark.cli import build_parser

    texts = {}

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        texts[name] = parser.format_help()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, child in action.choices.items():
                    walk(child, f"{name} {sub}")

    walk(build_parser(), "wearsim")
    return texts


def documents() -> dict[str, str]:
    # the benchmark scripts too: their docstrings give the commands they run
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "benchmarks").glob("*.py"))]
    return {
        str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
        for p in paths
        if str(p.relative_to(ROOT)) not in RECORDS
    }


def test_wearsim_models_lists_current_realtime_ids(capsys):
    ids = current_ids(capsys)
    assert "openai-realtime:gpt-realtime-2" in ids and "gemini-live:gemini-3.8-live" in ids
    assert "openai-realtime:gpt-realtime" not in ids


def test_every_example_names_a_current_realtime_id(capsys):
    current = current_ids(capsys)
    texts = {**{f"`{k} --help`": v for k, v in help_texts().items()}, **documents()}
    assert "`wearsim bench --help`" in texts and "`wearsim media synth --help`" in texts and "README.md" in texts
    named = {(where, m.group(0)) for where, text in texts.items() for m in REALTIME_ID.finditer(text)}
    assert len({where for where, _ in named}) >= 6  # the help of bench, simulate, probe, serve; README; docs
    stale = sorted(f"{where}: {model}" for where, model in named if model not in current)
    assert not stale, "ids `wearsim models` does not list as current:\n" + "\n".join(stale)
