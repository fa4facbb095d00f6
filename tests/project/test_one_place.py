"""Each fact in one place: no code outside the provider table and its adapters spells a provider's name,
and none outside the describer registry and its describers spells the default describer (the judge
table's scan is tests/benchmark/judges/test_judge_table.py).

A provider's name as a whole string (`"gemini-live"`), or as the start of a model id
(`"openai:gpt-4o-mini"`), found in a shipped module that is neither `candidates/providers.py` nor a
module its entries name as an opener or a session class, is a branch or a default the table should
give. Prose (a help text that names an id in passing) does not start with the name and is not found.
"""

from __future__ import annotations

import ast
from pathlib import Path

from candidates.providers import PROVIDERS
from perception.describer_spec import DEFAULT_DESCRIBER, DESCRIBERS
from tests.paths import PACKAGES, ROOT

TABLE = "candidates/providers.py"


def _module_file(target: object) -> str | None:
    if not isinstance(target, str):
        return None
    return target.partition(":")[0].replace(".", "/") + ".py"


def adapter_files() -> set[str]:
    """The provider table and every module its entries name (openers, realtime session classes)."""
    named = {_module_file(t) for p in PROVIDERS.values() for t in (p.opener, p.session)}
    return {TABLE} | {name for name in named if name}


def strings_in(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every string in the module's code, docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def spelled(names: set[str], text: str) -> bool:
    return text in names or any(text.startswith(f"{name}:") for name in names)


def describer_files() -> set[str]:
    """The describer registry and every module its entries name as a maker."""
    return {"perception/describer_spec.py"} | {_module_file(d.maker) for d in DESCRIBERS.values() if d.maker}


def spelled_outside(root: Path, allowed: set[str], names: set[str] | None = None) -> list[str]:
    """Each string in the shipped code outside `allowed` that is one of `names` (default: the providers')
    or starts a model id with one."""
    names = set(PROVIDERS) if names is None else names
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            where = path.relative_to(root).as_posix()
            if where in allowed or "-" in where:  # the code validators are scripts of their own
                continue
            found += [f"{where}:{line}: {text!r}" for line, text in strings_in(path) if spelled(names, text)]
    return found


def test_no_code_outside_the_provider_table_spells_a_provider_name():
    assert spelled_outside(ROOT, adapter_files()) == []


def test_no_code_outside_the_describer_registry_spells_the_default_describer():
    assert spelled_outside(ROOT, describer_files(), {DEFAULT_DESCRIBER}) == []


def test_a_provider_name_outside_the_table_is_found(tmp_path):
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "branchy.py").write_text(
        '"""Mentions gemini-live in a docstring, which is prose."""\n'
        'def pick(p):\n    return p == "gemini-live" or p.startswith("openai:")\n'
    )
    assert spelled_outside(tmp_path, set()) == [
        "core/branchy.py:3: 'gemini-live'",
        "core/branchy.py:3: 'openai:'",
    ]
