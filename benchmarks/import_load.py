"""Studio imports against a live session (issue 34, item 12).

    .venv/bin/python benchmarks/import_load.py [--imports 6] [--seconds 60] [--turns 3]

Starts `wearsim serve --record DIR` as a subprocess (a fake OpenAI-compatible
chat endpoint behind it), makes a long in-limit WebM (VP8 1280x720 at 30 fps,
a small moving square on a still background, a spoken Opus track; `--seconds`
long, 60 s by default: every documented limit holds), and measures how long
a live session waits for its final transcript: from the client's last chunk
of speech sent to `transcript.final` received (`client_s`), and as the server
measured it (`server_s`, the `metrics` event's
`speech_end_to_transcript_final`, from the end of speech it detected):

- alone, `--turns` times;
- while `--imports` concurrent `POST /v1/record` of that WebM run, one turn
  after another until every import has answered.

Also per import: the HTTP status and answer, its wall time, and what the
studio stored per second of recording. Writes
benchmarks/results/import_load.json (or `--output`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.hostile_load import cpu_seconds, open_session, speech_pcm, start_serve, stop_serve  # noqa: E402
from streaming import wire  # noqa: E402
from tests.fake_openai import FakeOpenAI  # noqa: E402


def make_webm(path: Path, seconds: float, speech: bytes) -> Path:
    import av

    with av.open(str(path), "w") as out:
        video = out.add_stream("libvpx", rate=30)
        video.width, video.height, video.pix_fmt = 1280, 720, "yuv420p"
        video.bit_rate = 30_000
        audio = out.add_stream("libopus", rate=48000)
        audio.layout = "mono"
        background = np.full((720, 1280, 3), 110, np.uint8)
        for n in range(int(seconds * 30)):
            picture = background.copy()
            x = (n * 7) % 1180
            picture[300:400, x : x + 100] = (200, 60, 40)
            out.mux(video.encode(av.VideoFrame.from_ndarray(picture, format="rgb24")))
        out.mux(video.encode())
        pcm = np.frombuffer(speech, np.int16)
        pcm48 = np.repeat(pcm, 3)  # 16 kHz -> 48 kHz, good enough for a load test
        step = 960
        for at in range(0, len(pcm48) - step, step):
            frame = av.AudioFrame.from_ndarray(pcm48[at : at + step].reshape(1, -1), format="s16", layout="mono")
            frame.sample_rate, frame.pts = 48000, at
            out.mux(audio.encode(frame))
        out.mux(audio.encode())
    return path


async def timed_turn(url: str, pcm: bytes) -> dict:
    """One short spoken turn, paced in real time: the final transcript's wait as the client sees it
    (from its last chunk of speech sent to `transcript.final` received) and as the server measured it."""
    ws = await open_session(url)
    chunk, events = 6400, []  # 200 ms
    try:
        audio = pcm + bytes(32000)  # then a second of silence
        spoken_until = None
        for at in range(0, len(audio), chunk):
            await ws.send(wire.encode_media(wire.KIND_AUDIO, at // 32, audio[at : at + chunk]))
            if at + chunk >= len(pcm) and spoken_until is None:
                spoken_until = time.monotonic()
            await asyncio.sleep(0.2)
        final_at = None
        while True:
            try:
                event = json.loads(await asyncio.wait_for(ws.recv(), 300))
            except TimeoutError:
                break
            events.append(event["type"])
            if event["type"] == "transcript.final" and final_at is None:
                final_at = time.monotonic()
            if event["type"] in ("metrics", "error"):
                break
    finally:
        await ws.close()
    metrics = event if event["type"] == "metrics" else None
    return {
        "client_s": round(final_at - spoken_until, 2) if final_at else None,
        "server_s": round(metrics["latency_s"]["speech_end_to_transcript_final"], 2) if metrics else None,
    }


def post(http: str, path: Path, step: str) -> dict:
    started = time.monotonic()
    try:
        answer = httpx.post(
            f"{http}/v1/record?scenario=sc-01&step={step}",
            content=path.read_bytes(),
            timeout=900,
            headers={"Origin": http, "Content-Type": "video/webm"},
        )
        status, text = answer.status_code, answer.text[:200]
    except httpx.HTTPError as exc:
        status, text = None, str(exc)[:200]
    return {"status": status, "answer": text, "wall_s": round(time.monotonic() - started, 2)}


def stored_bytes(folder: Path) -> int:
    """What one step (turn_1: its video and its WAV) holds after the imports."""
    return sum(p.stat().st_size for p in folder.glob("turn_1.*") if p.suffix in (".mp4", ".wav"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--imports", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--output", default=str(ROOT / "benchmarks/results/import_load.json"))
    args = parser.parse_args()
    from candidates.local import free_port

    work = Path(tempfile.mkdtemp(prefix="import-load-"))
    print("making the media ...", flush=True)
    line_pcm = speech_pcm(work, 2.5)
    webm = make_webm(work / "long.webm", args.seconds, speech_pcm(work, args.seconds - 1))
    port = free_port()
    http, url = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}"
    result: dict = {
        "command": "benchmarks/import_load.py " + " ".join(sys.argv[1:]),
        "webm_bytes": webm.stat().st_size,
        "webm_seconds": args.seconds,
        "cores": os.cpu_count(),
    }
    studio = work / "studio"
    with FakeOpenAI(reply="Fine.") as fake:
        server = start_serve(port, fake.base_url, studio)
        try:
            print("warming up ...", flush=True)
            asyncio.run(timed_turn(url, line_pcm))
            print("alone ...", flush=True)
            alone = [asyncio.run(timed_turn(url, line_pcm)) for _ in range(args.turns)]
            print(f"{args.imports} imports ...", flush=True)
            cpu = cpu_seconds(server.pid)
            answers: list[dict] = [{} for _ in range(args.imports)]
            steps = ("turn_1", "turn_2", "turn_3_repair")

            def one(n):
                answers[n] = post(http, webm, steps[n % len(steps)])

            threads = [threading.Thread(target=one, args=(n,)) for n in range(args.imports)]
            started = time.monotonic()
            for thread in threads:
                thread.start()
            during = []
            while any(t.is_alive() for t in threads) or not during:
                during.append(asyncio.run(timed_turn(url, line_pcm)))
            for thread in threads:
                thread.join()
            stored = stored_bytes(studio / "sc-01")
            imported = sum(a["status"] == 200 for a in answers)
            result.update(
                {
                    "alone_final_transcript_s": alone,
                    "during_imports_final_transcript_s": during,
                    "during_client_max_s": max(
                        (d["client_s"] for d in during if d["client_s"] is not None), default=None
                    ),
                    "turns_without_final": sum(d["client_s"] is None for d in during),
                    "imports": answers,
                    "imports_wall_s": round(time.monotonic() - started, 1),
                    "imported": imported,
                    "busy_503": sum(a["status"] == 503 for a in answers),
                    "server_cpu_s_during_imports": round(cpu_seconds(server.pid) - cpu, 1),
                    "stored_bytes_turn_1": stored,
                    "stored_bytes_per_s_of_recording": round(stored / args.seconds) if imported else None,
                }
            )
        finally:
            stop_serve(server)
            shutil.rmtree(work, ignore_errors=True)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
