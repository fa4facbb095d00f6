"""docs/architecture.md stays true: every path it names exists, and every module of the packages has
its line in the map."""

from __future__ import annotations

import re

from tests.paths import PACKAGES, ROOT

DOC = ROOT / "docs" / "architecture.md"
# a code span that names a file or folder of the project: a known top folder, then a path
PATH = re.compile(
    r"`((?:core|candidates|media_effects|perception|streaming|simulator|benchmark|tests|docs|scripts|"
    r"benchmarks|media)/[\w./-]*)`"
)


def named_paths(text: str) -> list[str]:
    return [match.group(1) for match in PATH.finditer(text)]


def test_every_path_the_map_names_exists():
    named = named_paths(DOC.read_text(encoding="utf-8"))
    assert len(named) > 150  # the module list is there
    missing = sorted({path for path in named if not (ROOT / path).exists()})
    assert not missing, "docs/architecture.md names paths that do not exist: " + ", ".join(missing)


def test_every_module_has_its_line_in_the_map():
    listed = set(named_paths(DOC.read_text(encoding="utf-8")))
    modules = [
        path.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if path.name != "__init__.py" and "code-validators" not in path.parts
    ]
    absent = sorted(module for module in modules if module not in listed)
    assert not absent, "modules missing from docs/architecture.md's map: " + ", ".join(absent)


def test_the_path_reader_sees_a_made_up_path():
    assert named_paths("see `benchmark/judges/base.py` and `core/` but not `base.py`") == [
        "benchmark/judges/base.py",
        "core/",
    ]
