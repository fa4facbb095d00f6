"""How fast the harness itself is: `wearsim bench` against a fixed-latency
OpenAI-compatible server, so that everything but the server's sleep is the
harness's own cost.

    .venv/bin/python benchmarks/harness.py [--latency-ms 200] [--concurrency 1,8,32,64] [--cpu-latency-ms 0]
    .venv/bin/python benchmarks/harness.py --rescore-trials 3000

The server runs in a child process of this script on loopback (asyncio, raw
HTTP/1.1 with keep-alive). It answers every candidate request with the same
reply after `--latency-ms`, and every judge request (JSON mode) with a label
drawn from a hash of the prompt (about half `current`, half `prior`), so
about half the cells send the repair turn and judge it too.

Each level runs `wearsim bench` as its own process on the whole shipped bank,
all prompt conditions, one trial: the candidate `openai:harness-candidate`
at `--base-url`, the judge `openai:harness-judge` at `--judge-base-url` (the
same server), no response cache. Per level it reports:

- wall: from starting the command to its exit (imports, run, report);
- run: from the command's "cells to run" line to its "finished" line
  (the cells alone), and the wall time before and after it;
- floor: the sum over cells of the requests on the cell's critical path
  (Turn 1, Turn 2, the judge, and on a miss the repair and its judge) times
  the latency, divided by the concurrency;
- CPU per request: the bench process's user + system CPU (from `wait4`,
  so with every child it waited for: its report worker) divided by the
  requests the server answered. The split into before, during and after the
  cells reads /proc at the two lines, counting live child processes too.

The command runs without PYTHONDONTWRITEBYTECODE, so that it uses cached
bytecode as an installed wearsim does.

The rescore figure (`--rescore-trials N`): N records made by copying the
records of one run (distinct trial indexes), rescored with
`wearsim rescore --judge-family lexical`; wall time of the command.

Results go to benchmarks/results/harness.json.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "harness.json"
CANDIDATE = "openai:harness-candidate"
JUDGE = "openai:harness-judge"
CANDIDATE_REPLY = "That is the one in your hand now; it looks fine for the job."


# ---- the fixed-latency server (child process) -------------------------------


class Counts:
    requests = 0
    judge = 0


def _judge_reply(body: dict) -> str:
    prompt = json.dumps(body.get("messages", []), sort_keys=True)
    label = ("current", "prior")[hashlib.sha256(prompt.encode()).digest()[0] % 2]
    return json.dumps({"label": label, "rationale": "fixed by the harness server"})


def _chat_payload(body: dict) -> bytes:
    judge = bool(body.get("response_format"))
    Counts.requests += 1
    Counts.judge += judge
    text = _judge_reply(body) if judge else CANDIDATE_REPLY
    return json.dumps(
        {
            "id": "chatcmpl-harness",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "?"),
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }
    ).encode()


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, latency: float) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            raw = await reader.readexactly(length) if length else b""
            if method == "GET" and path.endswith("/stats"):
                payload = json.dumps({"requests": Counts.requests, "judge": Counts.judge}).encode()
            elif method == "POST" and path.endswith("/stats/reset"):
                Counts.requests = Counts.judge = 0
                payload = b"{}"
            else:
                body = json.loads(raw or b"{}")
                if latency:
                    await asyncio.sleep(latency)
                payload = _chat_payload(body)
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                + str(len(payload)).encode()
                + b"\r\n\r\n"
                + payload
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def _serve(port: int, latency: float) -> None:
    server = await asyncio.start_server(lambda r, w: _handle(r, w, latency), "127.0.0.1", port, backlog=256)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class FixedLatencyServer:
    """The server above in a child process; `base_url` for the bench command."""

    def __init__(self, latency_ms: float):
        self.latency_ms = latency_ms
        self.port = _free_port()
        self.process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self):
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(self.port), "--latency-ms", str(self.latency_ms)],
            stdout=subprocess.PIPE,
            text=True,
        )
        if self.process.stdout.readline().strip() != "ready":
            raise RuntimeError("the harness server did not start")
        return self

    def __exit__(self, *exc):
        self.process.terminate()
        self.process.wait(timeout=10)

    def _call(self, method: str, path: str) -> dict:
        import http.client

        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            connection.request(method, path, body=b"" if method == "POST" else None)
            return json.loads(connection.getresponse().read() or b"{}")
        finally:
            connection.close()

    def stats(self) -> dict:
        return self._call("GET", "/stats")

    def reset(self) -> None:
        self._call("POST", "/stats/reset")


# ---- the measurements ------------------------------------------------------------


def _env() -> dict:
    # PYTHONDONTWRITEBYTECODE (set in some sandboxes) is dropped: an installed wearsim runs from
    # cached bytecode, not by compiling its modules on every command
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY")
        and k not in ("OPENAI_BASE_URL", "WEARSIM_JUDGE_BASE_URL", "PYTHONDONTWRITEBYTECODE")
    }
    return env


def _process_cpu(pid: int) -> float:
    """User + system CPU seconds so far of a running process, its reaped children and its
    live descendants (Linux /proc): the bench command writes its report in a child process
    that runs alongside the cells, and its CPU belongs to the phase it is spent in."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:  # it exited since it was listed
        return 0.0
    ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime, stime, cutime, cstime
    seconds = ticks / os.sysconf("SC_CLK_TCK")
    for task in tasks:
        try:
            children = Path(f"/proc/{pid}/task/{task}/children").read_text().split()
        except OSError:
            continue
        seconds += sum(_process_cpu(int(child)) for child in children)
    return seconds


def _critical_path_requests(run_dir: Path) -> tuple[int, int, int]:
    """(cells, cells with a repair, requests on the critical paths) of a finished run."""
    sys.path.insert(0, str(ROOT))
    from benchmark.scoring import load_trials

    trials = load_trials(run_dir).trials
    repaired = sum(1 for t in trials if t.turn_3_repair_attempted)
    return len(trials), repaired, 3 * len(trials) + 2 * repaired


def run_level(server: FixedLatencyServer, concurrency: int, work: Path, extra: list[str] | None = None) -> dict:
    run_dir = work / f"c{concurrency}-{server.latency_ms:g}ms"
    shutil.rmtree(run_dir, ignore_errors=True)
    command = [
        str(ROOT / ".venv" / "bin" / "wearsim"),
        "bench",
        "--model",
        CANDIDATE,
        "--base-url",
        server.base_url,
        "--judge-model",
        JUDGE,
        "--judge-family",
        "openai",
        "--judge-base-url",
        server.base_url,
        "--concurrency",
        str(concurrency),
        "--output-dir",
        str(run_dir),
        *(extra or []),
    ]
    server.reset()
    started = time.monotonic()
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=_env(), cwd=work
    )
    marks: dict[str, float] = {}
    tail: list[str] = []
    buffer = ""
    while True:  # the progress line ends in \r, not \n: read characters
        chunk = process.stderr.read(1)
        if not chunk:
            break
        buffer += chunk
        if chunk in "\r\n":
            line = buffer.strip()
            buffer = ""
            if "cells to run" in line:
                marks["run_start"] = time.monotonic()
                marks["cpu_start"] = _process_cpu(process.pid)
            elif line.startswith("finished in"):
                marks["run_end"] = time.monotonic()
                marks["cpu_end"] = _process_cpu(process.pid)
            if line:
                tail = (tail + [line])[-5:]
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"bench exited {process.returncode}: {' | '.join(tail)}")
    requests = server.stats()["requests"]
    cells, repaired, critical = _critical_path_requests(run_dir)
    floor = critical * server.latency_ms / 1000 / concurrency
    cpu = usage.ru_utime + usage.ru_stime
    run_s = marks.get("run_end", started) - marks.get("run_start", started)
    run_cpu = marks.get("cpu_end", 0.0) - marks.get("cpu_start", 0.0)
    return {
        "latency_ms": server.latency_ms,
        "concurrency": concurrency,
        "cells": cells,
        "cells_with_repair": repaired,
        "requests": requests,
        "critical_path_requests": critical,
        "wall_s": round(wall, 3),
        "run_s": round(run_s, 3),
        "floor_s": round(floor, 3),
        "wall_over_floor": round(wall / floor, 3) if floor else None,
        # wall time before the cells (interpreter, imports, bank, manifest) and after them (report, exit)
        "start_s": round(marks.get("run_start", started) - started, 3),
        "after_s": round(started + wall - marks.get("run_end", started + wall), 3),
        "run_over_floor": round(run_s / floor, 3) if floor else None,
        "cpu_s": round(cpu, 3),
        "cpu_ms_per_request": round(1000 * cpu / max(requests, 1), 3),
        "run_cpu_s": round(run_cpu, 3),
        "run_cpu_ms_per_request": round(1000 * run_cpu / max(requests, 1), 3),
        # the rest of the command's CPU: before the cells (imports, bank, manifest) and after them (the report)
        "startup_cpu_s": round(marks.get("cpu_start", 0.0), 3),
        "report_cpu_s": round(cpu - marks.get("cpu_end", cpu), 3),
    }


def rescore_figure(source_run: Path, trials: int, work: Path) -> dict:
    """`wearsim rescore --judge-family lexical` over `trials` records copied from `source_run`."""
    sys.path.insert(0, str(ROOT))
    from benchmark.scoring import load_trials

    records = load_trials(source_run).trials
    big = work / f"rescore-source-{trials}"
    shutil.rmtree(big, ignore_errors=True)
    big.mkdir(parents=True)
    shutil.copy(source_run / "manifest.json", big / "manifest.json")
    with (big / "transcripts.jsonl").open("w", encoding="utf-8") as handle:
        for index in range(trials):
            record = records[index % len(records)]
            handle.write(record.replace(trial=index // len(records)).to_line())
    out = work / f"rescored-{trials}"
    shutil.rmtree(out, ignore_errors=True)
    started = time.monotonic()
    process = subprocess.Popen(
        [
            str(ROOT / ".venv" / "bin" / "wearsim"),
            "rescore",
            str(big),
            "--judge-family",
            "lexical",
            "--output-dir",
            str(out),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_env(),
        cwd=work,
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError("rescore failed")
    return {"trials": trials, "wall_s": round(wall, 3), "cpu_s": round(usage.ru_utime + usage.ru_stime, 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], epilog="example: .venv/bin/python benchmarks/harness.py"
    )
    parser.add_argument("--serve", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--latency-ms", type=float, default=200.0, help="server latency of the wall-time levels")
    parser.add_argument("--concurrency", default="1,8,32,64", help="levels, comma separated")
    parser.add_argument("--cpu-latency-ms", type=float, default=0.0, help="server latency of the CPU level")
    parser.add_argument("--cpu-concurrency", type=int, default=32)
    parser.add_argument(
        "--cpu-repeats",
        type=int,
        default=3,
        help="runs of the CPU level; the median is reported (the machine is shared)",
    )
    parser.add_argument("--rescore-trials", type=int, default=3000)
    parser.add_argument("--skip-rescore", action="store_true")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.serve:
        asyncio.run(_serve(args.serve, args.latency_ms / 1000))
        return 0
    levels = [int(v) for v in args.concurrency.split(",") if v.strip()]
    work = Path(tempfile.mkdtemp(prefix="wearsim-harness-"))
    result: dict = {
        "measured_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "command": "benchmarks/harness.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "levels": [],
        "cpu": None,
        "rescore": None,
    }
    try:
        with FixedLatencyServer(args.cpu_latency_ms) as server:
            runs = [run_level(server, args.cpu_concurrency, work) for _ in range(max(1, args.cpu_repeats))]
            cpu = sorted(runs, key=lambda r: r["cpu_ms_per_request"])[len(runs) // 2]
            cpu["repeats_cpu_ms_per_request"] = [r["cpu_ms_per_request"] for r in runs]
            result["cpu"] = cpu
            print(
                f"CPU at {args.cpu_latency_ms:g} ms latency, concurrency {args.cpu_concurrency}: "
                f"{cpu['cpu_ms_per_request']} ms per request for the whole command ({cpu['requests']} requests, "
                f"{cpu['cpu_s']} s CPU, wall {cpu['wall_s']} s); {cpu['run_cpu_ms_per_request']} ms per request "
                f"while the cells ran ({cpu['run_cpu_s']} s; before them {cpu['startup_cpu_s']} s, report after "
                f"them {cpu['report_cpu_s']} s)",
                flush=True,
            )
        with FixedLatencyServer(args.latency_ms) as server:
            for concurrency in levels:
                level = run_level(server, concurrency, work)
                result["levels"].append(level)
                print(
                    f"latency {args.latency_ms:g} ms, concurrency {concurrency}: wall {level['wall_s']} s, run "
                    f"{level['run_s']} s, floor {level['floor_s']} s (wall/floor {level['wall_over_floor']}, "
                    f"run/floor {level['run_over_floor']}; {level['start_s']} s before the cells, "
                    f"{level['after_s']} s after), {level['cpu_ms_per_request']} ms CPU per request",
                    flush=True,
                )
        if not args.skip_rescore:
            source = work / f"c{args.cpu_concurrency}-{args.cpu_latency_ms:g}ms"
            result["rescore"] = rescore_figure(source, args.rescore_trials, work)
            print(
                f"rescore --judge-family lexical over {args.rescore_trials} trials: {result['rescore']['wall_s']} s",
                flush=True,
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
