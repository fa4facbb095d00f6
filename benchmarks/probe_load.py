"""Proactive probes under load: sessions that race their stream clock, and a user who speaks meanwhile.

    .venv/bin/python benchmarks/probe_load.py [--racers 8] [--speakers 1] [--questions 20]
        [--phases quiet,unpaced,paced] [--output PATH]

Three phases, each against its own `wearsim serve --backend local` (the bundled
model behind Whisper and the opencv describer):

- quiet: `--speakers` sessions (one by default, each starting 1 s after the
  last) each ask `--questions` spoken questions (espeak-ng, in real time, a
  second of silence after each), each 2 s after the last answer;
- unpaced: the same, while `--racers` proactive sessions (`every:5`, frames at
  fps:1) each send a frame and 20 ms of silence every 0.25 s of wall time,
  advancing their stream time 10 s a chunk, from 3 s before the first
  question until the last is answered (every question is asked under load);
  the server is started with `--probe-min-gap 0 --probe-rate 1000
  --no-probe-hold` (no pace; the embedded model still places requests by
  conversation, `candidates.local.LocalModel`);
- paced: the same against the server's defaults (`--probe-min-gap 1
  --probe-rate 1`, and a user's turn holding probes from the start of speech
  to the first reply text, cutting short those still running).

Reports per phase the probes started over the racing window (each `probe.done`'s
arrival less its `done_s`) and per wall second (max and mean over the whole
seconds in it), the probes
skipped (`watch.done`) and the `probe.paced` notices, and over every
speaker's questions the end of speech to first reply text (p50, p95, max,
each) and turn end to first text. Writes benchmarks/results/probe_load.json
unless `--output` names another file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.hostile_load import await_healthz, stop_serve  # noqa: E402
from perception.frame_policy import parse_frame_policy  # noqa: E402
from streaming import wire  # noqa: E402

QUESTION = "What is the small red thing on the table in front of me?"
CHUNK_WALL_S = 0.25  # a racing session's chunk every quarter second of wall time
CHUNK_STREAM_MS = 10_000  # each one 10 s of stream time after the last
PAUSE_S = 2.0  # the speaking user waits this long after each answer before the next question


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_serve(port: int, *pace: str) -> subprocess.Popen:
    server = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from benchmark.cli import main; sys.exit(main(sys.argv[1:]))",
            "serve",
            "--port",
            str(port),
            "--backend",
            "local",
            "--max-sessions",
            "16",
            *pace,
        ],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return await_healthz(server, port, 180)


def question_pcm(folder: Path) -> bytes:
    from media_effects.audio import decode_audio, float_to_pcm16

    path = folder / "question.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "160", "-w", str(path), QUESTION], check=True)
    return float_to_pcm16(decode_audio(path))


def frames(count: int) -> list[bytes]:
    from media_effects.synthetic import synthetic_frame

    return [
        synthetic_frame(f"A kitchen counter, view {n}: a pot, a board, a knife and {n % 7 + 1} onions.")
        for n in range(count)
    ]


async def connect(url: str, config: wire.SessionConfig):
    import websockets

    ws = await websockets.connect(url + "/v1/session", max_size=None)
    await ws.send(wire.hello(None, config))
    ready = json.loads(await ws.recv())
    if ready["type"] != "ready":
        raise RuntimeError(f"no session: {ready}")
    return ws


async def racer(url: str, pictures: list[bytes], stop: asyncio.Event, log: dict) -> None:
    """A proactive session that advances its stream 10 s a chunk until `stop` is set, then `watch.end`."""
    ws = await connect(
        url,
        wire.SessionConfig(
            backend="local",
            camera=True,
            proactive="every:5",
            describer="opencv",
            frame_policy=parse_frame_policy("fps:1"),
        ),
    )
    done = asyncio.Event()

    async def read():
        async for text in ws:
            event = json.loads(text)
            if event["type"] == "probe.done":  # when it started on the server: its end less its length
                log["probe_started_at"].append(time.monotonic() - (event.get("done_s") or 0.0))
                log["probe_s"].append(event.get("done_s") or 0.0)
            elif event["type"] == "probe.paced":
                log["paced"] += 1
            elif event["type"] == "watch.done":
                log["skipped"] += event.get("skipped", 0)
                log["asked"] += event["probes"]
                done.set()
                return
            elif event["type"] == "error":
                log["errors"].append(event["message"][:200])

    reader = asyncio.create_task(read())
    n = 0
    try:
        while not stop.is_set():
            t = n * CHUNK_STREAM_MS
            await ws.send(wire.encode_media(wire.KIND_FRAME, t, pictures[n % len(pictures)]))
            await ws.send(wire.encode_media(wire.KIND_AUDIO, t, bytes(640)))
            n += 1
            await asyncio.sleep(CHUNK_WALL_S)
        await ws.send(wire.encode_message("watch.end"))
        await asyncio.wait_for(done.wait(), 300)
    finally:
        reader.cancel()
        await ws.close()


async def speaker(url: str, pcm: bytes, questions: int, start_after: float) -> list[dict]:
    """One session asking `questions` spoken questions in real time, each after the last reply."""
    await asyncio.sleep(start_after)
    ws = await connect(url, wire.SessionConfig(backend="local", camera=False, silence_ms=600))
    turns, clock = [], 0
    try:
        for _ in range(questions):
            audio = pcm + bytes(32_000)  # the question and a second of silence
            for at in range(0, len(audio), 6400):  # 200 ms chunks, in real time
                await ws.send(wire.encode_media(wire.KIND_AUDIO, clock + at // 32, audio[at : at + 6400]))
                await asyncio.sleep(0.2)
            clock += len(audio) // 32
            while True:
                event = json.loads(await asyncio.wait_for(ws.recv(), 120))
                if event["type"] == "metrics":
                    turns.append(
                        {
                            key: event["latency_s"].get(key)
                            for key in ("speech_end_to_first_token", "turn_end_to_first_token")
                        }
                    )
                    break
                if event["type"] == "error":
                    raise RuntimeError(event["message"])
            await asyncio.sleep(PAUSE_S)  # the user listens, then asks again later
    finally:
        await ws.close()
    return turns


def pct(values: list[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)), 3) if values else None


async def phase(url: str, pcm: bytes, pictures: list[bytes], racers: int, speakers: int, questions: int) -> dict:
    log = {"probe_started_at": [], "probe_s": [], "paced": 0, "skipped": 0, "asked": 0, "errors": []}
    start = time.monotonic()
    stop = asyncio.Event()
    tasks = [asyncio.create_task(racer(url, pictures, stop, log)) for _ in range(racers)]
    lead = 3.0 if racers else 0.0
    asked = await asyncio.gather(*(speaker(url, pcm, questions, start_after=lead + n) for n in range(speakers)))
    turns = [turn for each in asked for turn in each]
    stop.set()
    seconds = time.monotonic() - start
    await asyncio.gather(*tasks)
    window = [t - start for t in log["probe_started_at"] if t <= start + seconds]
    per_second = [sum(1 for t in window if s <= t < s + 1) for s in range(int(seconds))]
    first = [t["speech_end_to_first_token"] for t in turns if t["speech_end_to_first_token"] is not None]
    after_end = [t["turn_end_to_first_token"] for t in turns if t["turn_end_to_first_token"] is not None]
    return {
        "racers": racers,
        "speakers": speakers,
        "racing_s": round(seconds, 1) if racers else 0,
        "probes_answered": len(log["probe_started_at"]),
        "probes_started_in_window": len(window),
        "probes_per_s": {
            "mean": round(len(window) / seconds, 2) if racers else 0,
            "max_in_a_second": max(per_second) if racers else 0,
        },
        "probe_s": {"p50": pct(log["probe_s"], 50), "p95": pct(log["probe_s"], 95)},
        "probes_asked": log["asked"],
        "probes_skipped": log["skipped"],
        "paced_notices": log["paced"],
        "errors": log["errors"][:5],
        "questions": len(turns),
        "speech_end_to_first_token_s": {
            "p50": pct(first, 50),
            "p95": pct(first, 95),
            "max": round(max(first), 3) if first else None,
            "each": [round(value, 3) for value in first],
        },
        "turn_end_to_first_token_s": {"p50": pct(after_end, 50), "p95": pct(after_end, 95)},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--racers", type=int, default=8)
    parser.add_argument("--speakers", type=int, default=1)
    parser.add_argument("--questions", type=int, default=20, help="asked by each speaker")
    parser.add_argument("--phases", default="quiet,unpaced,paced")
    parser.add_argument("--output", default=str(ROOT / "benchmarks/results/probe_load.json"))
    args = parser.parse_args()
    pace = {"quiet": (), "unpaced": ("--probe-min-gap", "0", "--probe-rate", "1000", "--no-probe-hold"), "paced": ()}
    results = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "cpus": os.cpu_count(),
        "chunk": {"wall_s": CHUNK_WALL_S, "stream_ms": CHUNK_STREAM_MS},
        "phases": {},
    }
    with tempfile.TemporaryDirectory() as folder:
        pcm = question_pcm(Path(folder))
        pictures = frames(16)
        for name in args.phases.split(","):
            port = free_port()
            server = start_serve(port, *pace[name])
            try:
                racers = 0 if name == "quiet" else args.racers
                results["phases"][name] = asyncio.run(
                    phase(f"ws://127.0.0.1:{port}", pcm, pictures, racers, args.speakers, args.questions)
                )
            finally:
                stop_serve(server)
            print(name, json.dumps(results["phases"][name]), flush=True)
    Path(args.output).write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
