"""Memory the largest in-limit inputs leave behind: the server after its sessions close, and `wearsim
report` reading a record line far larger than any record.

    .venv/bin/python benchmarks/memory_load.py [--sessions 4] [--seconds 20] [--fps 10] [--line-mb 200]

Server: starts `wearsim serve` (a fake chat endpoint behind it, as
hostile_load.py does), warms it up with one spoken turn and reads its RSS
(the baseline). Then `--sessions` sessions at once each send `--seconds` of
audio (silence, the stream clock) and `--fps` camera frames a second of the
largest size a frame may have (4096x2160, every frame different, each JPEG
under the 500 KB a frame may hold), with the frame policy `change:0.01` and
`frame_quality` 100 (each frame decoded to compare it with the last sent,
and each sent frame encoded again at quality 100). The sessions close; RSS is
read again after `--idle-s` of quiet. The sampler keeps the peak.

Report: writes a run dir whose transcripts hold one ordinary record and one
line of `--line-mb` MB (a reply text that long), runs `wearsim report` on it
and reads that process's peak RSS (`os.wait4`), with its exit status and the
first line of what it said.

Writes benchmarks/results/memory_load.json and prints it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from hostile_load import one_turn, rss_bytes, speech_pcm, start_serve, stop_serve  # noqa: E402

from perception.frame_policy import parse_frame_policy  # noqa: E402
from streaming import wire  # noqa: E402
from tests.fake_openai import FakeOpenAI  # noqa: E402

WIDTH, HEIGHT = 4096, 2160  # media_effects.frames.MAX_FRAME_PIXELS
MB = 2**20


def big_frames(count: int) -> list[bytes]:
    """`count` different 4096x2160 JPEGs, each under wire.MAX_FRAME_BYTES: a gradient with a disc
    that moves and a few lines of texture, so `change:0.01` sends most of them."""
    frames, quality = [], 90
    ramp = np.linspace(40, 200, WIDTH, dtype=np.float32)
    base = np.repeat(np.tile(ramp, (HEIGHT, 1))[:, :, None], 3, axis=2).astype(np.uint8)
    for i in range(count):
        image = base.copy()
        cv2.circle(image, (400 + i * 3000 // max(1, count), 1080), 500, (30, 80 + 10 * i % 150, 200), -1)
        cv2.putText(image, f"frame {i}", (200, 300), cv2.FONT_HERSHEY_SIMPLEX, 8, (255, 255, 255), 12)
        while True:
            ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
            if ok and len(data) < wire.MAX_FRAME_BYTES:
                break
            quality -= 5
        frames.append(data.tobytes())
    return frames


async def big_frame_session(url: str, frames: list[bytes], seconds: float, fps: int) -> dict:
    import websockets

    ws = await websockets.connect(url + "/v1/session", max_size=None)
    await ws.send(
        wire.hello(
            None,
            wire.SessionConfig(
                backend="openai:fake", frame_policy=parse_frame_policy("change:0.01"), frame_quality=100
            ),
        )
    )
    ready = json.loads(await ws.recv())
    assert ready["type"] == "ready", ready
    errors = []

    async def listen():
        async for message in ws:
            if isinstance(message, str):
                event = json.loads(message)
                if event["type"] == "error":
                    errors.append(f"{event['code']}: {event['message'][:120]}")

    listener = asyncio.create_task(listen())
    silence = bytes(640)  # 20 ms
    started, sent, t_ms = time.monotonic(), 0, 0
    next_frame = 0.0
    while t_ms < seconds * 1000:
        await ws.send(wire.encode_media(wire.KIND_AUDIO, t_ms, silence))
        if t_ms >= next_frame:
            await ws.send(wire.encode_media(wire.KIND_FRAME, t_ms, frames[sent % len(frames)]))
            sent += 1
            next_frame += 1000 / fps
        t_ms += 20
        await asyncio.sleep(max(0.0, started + t_ms / 1000 - time.monotonic()))
    await asyncio.sleep(2.0)  # what is queued is worked through
    await ws.close()
    listener.cancel()
    return {"frames_sent": sent, "errors": errors[:5]}


class Peak(threading.Thread):
    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak, self.stop = pid, 0, threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                self.peak = max(self.peak, rss_bytes(self.pid))
            except OSError:
                pass
            self.stop.wait(0.1)


def server_memory(args, work: Path) -> dict:
    from candidates.local import free_port

    frames = big_frames(12)
    port = free_port()
    url = f"ws://127.0.0.1:{port}"
    out: dict = {"frame_bytes": [min(len(f) for f in frames), max(len(f) for f in frames)]}
    with FakeOpenAI(reply="Fine.") as fake:
        server = start_serve(port, fake.base_url, work / "studio")
        try:
            out["warm_up_turn"] = asyncio.run(one_turn(url, speech_pcm(work, 2.5)))["transcript"]
            baseline = rss_bytes(server.pid)
            peak = Peak(server.pid)
            peak.start()

            async def all_sessions():
                return await asyncio.gather(
                    *(big_frame_session(url, frames, args.seconds, args.fps) for _ in range(args.sessions))
                )

            out["sessions"] = asyncio.run(all_sessions())
            closed = time.monotonic()
            time.sleep(args.idle_s)
            idle = rss_bytes(server.pid)
            peak.stop.set()
            peak.join()
            out.update(
                baseline_rss_mb=round(baseline / MB, 1),
                peak_rss_mb=round(peak.peak / MB, 1),
                idle_rss_mb=round(idle / MB, 1),
                idle_growth_mb=round((idle - baseline) / MB, 1),
                idle_after_s=round(time.monotonic() - closed, 1),
                server_alive_after=server.poll() is None,
            )
        finally:
            stop_serve(server)
    return out


def report_memory(args, work: Path) -> dict:
    """`wearsim report` on a run dir holding one line of `--line-mb` MB: its peak RSS."""
    run = work / "huge-line-run"
    run.mkdir()
    fixture = ROOT / "tests" / "fixtures" / "transcripts" / "ours_small" / "transcripts.jsonl"
    ordinary = json.loads(fixture.read_text().splitlines()[0])
    (run / "manifest.json").write_text(
        json.dumps({"candidate_model": ordinary.get("candidate_model", "local"), "conditions": [ordinary["condition"]]})
    )
    huge = dict(ordinary, trial=ordinary.get("trial", 0) + 1, turn_2_response="x" * (args.line_mb * MB))
    with (run / "transcripts.jsonl").open("w") as out:
        out.write(json.dumps(ordinary) + "\n")
        out.write(json.dumps(huge) + "\n")
    line_bytes = (run / "transcripts.jsonl").stat().st_size
    # a wrapper runs the report and says the peak RSS of its children (only the report)
    wrapper = (
        "import json, resource, subprocess, sys; done = subprocess.run(sys.argv[1:], capture_output=True, "
        "text=True); print(json.dumps({'status': done.returncode, 'stderr': done.stderr[-2000:], "
        "'maxrss_kb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))"
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", wrapper, sys.executable, "-m", "benchmark", "report", str(run)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    said = json.loads(done.stdout)
    return {
        "file_bytes": line_bytes,
        "exit_status": said["status"],
        "wall_s": round(time.monotonic() - started, 1),
        "said": (said["stderr"].strip().splitlines() or [""])[0][:300],
        "peak_rss_mb": round(said["maxrss_kb"] / 1024, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--fps", type=int, default=10)
    parser.add_argument("--idle-s", type=float, default=10.0)
    parser.add_argument("--line-mb", type=int, default=200)
    parser.add_argument("--skip", choices=("server", "report"), help="leave one part out")
    parser.add_argument("--output", default=str(ROOT / "benchmarks/results/memory_load.json"))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="memory-load-"))
    result: dict = {"command": "benchmarks/memory_load.py " + " ".join(sys.argv[1:])}
    try:
        if args.skip != "server":
            print("server: sessions of 4096x2160 frames ...", flush=True)
            result["server"] = server_memory(args, work)
        if args.skip != "report":
            print(f"report: a {args.line_mb} MB record line ...", flush=True)
            result["report"] = report_memory(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
