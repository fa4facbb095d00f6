"""The quick tier (`pytest -m quick`): how long it takes on this machine and how much of the packages it runs.

    .venv/bin/python benchmarks/quick_tier.py [--runs N]

Runs the quick tier N times (default 3) as a developer would (`pytest -m quick`, two xdist workers),
timing each run from the command's start to its exit, then once more under coverage.py
(`pytest-cov`, line coverage of the seven packages, in-process only: a `wearsim` started as a
subprocess is not counted, so the figure is a floor). Writes benchmarks/results/quick_tier.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULT = ROOT / "benchmarks" / "results" / "quick_tier.json"
PACKAGES = ("core", "candidates", "media_effects", "perception", "streaming", "simulator", "benchmark")


def run_quick(*extra: str) -> tuple[float, str]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-m", "quick", "-p", "no:cacheprovider", *extra],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    wall = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"the quick tier failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return wall, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="timed runs (default 3)")
    args = parser.parse_args()
    walls = []
    for n in range(1, args.runs + 1):
        wall, out = run_quick()
        walls.append(round(wall, 1))
        print(f"run {n}: {wall:.1f} s ({out.strip().splitlines()[-1]})", file=sys.stderr, flush=True)
    cov = [f"--cov={package}" for package in PACKAGES]
    _, out = run_quick(*cov, "--cov-report=term")
    total = re.search(r"^TOTAL\s+(\d+)\s+(\d+)\s+(\d+)%", out, re.M)
    if total is None:
        sys.exit("no coverage total in pytest-cov's report")
    statements, missed = int(total.group(1)), int(total.group(2))
    counted = re.search(r"(\d+) passed", out)
    result = {
        "command": "benchmarks/quick_tier.py" + (f" --runs {args.runs}" if args.runs != 3 else ""),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "tests": int(counted.group(1)) if counted else None,
        "wall_s": walls,
        "median_wall_s": statistics.median(walls),
        "statements": statements,
        "covered": statements - missed,
        "line_coverage": round((statements - missed) / statements, 3),
    }
    RESULT.parent.mkdir(exist_ok=True)
    RESULT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
