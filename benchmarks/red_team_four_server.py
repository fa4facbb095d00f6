"""The fourth red-team pass's rows 2, 4, 6 and 14 (issue 57), run again against the fixed code, on
loopback and bounded (the other rows' figures: benchmarks/red_team_four.py).

    .venv/bin/python benchmarks/red_team_four_server.py

2. 520 clients with a tiny receive window, each pipelining GETs of the 17 KB script and never
   reading (first 400 GETs each, past the pipelining cap; then 520 more with `MAX_PIPELINED` + 1
   GETs each, the most a connection may queue, all answered into send queues that are never read),
   against `wearsim serve` in its own process: `/healthz` timed every
   0.25 s from another address for 14 s (past the 10 s write deadline), `/` and a new session
   meanwhile, the server's open fds and the kernel's send queue on its port at their most;
4. 530 label POSTs against `wearsim annotate` in its own process, each sending one byte every 8 s
   (opened again a second after it is refused a place), then 30 silent connections, each opened
   again a second after the server closes it: `/` and `/healthz` every second for 60 s, what the
   slow POSTs were answered and when, a real label saved every 10 s; all from 127.0.0.1, as every
   client of the page is (it listens on loopback; `ssh -L` clients come from there too). Then 20 s
   with no silent connection and each slow POST opened again at once after its 408 (what the
   deadline alone does against an attacker who comes back);
6. `wearsim view` on a run dir with 40 sparse PNGs just under the 8 MB plot cap: the page's size,
   the child's peak RSS, and how many were named as left out;
14. 25 chunked uploads from 127.0.0.3 sending one byte every 8 s, and a real upload from
   127.0.0.2: its status, and when the slow ones were let go.

Writes benchmarks/results/red_team_four_server.json.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import selectors
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

from benchmarks.hostile_load import await_healthz, open_session, start_serve, stop_serve  # noqa: E402
from benchmarks.probe_load import free_port  # noqa: E402
from benchmarks.red_team_three import FIXTURE, silent, sparse, timed_get, wearsim  # noqa: E402
from streaming.local_server import MAX_PIPELINED  # noqa: E402
from tests.fake_openai import FakeOpenAI  # noqa: E402
from tests.label_runs import build_run  # noqa: E402

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


def start_annotate(port: int, run_dir: Path) -> subprocess.Popen:
    server = subprocess.Popen(
        [sys.executable, "-c", "import sys; from benchmark.cli import main; sys.exit(main(sys.argv[1:]))"]
        + ["annotate", str(run_dir), "--annotator", "ana", "--port", str(port)],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
    )
    return await_healthz(server, port, 60)


def slow_label(port: int) -> socket.socket | None:
    """A label POST whose headers and first body byte are sent (200 bytes declared)."""
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.0.1", 0))
        sock.sendall(
            (
                f"POST /v1/annotate/label HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\n"
                "Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{"
            ).encode()
        )
        sock.setblocking(False)
        return sock
    except OSError:
        return None


def answer_of(sock: socket.socket) -> int:
    """What the server answered on a readable `sock`: its status, 0 when it closed it without one."""
    try:
        head = sock.recv(64)
    except OSError:
        return 0
    return int(head.split()[1]) if head.startswith(b"HTTP/1.1 ") else 0


def probe(http: str, path: str, source: str) -> tuple[int | None, float]:
    started = time.monotonic()
    try:
        with httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=5) as client:
            status = client.get(http + path).status_code
    except httpx.HTTPError:
        status = None
    return status, round(time.monotonic() - started, 3)


def save_label(http: str, key: str, source: str) -> int | None:
    try:
        with httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=5) as client:
            body = {"key": key, "label": "current"}
            return client.post(http + "/v1/annotate/label", json=body, headers={"Origin": http}).status_code
    except httpx.HTTPError:
        return None


def slow_labels(
    server: subprocess.Popen,
    port: int,
    key: str,
    seconds: float,
    reopen: bool,
    sources: tuple[str, str],
    silent_count: int = 30,
    count: int = 530,
) -> dict:
    """Row 4's attack for `seconds`: `count` slow label POSTs, a byte every 8 s each, each opened again a
    second after it is refused a place (503, or closed unanswered) and, if `reopen`, at once after it is
    cut off (408); and `silent_count` silent connections, each opened again a second after the server
    closes it.
    `/` and `/healthz` probed every second, a real label saved every 10 s. The POSTs come from 127.0.0.1,
    the silent connections and the probes from `sources`."""
    silent_from, probe_from = sources
    http = f"http://127.0.0.1:{port}"
    watch = selectors.DefaultSelector()
    started = time.monotonic()
    for n in range(count):
        if (sock := slow_label(port)) is not None:
            watch.register(sock, selectors.EVENT_READ, "post")
        if n % 50 == 49 or n == count - 1:
            time.sleep(0.2)  # their headers read, so each holds a place (a burst evicts some still unread)
    let_go: list[tuple[int, float]] = []  # (status, s into the attack) of each slow POST answered or closed
    # when each connection is opened (again), and which kind: the silent ones once the POSTs hold the places
    due = [(time.monotonic() + 1.5, "silent")] * silent_count
    opened, stop = {"post": count, "silent": 0}, threading.Event()

    def attack() -> None:
        trickled = time.monotonic()
        while not stop.is_set():
            for key in [key for key, _ in watch.select(0.1)]:
                sock, kind = key.fileobj, key.data
                status = answer_of(sock)
                watch.unregister(sock)
                sock.close()
                if kind == "post":
                    let_go.append((status, round(time.monotonic() - started, 1)))
                if kind == "silent" or status != 408:  # a POST refused a place tries again a second later
                    due.append((time.monotonic() + 1.0, kind))
                elif reopen:  # and one cut off at once
                    due.append((time.monotonic(), kind))
            now = time.monotonic()
            for when, kind in [(when, kind) for when, kind in due if when <= now]:
                due.remove((when, kind))
                opened[kind] += 1
                sock = slow_label(port) if kind == "post" else silent(port, silent_from)
                if sock is not None:
                    sock.setblocking(False)
                    watch.register(sock, selectors.EVENT_READ, kind)
            if now - trickled >= 8:
                trickled = now
                for key in list(watch.get_map().values()):
                    if key.data == "post":
                        with contextlib.suppress(OSError):
                            key.fileobj.send(b" ")

    attacker = threading.Thread(target=attack)
    attacker.start()
    time.sleep(2.0)  # the POSTs refused a place in the rush have tried again, and the silent ones come
    page, health, labels, most_fds = [], [], [], 0
    try:
        while time.monotonic() - started < seconds:
            at = round(time.monotonic() - started, 1)
            page.append((at, probe(http, "/", probe_from)[0]))
            health.append(probe(http, "/healthz", probe_from))
            if len(page) % 10 == 5:
                labels.append(save_label(http, key, probe_from))
            most_fds = max(most_fds, fds(server.pid))
            time.sleep(max(0.0, 1 - (time.monotonic() - started) % 1))
    finally:
        stop.set()
        attacker.join()
        held = sum(key.data == "post" for key in watch.get_map().values())
        for key in list(watch.get_map().values()):
            key.fileobj.close()
    statuses = [status for status, _ in let_go]
    return {
        "slow_posts": count,
        "opened_again_after_408": reopen,
        "silent_and_probes_from": list(sources),
        "silent_connections": silent_count,
        "slow_posts_opened": opened["post"],
        "seconds": seconds,
        "page_200": f"{sum(status == 200 for _, status in page)} of {len(page)}",
        "page_answers": runs(page),
        "healthz_200": f"{sum(status == 200 for status, _ in health)} of {len(health)}",
        "healthz_answers": runs([(at, status) for (at, _), (status, _) in zip(page, health, strict=True)]),
        "healthz_slowest_s": max((took for status, took in health if status == 200), default=None),
        "labels_saved": f"{labels.count(200)} of {len(labels)}",
        "slow_posts_408": statuses.count(408),
        "slow_posts_503": statuses.count(503),
        "slow_posts_closed_unanswered": statuses.count(0),
        "last_let_go_s": max((at for _, at in let_go), default=None),
        "slow_posts_held_at_end": held,
        "silent_connections_opened": opened["silent"],
        "server_fds_most": most_fds,
    }


def runs(probes: list[tuple[float, int | None]]) -> list[str]:
    """Probes (s into the attack, status) as runs of one status: "503 from 4.3 s to 5.3 s (2)"."""
    out: list[list] = []
    for at, status in probes:
        if out and out[-1][0] == status:
            out[-1][2:] = [at, out[-1][3] + 1]
        else:
            out.append([status, at, at, 1])
    return [f"{status or 'no answer'} from {first} s to {last} s ({n})" for status, first, last, n in out]


def label_attack(work: Path) -> dict:
    run_dir = build_run(work / "label_run", ["current"] * 4)
    port = free_port()
    server = start_annotate(port, run_dir)
    try:
        key = httpx.get(f"http://127.0.0.1:{port}/v1/annotate", timeout=5).json()["items"][0]["key"]
        one_wave = slow_labels(server, port, key, 60, False, ("127.0.0.1", "127.0.0.1"))
        time.sleep(2)
        opened_again = slow_labels(server, port, key, 20, True, ("127.0.0.1", "127.0.0.1"), silent_count=0)
        return {"one_wave": one_wave, "opened_again_no_silent": opened_again}
    finally:
        stop_serve(server)


def main() -> int:
    results: dict = {"command": "benchmarks/red_team_four_server.py"}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        results["view_40_plots_under_the_cap"] = view_many_plots(work)
        results["slow_label_posts_and_silent_connections"] = label_attack(work)
        studio = work / "studio"
        studio.mkdir()
        with FakeOpenAI(reply="Fine.") as fake:
            port = free_port()
            server = start_serve(port, fake.base_url, studio)
            try:
                results["non_readers_past_the_pipeline_cap"] = non_readers(server, port, 400)
                time.sleep(1)
                results["non_readers_under_the_pipeline_cap"] = non_readers(server, port, MAX_PIPELINED + 1)
                results["slow_chunked_uploads"] = slow_uploads(port)
            finally:
                stop_serve(server)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
