"""The fourth red-team pass's rows 2, 6 and 14 (issue 57), run again against the fixed code, on
loopback and bounded (the other rows' figures: benchmarks/red_team_four.py).

    .venv/bin/python benchmarks/red_team_four_server.py

2. 520 clients with a tiny receive window, each pipelining GETs of the 17 KB script and never
   reading (first 400 GETs each, past the pipelining cap; then 520 more with 12 GETs each, under
   it, so their writes stall), against `wearsim serve` in its own process: `/healthz` timed every
   0.25 s from another address for 14 s (past the 10 s write deadline), `/` and a new session
   meanwhile, the server's open fds and the kernel's send queue on its port at their most;
6. `wearsim view` on a run dir with 40 sparse PNGs just under the 8 MB plot cap: the page's size,
   the child's peak RSS, and how many were named as left out;
14. 25 chunked uploads from 127.0.0.3 sending one byte every 8 s, and a real upload from
   127.0.0.2: its status, and when the slow ones were let go.

Writes benchmarks/results/red_team_four_server.json.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.hostile_load import open_session, start_serve, stop_serve  # noqa: E402
from benchmarks.probe_load import free_port  # noqa: E402
from benchmarks.red_team_three import FIXTURE, sparse, timed_get, wearsim  # noqa: E402
from tests.fake_openai import FakeOpenAI  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "red_team_four_server.json"


def non_reader(port: int, requests: int) -> socket.socket | None:
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        sock.settimeout(5)
        sock.bind(("127.0.0.1", 0))
        sock.connect(("127.0.0.1", port))
        sock.sendall(f"GET /web/app.js HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode() * requests)
        return sock
    except OSError:
        return None


def send_queue(port: int) -> int:
    out = subprocess.run(["ss", "-tnH", f"( sport = :{port} )"], capture_output=True, text=True).stdout
    return sum(int(line.split()[2]) for line in out.splitlines() if len(line.split()) > 2)


def fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def session_opens(url: str) -> float | None:
    async def go() -> None:
        ws = await asyncio.wait_for(open_session(url), 10)
        await ws.close()

    started = time.monotonic()
    try:
        asyncio.run(go())
    except Exception:
        return None
    return round(time.monotonic() - started, 3)


def non_readers(server: subprocess.Popen, port: int, requests: int, count: int = 520, seconds: float = 14) -> dict:
    http, url = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}"
    opened = time.monotonic()
    crowd = [non_reader(port, requests) for _ in range(count)]
    opening_s = round(time.monotonic() - opened, 1)
    health: list[float | None] = []
    most = {"fds": 0, "send_queue_mb": 0.0}
    try:
        started = time.monotonic()
        page, session, late = [], [], []  # late: when (s into the attack) a /healthz took over 1 s
        while time.monotonic() - started < seconds:
            health.append(timed_get(http, "/healthz", "127.0.0.2"))
            if health[-1] is not None and health[-1] > 1:
                late.append(round(time.monotonic() - started, 1))
            most["fds"] = max(most["fds"], fds(server.pid))
            most["send_queue_mb"] = max(most["send_queue_mb"], round(send_queue(port) / 2**20, 1))
            if len(health) % 8 == 1:
                page.append(timed_get(http, "/", "127.0.0.2"))
                session.append(session_opens(url))
            time.sleep(0.25)
        answered = [h for h in health if h is not None]
        return {
            "clients": count,
            "seconds_to_open_them": opening_s,
            "pipelined_gets_each": requests,
            "healthz_samples": len(health),
            "healthz_failed": len(health) - len(answered),
            "healthz_over_1s": sum(h > 1 for h in answered),
            "healthz_over_1s_at_s": late,
            "healthz_slowest_s": max(answered, default=None),
            "page_answered": f"{sum(p is not None for p in page)} of {len(page)}",
            "page_slowest_s": max((p for p in page if p is not None), default=None),
            "sessions_opened": f"{sum(s is not None for s in session)} of {len(session)}",
            "session_slowest_s": max((s for s in session if s is not None), default=None),
            "server_fds_most": most["fds"],
            "send_queue_mb_most": most["send_queue_mb"],
            "server_fds_after": fds(server.pid),
        }
    finally:
        for sock in crowd:
            if sock is not None:
                sock.close()


def view_many_plots(work: Path) -> dict:
    run_dir = work / "many_plots"
    shutil.copytree(FIXTURE, run_dir)
    done, _, _ = wearsim("report", str(run_dir))
    assert done.returncode == 0, done.stderr
    for i in range(40):
        sparse(run_dir / "plots" / f"zz{i:02d}.png", (8 << 20) - 4096, b"\x89PNG\r\n\x1a\n")
    os.utime(run_dir / "summary.json")  # newer than the transcripts: view does not rewrite the report
    done, took, peak = wearsim("view", str(run_dir))
    page = (run_dir / "index.html").read_text(encoding="utf-8") if done.returncode == 0 else ""
    return {
        "exit": done.returncode,
        "seconds": round(took, 2),
        "peak_rss_mb": round(peak, 1),
        "page_mb": round(len(page.encode()) / 2**20, 2),
        "plots_inlined": page.count('src="data:image/png;base64,'),
        "named_left_out": page.count("of images one page inlines in all"),
    }


def chunked_upload(port: int, source: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(source, 0))
    sock.sendall(
        (
            f"POST /v1/record?scenario=sc-01&step=turn_1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Origin: http://127.0.0.1:{port}\r\nContent-Type: video/webm\r\nTransfer-Encoding: chunked\r\n\r\n"
        ).encode()
    )
    return sock


def slow_uploads(port: int, count: int = 25, seconds: float = 30) -> dict:
    http = f"http://127.0.0.1:{port}"
    slow = [chunked_upload(port, "127.0.0.3") for _ in range(count)]
    stop, answered = threading.Event(), {}
    started = time.monotonic()

    def trickle() -> None:
        while not stop.is_set():
            for n, sock in enumerate(slow):
                if n in answered:
                    continue
                sock.settimeout(0.01)
                try:
                    head = sock.recv(64)
                    answered[n] = (int(head.split()[1]) if head.startswith(b"HTTP/1.1 ") else 0, time.monotonic())
                    continue
                except TimeoutError:
                    pass
                except OSError:
                    answered[n] = (0, time.monotonic())
                    continue
                try:
                    sock.sendall(b"1\r\nx\r\n")
                except OSError:
                    answered[n] = (0, time.monotonic())
            stop.wait(8)

    worker = threading.Thread(target=trickle)
    worker.start()
    try:
        time.sleep(1)
        with httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.2"), timeout=30) as client:
            real = client.post(
                f"{http}/v1/record?scenario=sc-01&step=turn_1",
                content=b"\x1aE\xdf\xa3 not a real recording",
                headers={"Origin": http, "Content-Type": "video/webm"},
            )
        while time.monotonic() - started < seconds and len(answered) < count:
            time.sleep(0.5)
    finally:
        stop.set()
        worker.join()
        for sock in slow:
            sock.close()
    statuses = [status for status, _ in answered.values()]
    return {
        "slow_uploads": count,
        "real_upload_status": real.status_code,
        "refused_503_at_headers": statuses.count(503),
        "cut_off_408": statuses.count(408),
        "last_let_go_s": round(max((at for _, at in answered.values()), default=started) - started, 1),
        "still_held_after_s": f"{count - len(answered)} after {seconds:.0f} s",
    }


def main() -> int:
    results: dict = {"command": "benchmarks/red_team_four_server.py"}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        results["view_40_plots_under_the_cap"] = view_many_plots(work)
        studio = work / "studio"
        studio.mkdir()
        with FakeOpenAI(reply="Fine.") as fake:
            port = free_port()
            server = start_serve(port, fake.base_url, studio)
            try:
                results["non_readers_past_the_pipeline_cap"] = non_readers(server, port, 400)
                time.sleep(1)
                results["non_readers_under_the_pipeline_cap"] = non_readers(server, port, 12)
                results["slow_chunked_uploads"] = slow_uploads(port)
            finally:
                stop_serve(server)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
