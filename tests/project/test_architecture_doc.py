"""docs/architecture.md and docs/modules.md stay true: every path they name exists, every module of the
packages has its line, the map's two floor tables are the ones tests/project/test_imports.py enforces,
and every import the map's "What imports what" relies on is in the code."""

from __future__ import annotations

import re

from tests.paths import PACKAGES, ROOT
from tests.project.test_imports import BENCHMARK_FLOORS, LAYERS, import_graph

DOC = ROOT / "docs" / "architecture.md"
MODULES = ROOT / "docs" / "modules.md"
# a code span that names a file or folder of the project: a known top folder, then a path
PATH = re.compile(
    r"`((?:core|candidates|media_effects|perception|streaming|simulator|benchmark|tests|docs|scripts|"
    r"benchmarks|media)/[\w./-]*)`"
)
ROW = re.compile(r"^\|(.+)\|\s*$")


def named_paths(text: str) -> list[str]:
    return [match.group(1) for match in PATH.finditer(text)]


def table(text: str, heading: str) -> list[list[str]]:
    """The cells of the first table under `heading` (header and rule rows left out)."""
    lines = text.split(f"\n{heading}\n", 1)[1].splitlines()
    rows, started = [], False
    for line in lines:
        match = ROW.match(line)
        if not match:
            if started:
                break
            continue
        started = True
        rows.append([cell.strip() for cell in match.group(1).split("|")])
    return rows[2:]


def spans(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def claimed_imports(text: str) -> list[tuple[str, str]]:
    return [(spans(row[0])[0], spans(row[1])[0]) for row in table(text, "## What imports what")]


def missing_imports(claims: list[tuple[str, str]], graph: dict[str, set[str]]) -> list[str]:
    return [f"{source} -> {target}" for source, target in claims if target not in graph.get(source, set())]


def test_every_path_the_map_names_exists():
    named = named_paths(DOC.read_text(encoding="utf-8")) + named_paths(MODULES.read_text(encoding="utf-8"))
    assert len(named) > 150  # the module list is there
    missing = sorted({path for path in named if not (ROOT / path).exists()})
    assert not missing, "docs/architecture.md or docs/modules.md names paths that do not exist: " + ", ".join(missing)


def test_every_module_has_its_line_in_the_module_list():
    listed = set(named_paths(MODULES.read_text(encoding="utf-8")))
    modules = [
        path.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if path.name != "__init__.py" and "code-validators" not in path.parts
    ]
    absent = sorted(module for module in modules if module not in listed)
    assert not absent, "modules missing from docs/modules.md: " + ", ".join(absent)


def test_the_maps_floors_are_the_ones_the_import_test_enforces():
    text = DOC.read_text(encoding="utf-8")
    floors = [tuple(spans(row[1])) for row in sorted(table(text, "## Floors"), key=lambda row: int(row[0]))]
    assert floors == [tuple(packages) for packages in LAYERS]
    rooms = [tuple(spans(row[1])) for row in table(text, "### The rooms of `benchmark/`")]
    assert rooms == [tuple(floor) for floor in BENCHMARK_FLOORS]


def test_every_import_the_map_relies_on_is_in_the_code():
    claims = claimed_imports(DOC.read_text(encoding="utf-8"))
    assert len(claims) >= 30
    assert missing_imports(claims, import_graph()) == []


def test_a_removed_import_is_found():
    claims = claimed_imports(DOC.read_text(encoding="utf-8"))
    graph = import_graph()
    source, target = claims[1]  # the realtime opener reading the provider table
    graph[source].discard(target)
    assert missing_imports(claims, graph) == [f"{source} -> {target}"]


def test_the_path_reader_sees_a_made_up_path():
    assert named_paths("see `benchmark/judges/base.py` and `core/` but not `base.py`") == [
        "benchmark/judges/base.py",
        "core/",
    ]
