"""Does a stream run at high concurrency against a realtime API get a session
for every cell? (issue 36: the in-process server's cap once was a fixed 16).

    .venv/bin/python benchmarks/realtime_room.py [--concurrency 32]

Starts the OpenAI Realtime conformance server (`tests/fake_realtime.py`) and runs

    wearsim bench --via stream --model openai-realtime:gpt-realtime-2 --base-url URL
        --concurrency N --limit N --speed 1 --judge-family lexical --conditions baseline --no-frames

so N cells play at real-time pace at once, then counts the sessions refused
(`server_busy` in a record's error or the server's log), the cells that
errored, and the cells' wall time. Writes benchmarks/results/realtime_room.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fake_realtime import FakeOpenAIRealtime  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--output", default="benchmarks/results/realtime_room.json")
    args = parser.parse_args()
    n = args.concurrency
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIRealtime() as server:
        run = Path(tmp) / "run"
        started = time.monotonic()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmark",
                "bench",
                "--via",
                "stream",
                "--model",
                "openai-realtime:gpt-realtime-2",
                "--base-url",
                server.base_url,
                "--concurrency",
                str(n),
                "--limit",
                str(n),
                "--speed",
                "1",
                "--judge-family",
                "lexical",
                "--conditions",
                "baseline",
                "--no-frames",
                "--output-dir",
                str(run),
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "OPENAI_API_KEY": "sk-conformance"},
        )
        wall = time.monotonic() - started
        path = run / "transcripts.jsonl"
        records = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
        log_path = run / "logs" / "server.log"
        log = log_path.read_text() if log_path.exists() else ""
    errors = [r["error"] for r in records if r.get("error")]
    out = {
        "command": f"python benchmarks/realtime_room.py --concurrency {n}",
        "cores": os.cpu_count(),
        "exit_status": done.returncode,
        "cells": len(records),
        "errored": len(errors),
        "refused": sum("server_busy" in e for e in errors) + log.count("server_busy"),
        "first_errors": errors[:3],
        "wall_s": round(wall, 1),
        "stderr_tail": done.stderr[-400:] if done.returncode else "",
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return 0 if out["refused"] == 0 and len(records) == n else 1


if __name__ == "__main__":
    sys.exit(main())
