"""Decode bombs and slow clients against a real server, with its memory and
`/healthz` watched throughout.

    .venv/bin/python benchmarks/hostile_load.py [--speech-s 180] [--slow-clients 70]

Starts `wearsim serve` as a subprocess (a fake OpenAI-compatible chat
endpoint behind it, `--record` into a temp dir), warms it up with one
normal spoken turn, then runs each attack in turn:

- frames: one session sends JPEGs of under 700 bytes whose headers claim
  16384x16384 (three) and 32768x32767 (one);
- uploads to `POST /v1/record`: a 32 KB WAV declaring 1 Hz, an hour of
  FLAC silence, a static 1080p WebM of 90 s;
- endless speech: one session streams `--speech-s` of speech with no pause
  (espeak-ng, looped; `silence_ms` 10 s; partial transcripts on) at 10x
  real time, while a second session says one short line: how long its final
  transcript takes from its end of speech;
- slow clients: `--slow-clients` connections that each finish a request and
  send one byte of the next, and 8 that send the headers of a POST to
  `/v1/record` and a trickle of its body (from 127.0.0.3); meanwhile `/`,
  `/v1/info` and `/v1/record` are asked from 127.0.0.2 (the attack's idle
  connections give their places to new ones: streaming/connection_room.py).

A sampler reads the server's RSS from /proc and times a `GET /healthz` (from
127.0.0.2) every 0.25 s throughout. Writes benchmarks/results/hostile_load.json: per phase
the peak RSS above the warmed-up baseline, the server's CPU seconds, the
healthz answer times (max, p50) and failures, and what each attack got back.
"""

from __future__ import annotations

import argparse
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
import wave
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streaming import wire  # noqa: E402
from tests.fake_openai import FakeOpenAI  # noqa: E402  (a tiny chat endpoint: the replies do not matter here)

# the sampler's /healthz and the slow-clients phase's other requests come from another loopback address (the
# attack's idle connections give way to new ones from any address: streaming/connection_room.py)
BYSTANDER = "127.0.0.2"
SLOW_BODIES = "127.0.0.3"
SPEECH_TEXT = (
    "the drill bit goes in the chuck and then you tighten it with the key and check that it runs true "
    "before you start on the board and keep the speed low for the first few holes "
)


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Sampler(threading.Thread):
    """RSS and /healthz answer time every `every` seconds, tagged with the phase running."""

    def __init__(self, pid: int, http: str, every: float = 0.25):
        super().__init__(daemon=True)
        self.pid, self.http, self.every = pid, http, every
        self.phase = "start"
        self.samples: list[dict] = []
        self.stop = threading.Event()

    def run(self):
        with httpx.Client(timeout=10.0, transport=httpx.HTTPTransport(local_address=BYSTANDER)) as client:
            while not self.stop.is_set():
                started = time.monotonic()
                try:
                    ok = client.get(self.http + "/healthz").status_code == 200
                except httpx.HTTPError:
                    ok = False
                took = time.monotonic() - started
                try:
                    rss = rss_bytes(self.pid)
                except OSError:
                    rss = 0
                self.samples.append({"phase": self.phase, "healthz_s": took, "ok": ok, "rss": rss})
                self.stop.wait(max(0.0, self.every - took))


def bomb_jpeg(width: int, height: int) -> bytes:
    from media_effects.frames import encode_jpeg

    data = bytearray(encode_jpeg(np.full((16, 16, 3), 90, np.uint8)))
    at = data.index(b"\xff\xc0")
    data[at + 5 : at + 9] = height.to_bytes(2, "big") + width.to_bytes(2, "big")
    return bytes(data)


def make_media(folder: Path) -> dict[str, Path]:
    import av

    made = {}
    wav = folder / "one_hz.wav"
    with wave.open(str(wav), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(1)
        out.writeframes(bytes(32_000))
    made["wav_1hz"] = wav
    flac = folder / "hour.flac"
    with av.open(str(flac), "w") as out:
        stream = out.add_stream("flac", rate=16000)
        stream.layout = "mono"
        silence = np.zeros((1, 16000), np.int16)
        for second in range(3600):
            frame = av.AudioFrame.from_ndarray(silence, format="s16", layout="mono")
            frame.sample_rate, frame.pts = 16000, second * 16000
            out.mux(stream.encode(frame))
        out.mux(stream.encode())
    made["flac_hour"] = flac
    webm = folder / "static_1080p.webm"
    with av.open(str(webm), "w") as out:
        stream = out.add_stream("libvpx", rate=5)
        stream.width, stream.height, stream.pix_fmt = 1920, 1080, "yuv420p"
        picture = av.VideoFrame.from_ndarray(np.full((1080, 1920, 3), 120, np.uint8), format="rgb24")
        for _ in range(90 * 5):
            out.mux(stream.encode(picture))
        out.mux(stream.encode())
    made["webm_1080p_static"] = webm
    return made


def speech_pcm(folder: Path, seconds: float) -> bytes:
    """`seconds` of espeak-ng speech with no pause longer than a breath, as PCM16 16 kHz."""
    from media_effects.audio import decode_audio, float_to_pcm16

    path = folder / "speech.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "170", "-g", "0", "-w", str(path), SPEECH_TEXT], check=True)
    audio = decode_audio(path)
    loops = int(seconds * 16000 // len(audio)) + 1
    return float_to_pcm16(np.tile(audio, loops)[: int(seconds * 16000)])


async def session_events(ws, until, timeout: float) -> list[dict]:
    events = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            event = json.loads(await asyncio.wait_for(ws.recv(), end - time.monotonic()))
        except (TimeoutError, Exception):
            break
        events.append(event)
        if until(event, events):
            break
    return events


async def open_session(url: str, **config):
    import websockets

    ws = await websockets.connect(url + "/v1/session", max_size=None)
    await ws.send(wire.hello(None, wire.SessionConfig(backend="openai:fake", **config)))
    ready = json.loads(await ws.recv())
    assert ready["type"] == "ready", ready
    return ws


async def speak(ws, pcm: bytes, speed: float, start_ms: int = 0) -> None:
    chunk = 6400  # 200 ms
    for at in range(0, len(pcm), chunk):
        await ws.send(wire.encode_media(wire.KIND_AUDIO, start_ms + at // 32, pcm[at : at + chunk]))
        await asyncio.sleep(0.2 / speed)


async def one_turn(url: str, pcm: bytes) -> dict:
    """A normal short turn: the final transcript's latency from the end of speech."""
    ws = await open_session(url)
    try:
        await speak(ws, pcm + bytes(32000), speed=1.0)
        events = await session_events(ws, lambda e, _: e["type"] in ("metrics", "error"), 180)
    finally:
        await ws.close()
    metrics = next((e for e in events if e["type"] == "metrics"), None)
    final = next((e for e in events if e["type"] == "transcript.final"), None)
    return {
        "transcript": final["text"] if final else None,
        "speech_end_to_transcript_final_s": round(metrics["latency_s"]["speech_end_to_transcript_final"], 3)
        if metrics
        else None,
        "errors": [e for e in events if e["type"] == "error"],
    }


async def frame_bombs(url: str) -> dict:
    """Three 16384x16384 frames in one session (the third violation closes it), 32768x32767 in another."""
    answers = []
    for sizes in ([(16384, 16384)] * 3, [(32768, 32767)]):
        ws = await open_session(url)
        try:
            for t, (w, h) in enumerate(sizes):
                await ws.send(wire.encode_media(wire.KIND_FRAME, t * 100, bomb_jpeg(w, h)))
            got = await session_events(ws, lambda e, events, sizes=sizes: len(events) >= len(sizes), 30)
        finally:
            await ws.close()
        answers += [f"{e['type']} {e.get('code', '')}: {e.get('message', '')}" for e in got]
    return {"sent": 4, "jpeg_bytes": len(bomb_jpeg(16384, 16384)), "answers": answers}


def upload(http: str, path: Path) -> dict:
    started = time.monotonic()
    answer = httpx.post(
        f"{http}/v1/record?scenario=sc-01&step=turn_1",
        content=path.read_bytes(),
        timeout=600,
        headers={"Origin": http, "Content-Type": "video/webm"},
    )
    return {
        "bytes": path.stat().st_size,
        "status": answer.status_code,
        "answer": answer.text[:300],
        "wall_s": round(time.monotonic() - started, 2),
    }


async def endless_speech(url: str, long_pcm: bytes, line_pcm: bytes) -> dict:
    """One session talks without a pause at 10x real time; another says one line a third of the way in."""
    talker = await open_session(url, silence_ms=10_000, partials=True)
    finals, latencies, partials = [], [], 0
    speech_s = len(long_pcm) / 32000

    async def listen():
        nonlocal partials
        while True:
            event = json.loads(await talker.recv())
            if event["type"] == "transcript.final":
                finals.append(round((event["end_ms"] - event["start_ms"]) / 1000, 2))
            elif event["type"] == "transcript.partial":
                partials += 1
            elif event["type"] == "metrics":
                latencies.append(round(event["latency_s"]["speech_end_to_transcript_final"], 2))

    listener = asyncio.create_task(listen())
    started = time.monotonic()
    sender = asyncio.create_task(speak(talker, long_pcm, speed=10.0))
    await asyncio.sleep(speech_s / 10 / 3)  # a third of the way in, the other session speaks
    other = await one_turn(url, line_pcm)
    await sender
    while sum(finals) < speech_s - 31 and time.monotonic() - started < 600 and not listener.done():
        await asyncio.sleep(0.5)  # every cut utterance but the open last one
    await talker.send(wire.encode_message("turn.end"))
    await asyncio.sleep(10)
    listener.cancel()
    await talker.close()
    return {
        "speech_s": speech_s,
        "finals_s": finals,
        "talker_speech_end_to_final_s": latencies,
        "partials": partials,
        "wall_s": round(time.monotonic() - started, 1),
        "other_session": other,
    }


def slow_clients(http: str, count: int) -> dict:
    port = int(http.rsplit(":", 1)[1])
    stalled, refused = [], 0
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        try:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            reply = sock.recv(4096)
        except OSError:
            reply = b""
        if not reply.startswith(b"HTTP/1.1 200"):  # past the address's 64: 503 as it opens, then closed
            refused += 1
            sock.close()
            continue
        sock.sendall(b"G")
        stalled.append(sock)
    bodies = []
    for _ in range(8):  # from a third address: the first holds its 64 already
        sock = socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(SLOW_BODIES, 0))
        sock.sendall(
            b"POST /v1/record?scenario=sc-01&step=turn_1 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: video/webm\r\nContent-Length: 1000000\r\n\r\nx"
        )
        bodies.append(sock)
    answers = {}
    bystander = httpx.Client(timeout=30, transport=httpx.HTTPTransport(local_address=BYSTANDER))
    for path in ("/", "/v1/info"):
        started = time.monotonic()
        answers[path] = [bystander.get(http + path).status_code, round(time.monotonic() - started, 3)]
    started = time.monotonic()
    answers["/v1/record"] = [
        bystander.post(
            f"{http}/v1/record?scenario=sc-01&step=turn_1", content=b"", headers={"Origin": http}
        ).status_code,
        round(time.monotonic() - started, 3),
    ]
    bystander.close()
    dropped_by = {}
    deadline = time.monotonic() + 180
    for name, group in (("stalled", stalled), ("slow_bodies", bodies)):
        closed = 0
        for sock in group:
            sock.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                while sock.recv(4096):
                    pass
                closed += 1
            except (TimeoutError, OSError):
                pass
            sock.close()
        dropped_by[name] = {
            "closed_by_server": closed,
            "of": len(group),
            "within_s": round(time.monotonic() - (deadline - 180), 1),
        }
    return {
        "stalled_connections": count,
        "refused_while_opening": refused,
        "answers_meanwhile": answers,
        "dropped": dropped_by,
    }


def summarise(samples: list[dict], baseline: int, phase: str | None = None) -> dict:
    chosen = [s for s in samples if phase is None or s["phase"] == phase]
    times = sorted(s["healthz_s"] for s in chosen)
    return {
        "samples": len(chosen),
        "rss_peak_growth_mb": round((max(s["rss"] for s in chosen) - baseline) / 2**20, 1) if chosen else None,
        "healthz_max_s": round(times[-1], 3) if times else None,
        "healthz_p50_s": round(times[len(times) // 2], 3) if times else None,
        "healthz_failures": sum(not s["ok"] for s in chosen),
        "healthz_over_1s": sum(s["healthz_s"] > 1.0 for s in chosen),
    }


def start_serve(port: int, fake_base_url: str, studio: Path) -> subprocess.Popen:
    """`wearsim serve` in its own process on `port`, a fake chat backend behind it and the studio
    recording into `studio`; returned once `/healthz` answers."""
    env = dict(os.environ, OPENAI_API_KEY="sk-load-script-fake")
    server = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from benchmark.cli import main; sys.exit(main(sys.argv[1:]))",
            "serve",
            "--port",
            str(port),
            "--backend",
            "openai:fake",
            "--base-url",
            fake_base_url,
            "--record",
            str(studio),
        ],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    return await_healthz(server, port, 120)


def await_healthz(server: subprocess.Popen, port: int, seconds: float) -> subprocess.Popen:
    """`server` once its `/healthz` on `port` answers; stopped, and an error, if it exits or stays
    silent for `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError("wearsim serve stopped while starting")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    stop_serve(server)
    raise RuntimeError(f"wearsim serve did not answer /healthz within {seconds:.0f} s")


def stop_serve(server: subprocess.Popen) -> None:
    server.terminate()
    try:
        server.wait(30)
    except subprocess.TimeoutExpired:
        server.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--speech-s", type=float, default=180.0)
    parser.add_argument("--slow-clients", type=int, default=70)
    parser.add_argument("--output", default=str(ROOT / "benchmarks/results/hostile_load.json"))
    args = parser.parse_args()
    from candidates.local import free_port

    work = Path(tempfile.mkdtemp(prefix="hostile-"))
    print("making the media ...", flush=True)
    media = make_media(work)
    long_pcm = speech_pcm(work, args.speech_s)
    line_pcm = speech_pcm(work, 2.5)
    port = free_port()
    http, url = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}"
    result: dict = {
        "command": "benchmarks/hostile_load.py " + " ".join(sys.argv[1:]),
        "media_bytes": {k: p.stat().st_size for k, p in media.items()},
    }
    with FakeOpenAI(reply="Fine.") as fake:
        server = start_serve(port, fake.base_url, work / "studio")
        sampler = None
        try:
            print("warming up ...", flush=True)
            result["warm_up_turn"] = asyncio.run(one_turn(url, line_pcm))
            baseline = rss_bytes(server.pid)
            result["baseline_rss_mb"] = round(baseline / 2**20, 1)
            sampler = Sampler(server.pid, http)
            sampler.start()
            phases = {}

            def phase(name, work_fn):
                print(f"{name} ...", flush=True)
                sampler.phase = name
                cpu = cpu_seconds(server.pid)
                outcome = work_fn()
                time.sleep(1.0)
                phases[name] = {"outcome": outcome, "server_cpu_s": round(cpu_seconds(server.pid) - cpu, 2)}

            phase("frame_bombs", lambda: asyncio.run(frame_bombs(url)))
            for name, path in media.items():
                phase(f"upload_{name}", lambda path=path: upload(http, path))
            phase("endless_speech", lambda: asyncio.run(endless_speech(url, long_pcm, line_pcm)))
            phase("slow_clients", lambda: slow_clients(http, args.slow_clients))
            sampler.phase = "after"
            time.sleep(2)
            sampler.stop.set()
            sampler.join()
            for name in phases:
                phases[name]["server"] = summarise(sampler.samples, baseline, name)
            result["phases"] = phases
            result["overall"] = summarise(sampler.samples, baseline)
            result["server_alive_after"] = server.poll() is None
        finally:
            if sampler is not None:
                sampler.stop.set()
            stop_serve(server)
            shutil.rmtree(work, ignore_errors=True)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0 if result.get("overall", {}).get("healthz_over_1s", 1) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
