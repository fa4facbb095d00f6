"""The third red-team pass's attacks (issue 49), run again against the fixed code, on loopback and bounded.

    .venv/bin/python benchmarks/red_team_three.py

1. `wearsim view` on a run dir holding a sparse 300 MB `plots/zz.png` and a sparse 200 MB
   `findings.md`: the page's size, and whether both are named as left out;
2. `/healthz` and `/` answer times under 64 and under 600 slow clients on 127.0.0.1 (connections
   that never send their headers), against `wearsim serve` in its own process;
3. `/` and `/healthz` under 60 slow clients from each of 10 loopback addresses that reconnect as
   soon as they are dropped, for 25 s (past two 10 s header deadlines): the slowest answer;
4. 30 slow uploads to `POST /v1/record`, each declaring 30 MB and trickling its body: the most
   `.incoming` held at once, and how many were refused at their headers;
5. rounds of sessions sending 130 frames of about 406 KB: `/healthz` `frame_bytes` after the last
   session closed (how long until it reads 0);
6. `wearsim report` on a run dir with a sparse 512 MB manifest.json: seconds, peak memory
   (the child's maximum RSS), and the refusal;
7. a transcripts file with a line nested 100,000 deep and one holding a 5,000-digit integer: what
   `wearsim report` says;
8. a scene spec of 2,000 objects: seconds to refuse it, and that nothing was drawn.

Writes benchmarks/results/red_team_three.json.
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
from streaming import wire  # noqa: E402
from tests.fake_openai import FakeOpenAI  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "transcripts" / "schema1_stream"
RESULTS = ROOT / "benchmarks" / "results" / "red_team_three.json"


def sparse(path: Path, size: int, head: bytes = b"") -> None:
    with path.open("wb") as handle:
        handle.write(head)
        handle.truncate(size)


# runs the command as its only child and says the child's peak RSS (KB) on its last stderr line
PEAK = (
    "import resource, subprocess, sys; done = subprocess.run(sys.argv[1:]); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(done.returncode)"
)


def wearsim(*argv: str, timeout: float = 300) -> tuple[subprocess.CompletedProcess, float, float]:
    """The command's result (stderr without the peak line), its wall seconds and its peak RSS in MB."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", PEAK, sys.executable, "-m", "benchmark", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    took = time.monotonic() - started
    *said, peak = done.stderr.rstrip("\n").split("\n")
    done.stderr = "\n".join(said)
    return done, took, int(peak) / 1024


def view_with_giants(work: Path) -> dict:
    run_dir = work / "giants"
    shutil.copytree(FIXTURE, run_dir)
    done, _, _ = wearsim("report", str(run_dir))
    assert done.returncode == 0, done.stderr
    sparse(run_dir / "plots" / "zz.png", 300 << 20, b"\x89PNG\r\n\x1a\n")
    sparse(run_dir / "findings.md", 200 << 20, b"# Findings\n")
    os.utime(run_dir / "summary.json")  # newer than the transcripts: view does not rewrite the report
    done, took, peak = wearsim("view", str(run_dir))
    page = (run_dir / "index.html").read_text(encoding="utf-8") if done.returncode == 0 else ""
    return {
        "exit": done.returncode,
        "seconds": round(took, 2),
        "peak_rss_mb": round(peak, 1),
        "page_mb": round(len(page.encode()) / 2**20, 2),
        "zz_png_named": "zz.png: 300.0 MB, larger than a plot can be" in page,
        "findings_named": "findings.md: 200.0 MB, larger than a findings.md can be" in page,
    }


def silent(port: int, source: str) -> socket.socket | None:
    try:
        return socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
    except OSError:
        return None


def timed_get(http: str, path: str, source: str) -> float | None:
    started = time.monotonic()
    try:
        with httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=15) as client:
            ok = client.get(http + path).status_code == 200
    except httpx.HTTPError:
        ok = False
    return round(time.monotonic() - started, 3) if ok else None


def slow_crowd(port: int, http: str, count: int) -> dict:
    crowd = [silent(port, "127.0.0.1") for _ in range(count)]
    try:
        return {
            "slow_clients": count,
            "healthz_s": [timed_get(http, "/healthz", "127.0.0.1") for _ in range(5)],
            "page_s": [timed_get(http, "/", "127.0.0.1") for _ in range(5)],
        }
    finally:
        for sock in crowd:
            if sock is not None:
                sock.close()


def ten_addresses(port: int, http: str, seconds: float = 25.0) -> dict:
    """60 slow clients from each of 10 addresses, each reconnecting as soon as it is dropped."""
    stop = threading.Event()
    opened = [0]

    def attacker(source: str) -> None:
        held: list[socket.socket] = []
        while not stop.is_set():
            held = [s for s in held if s.fileno() != -1 and not _dropped(s)]
            while len(held) < 60 and not stop.is_set():
                sock = silent(port, source)
                if sock is None:
                    break
                held.append(sock)
                opened[0] += 1
            stop.wait(0.2)
        for sock in held:
            sock.close()

    threads = [threading.Thread(target=attacker, args=(f"127.0.0.{10 + n}",)) for n in range(10)]
    for thread in threads:
        thread.start()
    page, healthz = [], []
    end = time.monotonic() + seconds
    time.sleep(2.0)  # the crowd in place
    while time.monotonic() < end:
        page.append(timed_get(http, "/", "127.0.0.10"))  # from one of the attack's own addresses
        healthz.append(timed_get(http, "/healthz", "127.0.0.2"))
        time.sleep(0.5)
    stop.set()
    for thread in threads:
        thread.join()
    answered = [t for t in page if t is not None]
    return {
        "seconds": seconds,
        "connections_opened_by_the_attack": opened[0],
        "page_asked": len(page),
        "page_answered": len(answered),
        "page_slowest_s": max(answered, default=None),
        "healthz_slowest_s": max((t for t in healthz if t is not None), default=None),
        "healthz_failed": sum(t is None for t in healthz),
    }


def _dropped(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        sock.setblocking(True)


def slow_uploads(port: int, studio: Path, count: int = 30, declared: int = 30 << 20) -> dict:
    incoming = studio / ".incoming"
    peak = [0]
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            size = sum(p.stat().st_size for p in incoming.rglob("*") if p.is_file()) if incoming.exists() else 0
            peak[0] = max(peak[0], size)
            stop.wait(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    socks, refused = [], 0
    try:
        for i in range(count):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(f"127.0.0.{40 + i}", 0))
            sock.sendall(
                (
                    f"POST /v1/record?scenario=sc-01&step=turn_1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                    f"Origin: http://127.0.0.1:{port}\r\nContent-Type: video/webm\r\n"
                    f"Content-Length: {declared}\r\n\r\n"
                ).encode()
            )
            socks.append(sock)
        piece = b"\x00" * (1 << 20)
        for _ in range(8):  # 8 MB each, a MB at a time
            for sock in socks:
                try:
                    sock.sendall(piece)
                except OSError:
                    pass
            time.sleep(0.2)
        for sock in socks:
            sock.settimeout(0.2)
            try:
                refused += sock.recv(64).startswith(b"HTTP/1.1 503")
            except (TimeoutError, OSError):
                pass
    finally:
        stop.set()
        watcher.join()
        for sock in socks:
            sock.close()
    return {
        "uploads": count,
        "declared_mb_each": declared >> 20,
        "refused_503": refused,
        "incoming_peak_mb": round(peak[0] / 2**20, 1),
    }


async def frame_rounds(url: str, http: str, rounds: int = 3, sessions: int = 4) -> dict:
    jpeg = _big_jpeg()
    readings = []
    for _ in range(rounds):
        socks = [await open_session(url, camera=True) for _ in range(sessions)]
        for ws in socks:
            for i in range(130):  # 40 a second: under the 60 a second frame rate
                await ws.send(wire.encode_media(wire.KIND_FRAME, i * 100, jpeg))
                await asyncio.sleep(0.025)
        during = httpx.get(http + "/healthz", timeout=10).json()["frame_bytes"]
        for ws in socks:
            await ws.close()
        closed = time.monotonic()
        after = None
        while time.monotonic() - closed < 5:
            if httpx.get(http + "/healthz", timeout=10).json()["frame_bytes"] == 0:
                after = round(time.monotonic() - closed, 3)
                break
            await asyncio.sleep(0.05)
        readings.append({"frame_bytes_while_open": during, "seconds_to_zero_after_close": after})
    return {"frame_kb": len(jpeg) // 1024, "rounds": readings}


def _big_jpeg() -> bytes:
    import numpy as np

    from media_effects.frames import encode_jpeg

    rng = np.random.default_rng(49)
    picture = rng.integers(0, 255, (560, 560, 3), np.uint8)
    return encode_jpeg(picture, quality=97)  # noise: about 400 KB, under the 500,000-byte frame cap


def giant_manifest(work: Path) -> dict:
    run_dir = work / "manifest"
    shutil.copytree(FIXTURE, run_dir)
    sparse(run_dir / "manifest.json", 512 << 20, b"{")
    done, took, peak = wearsim("report", str(run_dir))
    return {
        "exit": done.returncode,
        "seconds": round(took, 2),
        "peak_rss_mb": round(peak, 1),
        "said": done.stderr.strip().splitlines()[-1][:200] if done.stderr.strip() else "",
    }


def deep_and_huge(work: Path) -> dict:
    run_dir = work / "lines"
    shutil.copytree(FIXTURE, run_dir)
    path = run_dir / "transcripts.jsonl"
    lines = path.read_bytes().splitlines()
    path.write_bytes(
        b"\n".join([lines[0], b"[" * 100_000 + b"]" * 100_000, b'{"trial": ' + b"7" * 5000 + b"}", *lines[1:]]) + b"\n"
    )
    done, took, _ = wearsim("report", str(run_dir))
    return {
        "exit": done.returncode,
        "seconds": round(took, 2),
        "traceback": "Traceback" in done.stderr,
        "said": [line[:200] for line in done.stderr.splitlines() if "line " in line][:3],
    }


def giant_scene() -> dict:
    from core.scenes import parse_scene

    problems: list[str] = []
    started = time.process_time()
    scene = parse_scene(
        {"setting": "workbench", "objects": [{"id": f"o{i}", "name": "nail"} for i in range(2000)]}, "scene", problems
    )
    return {"refused": scene is None, "cpu_s": round(time.process_time() - started, 4), "said": problems[:1]}


def main() -> int:
    results: dict = {"command": "benchmarks/red_team_three.py"}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        results["view_with_giants"] = view_with_giants(work)
        results["giant_manifest"] = giant_manifest(work)
        results["deep_line_and_huge_integer"] = deep_and_huge(work)
        results["scene_of_2000_objects"] = giant_scene()
        studio = work / "studio"
        studio.mkdir()
        with FakeOpenAI(reply="Fine.") as fake:
            port = _free_port()
            server = start_serve(port, fake.base_url, studio)
            http, url = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}"
            try:
                results["slow_clients_127_0_0_1"] = [slow_crowd(port, http, n) for n in (64, 600)]
                results["ten_addresses"] = ten_addresses(port, http)
                results["slow_uploads"] = slow_uploads(port, studio)
                results["frames_after_close"] = asyncio.run(frame_rounds(url, http))
            finally:
                stop_serve(server)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results, indent=1))
    return 0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


if __name__ == "__main__":
    sys.exit(main())
