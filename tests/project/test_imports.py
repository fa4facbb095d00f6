"""The project's import graph, read with `ast`: no import cycle anywhere, and
the packages import one another only as docs/architecture.md allows.

Every import counts, also one inside a function: a lazy import still ties
the two modules together. `from package import name` is an edge to the
submodule `package.name` when there is one, else to the package itself."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.paths import PACKAGES, ROOT


def project_modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if "-" in "".join(parts):  # standalone scripts (the vision evaluators' code validators)
                continue
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            modules[name] = path
    return modules


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # `import a.b.c` of a name inside a.b
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_project_has_no_import_cycle():
    assert cycles(import_graph()) == []


def test_a_cycle_is_found_when_one_is_added():
    graph = import_graph()
    graph["candidates.realtime_base"].add("candidates.factory")
    assert any("candidates.factory" in c and "candidates.realtime_base" in c for c in cycles(graph))


# the layers, from the ground up (docs/architecture.md): a package imports its own modules and those of
# the layers below it, never one beside it or above it
LAYERS = (("core",), ("candidates", "media_effects"), ("perception",), ("streaming",), ("simulator",), ("benchmark",))
FLOOR = {package: n for n, packages in enumerate(LAYERS) for package in packages}
# inside the benchmark, only what drives the glasses talks to the server and the simulator: the protocol,
# judges, scoring and reports stay free of the stream
GLASSES_DRIVERS = (
    "benchmark.cli",
    "benchmark.conversations.stream",
    "benchmark.conversations.watch",
    "benchmark.probe",
)


def _allowed(source: str, target: str) -> bool:
    top, other = source.split(".")[0], target.split(".")[0]
    if top == other:
        return True
    if FLOOR[other] >= FLOOR[top]:
        return False
    return not (top == "benchmark" and other in ("streaming", "simulator") and not source.startswith(GLASSES_DRIVERS))


def test_packages_import_only_what_the_architecture_allows():
    graph = import_graph()
    wrong = sorted(
        f"{source} -> {target}"
        for source, targets in graph.items()
        for target in targets
        if not _allowed(source, target)
    )
    assert wrong == []


def test_an_import_up_a_layer_is_refused():
    assert not _allowed("core.records", "candidates.usage")
    assert not _allowed("candidates.local", "media_effects.audio")  # beside, not below
    assert not _allowed("benchmark.scoring.summary", "streaming.wire")
    assert _allowed("benchmark.conversations.stream", "streaming.wire")
    assert _allowed("perception.speech", "media_effects.audio")


# the rooms inside benchmark/ stand in floors too (docs/architecture.md): a room imports its own modules and
# those of the floors below, never one beside it or above it; a loose module is a room of its own
BENCHMARK_FLOORS = (
    ("faults", "shards", "kept_media", "stats", "cost"),
    ("judges", "evaluators"),
    ("scoring",),
    ("report", "conversations", "bank"),
    ("labels", "run"),
    ("comparison", "merge", "rescore", "probe"),
    ("proxy",),
    ("cli",),
    ("__main__",),
)
ROOM_FLOOR = {room: n for n, rooms in enumerate(BENCHMARK_FLOORS) for room in rooms}
MAX_LOOSE_MODULES = 8


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "benchmark" and len(parts) > 1 else None


def _room_allowed(source: str, target: str) -> bool:
    mine, other = _room(source), _room(target)
    return mine is None or other is None or mine == other or ROOM_FLOOR[other] < ROOM_FLOOR[mine]


def test_every_room_of_the_benchmark_has_a_floor():
    rooms = {
        path.stem for path in (ROOT / "benchmark").iterdir() if path.suffix == ".py" or (path / "__init__.py").exists()
    }
    assert rooms - {"__init__"} == set(ROOM_FLOOR)


def test_the_benchmarks_rooms_import_only_downwards():
    graph = import_graph()
    wrong = sorted(f"{s} -> {t}" for s, targets in graph.items() for t in targets if not _room_allowed(s, t))
    assert wrong == []


def test_an_import_up_a_floor_of_the_benchmark_is_refused():
    assert not _room_allowed("benchmark.report.viewer_trials", "benchmark.labels.items")
    assert not _room_allowed("benchmark.judges.learn", "benchmark.scoring.stats")
    assert not _room_allowed("benchmark.report.findings", "benchmark.conversations.protocol")  # beside
    assert _room_allowed("benchmark.labels.items", "benchmark.report.viewer_trials")


def test_the_benchmark_keeps_few_loose_modules():
    loose = sorted(path.name for path in (ROOT / "benchmark").glob("*.py"))
    assert len(loose) <= MAX_LOOSE_MODULES, loose


MAX_LINES = 500
# every Python file of the project, shipped or not: the packages, the tests, the speed scripts and the scripts
LINE_CAPPED = (*PACKAGES, "tests", "benchmarks", "scripts")


def long_files(root: Path, folders: tuple[str, ...]) -> list[str]:
    """`path: N lines` for each Python file under `folders` of `root` over `MAX_LINES`."""
    found = []
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            count = len(path.read_text(encoding="utf-8").splitlines())
            if count > MAX_LINES:
                found.append(f"{path.relative_to(root)}: {count} lines")
    return found


def test_no_file_is_over_500_lines():
    assert not long_files(ROOT, LINE_CAPPED), "split these: " + ", ".join(long_files(ROOT, LINE_CAPPED))


def test_a_long_file_is_found(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "short.py").write_text("x = 1\n" * MAX_LINES)
    (tmp_path / "pkg" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    assert long_files(tmp_path, ("pkg",)) == [f"pkg/long.py: {MAX_LINES + 1} lines"]
