"""The stream path of the benchmark while another process keeps one core busy.

    .venv/bin/python benchmarks/stream_under_load.py [--limit 12] [--concurrency 4] [--model local]

Starts a bounded busy process (a pure-Python spin loop pinned to one core,
killed when the run ends and never living past `--busy-max-s`), then runs

    wearsim bench --via stream --conditions baseline --limit N --judge-family lexical

in a subprocess (the streaming server in-process, the glasses unpaced as bench
plays them by default) and reports the errored cells, which must be 0, with
their error texts, the wall time, the CPU the spinner really burnt, and the
per-turn latencies from the run's transcripts. Writes
benchmarks/results/stream_under_load.json; exits 1 when any cell errored.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SPIN = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"


def start_spinner(seconds: float, core: int | None) -> subprocess.Popen:
    """A busy process that ends by itself after `seconds` (the caller kills it sooner)."""
    process = subprocess.Popen([sys.executable, "-c", SPIN.format(seconds=seconds)], stdin=subprocess.DEVNULL)
    if core is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(process.pid, {core})
    return process


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a live process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)), 3) if values else None


def summarise(run_dir: Path) -> dict:
    records = [json.loads(line) for line in (run_dir / "transcripts.jsonl").read_text().splitlines() if line]
    errors = [
        {"scenario_id": r["scenario_id"], "error": r["error"], "wall_s": r.get("wall_s")}
        for r in records
        if r.get("error")
    ]
    latencies: dict[str, list[float]] = {}
    for record in records:
        for turn in record.get("turns") or []:
            for name, value in (turn.get("metrics") or {}).items():
                if isinstance(value, (int, float)):
                    latencies.setdefault(name, []).append(float(value))
    return {
        "cells": len(records),
        "errored_cells": len(errors),
        "errors": errors,
        "turns": sum(len(r.get("turns") or []) for r in records),
        "cell_wall_s": {
            "p50": pct([r["wall_s"] for r in records if r.get("wall_s")], 50),
            "max": round(max((r["wall_s"] for r in records if r.get("wall_s")), default=0), 1),
        },
        "latency_s": {
            name: {"p50": pct(values, 50), "p95": pct(values, 95)} for name, values in sorted(latencies.items())
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=12, help="scenarios (cells) to run")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--model", default="local")
    parser.add_argument("--core", type=int, default=0, help="the core the spinner is pinned to")
    parser.add_argument("--busy-max-s", type=float, default=1500.0, help="the spinner never outlives this")
    parser.add_argument("--no-load", action="store_true", help="run without the spinner (the control)")
    parser.add_argument("--output", default=str(ROOT / "benchmarks/results/stream_under_load.json"))
    args = parser.parse_args()

    run_dir = Path(tempfile.mkdtemp(prefix="wearsim-load-")) / "run"
    command = [
        sys.executable,
        "-m",
        "benchmark",
        "bench",
        "--via",
        "stream",
        "--conditions",
        "baseline",
        "--limit",
        str(args.limit),
        "--concurrency",
        str(args.concurrency),
        "--model",
        args.model,
        "--judge-family",
        "lexical",
        "--output-dir",
        str(run_dir),
    ]
    spinner = None if args.no_load else start_spinner(args.busy_max_s, args.core)
    started = time.monotonic()
    try:
        done = subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, timeout=args.busy_max_s if spinner else None
        )
        wall = time.monotonic() - started
        spin_cpu = cpu_seconds(spinner.pid) if spinner and spinner.poll() is None else None
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()
    if not (run_dir / "transcripts.jsonl").exists():
        print(done.stderr[-3000:], file=sys.stderr)
        return 2
    result = {
        "command": "python benchmarks/stream_under_load.py " + shlex.join(sys.argv[1:]),
        "bench_command": "wearsim " + shlex.join(command[3:-2]),
        "load": None
        if spinner is None
        else {
            "spinner_core": args.core,
            "spinner_cpu_s": round(spin_cpu, 1) if spin_cpu is not None else None,
            "spinner_busy_share": round(spin_cpu / wall, 2) if spin_cpu is not None else None,
        },
        "cores": os.cpu_count(),
        "bench_exit_status": done.returncode,
        "wall_s": round(wall, 1),
        **summarise(run_dir),
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0 if result["errored_cells"] == 0 and done.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
