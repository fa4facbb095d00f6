"""Where the test step's CPU goes when it runs as CI runs it (issue 33): the whole suite under its own
xdist settings, with each test's wall time and the CPU its worker and the processes it waited for used
while it ran (benchmarks/suite_cpu_plugin.py), and the run's total CPU.

    .venv/bin/python benchmarks/suite_cpu.py [--workers N]

The total CPU over the cores is the floor for the step's wall time; the step's wall time over that floor
says how much of the machine the run left idle (tests waiting on the clock while holding a worker).
A test's CPU can include a process it started earlier and reaped only then. Writes
benchmarks/results/suite_cpu.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from suite_time import ROOT, cpu_of_children

RESULT = ROOT / "benchmarks" / "results" / "suite_cpu.json"
TOP = 25


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, help="xdist workers (default: pyproject's addopts)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "tests.jsonl"
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "suite_cpu_plugin",
            "-p",
            "no:cacheprovider",
            *(["-n", str(args.workers)] if args.workers else []),
        ]
        env = {
            **os.environ,
            "CI": "true",
            "SUITE_CPU_OUT": str(out),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "benchmarks"), os.environ.get("PYTHONPATH")])),
        }
        cpu, started = cpu_of_children(), time.monotonic()
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        wall, cpu = time.monotonic() - started, cpu_of_children() - cpu
        tests = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    by_file: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for test in tests:
        totals = by_file[test["test"].split("::")[0]]
        totals[0], totals[1] = totals[0] + test["cpu_s"], totals[1] + test["wall_s"]
    cores = os.cpu_count() or 1
    summary = {
        "command": "benchmarks/suite_cpu.py" + (f" --workers {args.workers}" if args.workers else ""),
        "machine": {"cpus": cores, "python": platform.python_version()},
        "result": (done.stdout.strip().splitlines() or [""])[-1],
        "passed": done.returncode == 0,
        "tests": len(tests),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "cpu_floor_s": round(cpu / cores, 1),
        "busy": round(cpu / (cores * wall), 2),
        "by_file": [
            {"file": f, "cpu_s": round(c, 1), "wall_s": round(w, 1)}
            for f, (c, w) in sorted(by_file.items(), key=lambda item: -item[1][0])[:TOP]
        ],
        "by_test": sorted(tests, key=lambda t: -t["cpu_s"])[:TOP],
    }
    RESULT.parent.mkdir(exist_ok=True)
    RESULT.write_text(json.dumps(summary, indent=2) + "\n")
    print(
        f"{summary['result']}: {summary['wall_s']} s wall, {summary['cpu_s']} s CPU "
        f"(floor {summary['cpu_floor_s']} s on {cores} cores, busy {summary['busy']:.0%}); {RESULT}"
    )
    return 0 if done.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
