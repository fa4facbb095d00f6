"""Where the test step's time goes: each test file run on its own, in one process (`-n 0`), with its wall
time and the CPU it and everything it started used (issue 33: the test step is to take at most 4 minutes
on 2 cores).

    .venv/bin/python benchmarks/suite_time.py [--files tests/core/test_bank.py,tests/streaming/test_stream.py]

A file's CPU is the user + system time of the pytest process and of every process it waited for (servers,
`wearsim` subprocesses, Chromium), read from `getrusage(RUSAGE_CHILDREN)` before and after. The ratio of
CPU to wall says what kind of time it is: near 0, the file waits on the clock (real-time streams, timeouts);
near 1 or above, it computes. Two workers can overlap waiting with computing; they cannot shrink computing
below the total CPU over 2 cores. Writes benchmarks/results/suite_time.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULT = ROOT / "benchmarks" / "results" / "suite_time.json"


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_file(path: Path) -> dict:
    before, started = cpu_of_children(), time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    wall, cpu = time.monotonic() - started, cpu_of_children() - before
    last = (done.stdout.strip().splitlines() or [""])[-1]
    return {
        "file": str(path.relative_to(ROOT)),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "cpu_per_wall": round(cpu / wall, 2) if wall else None,
        "passed": done.returncode == 0,
        "result": last,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", help="comma-separated test files (default: every test_*.py under tests/)")
    args = parser.parse_args()
    files = [ROOT / f for f in args.files.split(",")] if args.files else sorted((ROOT / "tests").rglob("test_*.py"))
    rows = []
    for n, path in enumerate(files, start=1):
        row = time_file(path)
        rows.append(row)
        print(
            f"[{n}/{len(files)}] {row['file']}: {row['wall_s']} s wall, {row['cpu_s']} s CPU"
            + ("" if row["passed"] else f"  FAILED: {row['result']}"),
            file=sys.stderr,
            flush=True,
        )
    wall, cpu = sum(r["wall_s"] for r in rows), sum(r["cpu_s"] for r in rows)
    summary = {
        "command": "benchmarks/suite_time.py" + (f" --files {args.files}" if args.files else ""),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "files": len(rows),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "two_core_floor_s": round(max(cpu / 2, wall / 2), 1),
        "by_cpu": sorted(rows, key=lambda r: -r["cpu_s"]),
    }
    RESULT.parent.mkdir(parents=True, exist_ok=True)
    RESULT.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(
        f"{len(rows)} files: {wall:.0f} s wall one at a time, {cpu:.0f} s CPU; on 2 workers the step cannot "
        f"take less than about {summary['two_core_floor_s']:.0f} s"
    )
    for row in summary["by_cpu"][:15]:
        print(f"  {row['cpu_s']:7.1f} s CPU {row['wall_s']:7.1f} s wall  {row['file']}")
    return 0 if all(r["passed"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
