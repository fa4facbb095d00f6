"""Records are built by name: every dataclass in the packages is keyword-only, and no call in the
packages passes more than four positional arguments to one (read with `ast`, so a call in a branch
no test reaches is checked too)."""

from __future__ import annotations

import ast

import pytest

from tests.paths import PACKAGES, ROOT

MAX_POSITIONAL = 4


def _sources():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _dataclass_decorator(node: ast.ClassDef) -> ast.expr | None:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
        if name == "dataclass":
            return decorator
    return None


def _dataclasses() -> dict[str, str]:
    """Each dataclass's name -> where it is defined."""
    found = {}
    for path, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and _dataclass_decorator(node) is not None:
                found[node.name] = f"{path.relative_to(ROOT)}:{node.lineno}"
    return found


@pytest.mark.slow
def test_every_dataclass_in_the_packages_is_keyword_only():
    loose = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            decorator = isinstance(node, ast.ClassDef) and _dataclass_decorator(node)
            if not decorator:
                continue
            keywords = decorator.keywords if isinstance(decorator, ast.Call) else []
            if not any(k.arg == "kw_only" and getattr(k.value, "value", None) is True for k in keywords):
                loose.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert not loose, "dataclasses without kw_only=True:\n" + "\n".join(loose)


def _wide_calls(tree: ast.AST, names) -> list[tuple[int, str, int]]:
    """(line, name, positional count) of each call to one of `names` with more than four positional
    arguments, or with a `*args` (whose count the reader cannot see)."""
    wide = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        starred = any(isinstance(a, ast.Starred) for a in node.args)
        if name in names and (len(node.args) > MAX_POSITIONAL or starred):
            wide.append((node.lineno, name, len(node.args)))
    return wide


@pytest.mark.slow
def test_no_call_passes_more_than_four_positional_arguments_to_a_dataclass():
    names = _dataclasses()
    assert len(names) > 50  # the scan found the records, events and settings
    wide = [
        f"{path.relative_to(ROOT)}:{line} {name} with {count} positional"
        for path, tree in _sources()
        for line, name, count in _wide_calls(tree, names)
    ]
    assert not wide, "build these by field name:\n" + "\n".join(wide)


@pytest.mark.slow
def test_the_scan_flags_wide_and_starred_calls_only():
    tree = ast.parse(
        "Reply('a', 'm', None, 1.0, 2.0)\nrecords.Reply(*parts)\nReply('a', 'm')\n"
        "Reply(text='a', model='m', usage=None, latency_s=1.0, first_token_s=2.0)\nprint(1, 2, 3, 4, 5)"
    )
    assert _wide_calls(tree, _dataclasses()) == [(1, "Reply", 5), (2, "Reply", 1)]
